import { ATTEMPT_EVENT_EDGES, STEP_EVENT_EDGES } from '@writ/kernel';
import { field, idField, instant, intField, occurredAt, stepIdOf, text, type ProjectedEvent } from '../projected-event.js';
import { patch, type Locator, type View, type Folded } from './view.js';
import type { StepRow } from '@writ/contracts/projection-rows';

/**
 * The step queue (Hermit 13.6): every step of every task with its status
 * (`planned`, `ready`, `running`, `blocked`, then an end), moved along the
 * kernel's `STEP_EVENT_EDGES`, and the state of its current attempt along
 * `ATTEMPT_EVENT_EDGES`, so a supervisor sees what is ready, running or
 * blocked and on what (`GET /v1/steps?status=ready`).
 */
export type { StepRow };

function isStepTransition(type: string): type is keyof typeof STEP_EVENT_EDGES {
  return Object.hasOwn(STEP_EVENT_EDGES, type);
}

function isAttemptTransition(type: string): type is keyof typeof ATTEMPT_EVENT_EDGES {
  return Object.hasOwn(ATTEMPT_EVENT_EDGES, type);
}

/** The attempt status after `type`, from `current` (null: not a valid move, leave it). */
export function nextAttemptStatus(current: string | null, type: string): string | null {
  if (type === 'attempt.created') return current ?? 'created';
  if (!isAttemptTransition(type) || current === null) return null;
  const edge = ATTEMPT_EVENT_EDGES[type];
  return (edge.from as readonly string[]).includes(current) ? edge.to : null;
}

function locate(event: ProjectedEvent): Locator | undefined {
  const type = event.envelope.event_type;
  if (event.aggregate.type !== 'task' || !(type.startsWith('step.') || type.startsWith('attempt.'))) return undefined;
  const stepId = type === 'step.planned' ? (idField(event.envelope.payload, 'step_id') ?? stepIdOf(event)) : stepIdOf(event);
  return stepId === null ? undefined : { step_id: stepId };
}

function fold(row: StepRow | undefined, event: ProjectedEvent): Folded<StepRow> | undefined {
  const { envelope } = event;
  const type = envelope.event_type;
  const data = envelope.payload;
  const at = occurredAt(event);
  if (row === undefined) {
    if (type !== 'step.planned') return undefined;
    const stepId = idField(data, 'step_id') ?? stepIdOf(event);
    if (stepId === null) return undefined;
    const dependsOn = field(data, 'depends_on');
    return {
      step_id: stepId,
      task_id: event.aggregate.id,
      kind: text(data, 'kind'),
      title: text(data, 'title'),
      status: 'planned',
      depends_on: Array.isArray(dependsOn) ? dependsOn.filter((d): d is string => typeof d === 'string') : [],
      max_attempts: intField(data, 'max_attempts'),
      attempt_count: 0,
      current_attempt_id: null,
      current_attempt_no: null,
      current_attempt_status: null,
      blocked_reason: null,
      last_task_seq: envelope.task_seq,
      last_event_type: type,
      planned_at: instant(data['at']) ?? at,
      updated_at: at,
    };
  }
  // A redelivered or older event changes nothing, nor does the same step id in another task.
  if (envelope.task_seq <= row.last_task_seq || row.task_id !== event.aggregate.id) return row;
  const changes: { -readonly [K in keyof StepRow]?: StepRow[K] } = { last_task_seq: envelope.task_seq, last_event_type: type };
  if (isStepTransition(type)) {
    // The kernel's edges: an event not valid from the current status leaves it (the kernel records an anomaly).
    const edge = STEP_EVENT_EDGES[type];
    if ((edge.from as readonly string[]).includes(row.status)) changes.status = edge.to;
    if (type === 'step.attempt_opened') {
      const attemptId = idField(data, 'attempt_id');
      if (attemptId !== null && attemptId !== row.current_attempt_id) {
        changes.current_attempt_id = attemptId;
        changes.current_attempt_no = intField(data, 'attempt_no') ?? row.attempt_count + 1;
        changes.current_attempt_status = null;
        changes.attempt_count = row.attempt_count + 1;
      }
    }
    if (type === 'step.blocked') changes.blocked_reason = text(data, 'reason');
    if (type === 'step.unblocked') changes.blocked_reason = null;
  } else if (type.startsWith('attempt.') && envelope.attempt_id !== undefined && envelope.attempt_id === row.current_attempt_id) {
    const next = nextAttemptStatus(row.current_attempt_status, type);
    if (next !== null) changes.current_attempt_status = next;
  }
  return patch(row, changes, at);
}

export const stepsView: View<StepRow> = {
  name: 'steps',
  primaryKey: ['step_id'],
  published: true,
  topicId: (row) => row.step_id,
  locate,
  fold,
};
