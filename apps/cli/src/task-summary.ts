import { ATTEMPT_TERMINAL_STATES, STEP_TERMINAL_STATES } from '@writ/contracts';
import { ATTEMPT_EVENT_EDGES, STEP_EVENT_EDGES } from '@writ/kernel';
import type { TaskEventView } from './projection-api.js';

export interface AttemptSummary {
  readonly attempt_id: string;
  readonly status: string;
  readonly last_event_type: string;
}

export interface StepSummary {
  readonly step_id: string;
  readonly status: string;
  readonly attempts: readonly AttemptSummary[];
}

interface Edge {
  readonly to: string;
}

const STEP_EDGES: Readonly<Record<string, Edge>> = STEP_EVENT_EDGES;
const ATTEMPT_EDGES: Readonly<Record<string, Edge>> = ATTEMPT_EVENT_EDGES;

/** An event's step: the envelope's `step_id`, or the step a `step.*` event is about. */
function stepOf(event: TaskEventView): string | null {
  return event.step_id ?? (event.entity_type === 'step' ? event.entity_id : null);
}

function attemptOf(event: TaskEventView): string | null {
  return event.attempt_id ?? (event.entity_type === 'attempt' ? event.entity_id : null);
}

/**
 * Steps and their attempts as the timeline says: `step.planned` → planned,
 * `attempt.created` → created, then each `step.*` / `attempt.*` event moves
 * to its target in the kernel's state-machine edges, in `task_seq` order.
 * The log's writers only append valid transitions, so the latest one is the
 * status; a terminal status is never left (an event after it changes nothing
 * here, as in the kernel's fold). Steps and attempts keep first-seen order.
 */
export function summarizeSteps(events: readonly TaskEventView[]): StepSummary[] {
  const steps = new Map<string, { status: string; attempts: Map<string, { status: string; last_event_type: string }> }>();
  const stepEntry = (stepId: string) => {
    let entry = steps.get(stepId);
    if (entry === undefined) {
      entry = { status: 'unknown', attempts: new Map() };
      steps.set(stepId, entry);
    }
    return entry;
  };
  for (const event of [...events].sort((a, b) => a.task_seq - b.task_seq)) {
    const stepId = stepOf(event);
    const type = event.event_type;
    if (type.startsWith('step.') && stepId !== null) {
      const step = stepEntry(stepId);
      if (type === 'step.planned') step.status = 'planned';
      else step.status = advance(STEP_EDGES[type], step.status, STEP_TERMINAL_STATES);
    }
    const attemptId = attemptOf(event);
    if (attemptId === null || stepId === null) continue;
    const attempts = stepEntry(stepId).attempts;
    let attempt = attempts.get(attemptId);
    if (attempt === undefined) {
      attempt = { status: 'unknown', last_event_type: type };
      attempts.set(attemptId, attempt);
    }
    attempt.last_event_type = type;
    if (type === 'attempt.created') attempt.status = 'created';
    else if (type.startsWith('attempt.')) attempt.status = advance(ATTEMPT_EDGES[type], attempt.status, ATTEMPT_TERMINAL_STATES);
  }
  return [...steps].map(([step_id, step]) => ({
    step_id,
    status: step.status,
    attempts: [...step.attempts].map(([attempt_id, attempt]) => ({ attempt_id, ...attempt })),
  }));
}

/** The status after an edge: its target, unless the status is terminal (or the event is not a state-machine event). */
function advance(edge: Edge | undefined, status: string, terminal: readonly string[]): string {
  if (edge === undefined || terminal.includes(status)) return status;
  return edge.to;
}

/** A few facts worth a glance on a timeline line (outcome, exit code, reason...), as `key=value`. */
export function eventDetail(event: TaskEventView): string {
  const payload = event.payload;
  const pick = (...path: string[]): unknown => {
    let value: unknown = payload;
    for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    return value;
  };
  const parts: string[] = [];
  const add = (label: string, value: unknown) => {
    if ((typeof value === 'string' && value !== '') || typeof value === 'number' || typeof value === 'boolean') parts.push(`${label}=${String(value)}`);
  };
  switch (event.event_type) {
    case 'policy.evaluated':
      add('outcome', pick('policy_result', 'outcome'));
      add('risk', pick('policy_result', 'risk_band'));
      break;
    case 'execution.completed':
      add('outcome', pick('outcome'));
      add('exit_code', pick('exit_code'));
      add('error', pick('error', 'code'));
      break;
    case 'receipt.issued':
      add('receipt', pick('receipt', 'receipt_id'));
      add('result', pick('receipt', 'result_code'));
      break;
    case 'grant.issued':
      add('grant', pick('grant_id') ?? pick('claims', 'jti'));
      break;
    default: {
      add('approval', pick('approval_id'));
      add('by', pick('resolved_by'));
      add('outcome', pick('outcome'));
      add('reason', pick('reason_code') ?? pick('code') ?? pick('reasons', '0', 'code'));
    }
  }
  return parts.join(' ');
}
