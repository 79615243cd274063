import { field, idField, instant, intField, occurredAt, refId, stepIdOf, text, type ProjectedEvent } from '../projected-event.js';
import { nextAttemptStatus } from './steps.view.js';
import { patch, type Locator, type View, type Folded } from './view.js';
import type { AttemptRow } from '@writ/contracts/projection-rows';

/**
 * One StepAttempt (Hermit 8.3, 12.3): its status along the kernel's
 * `ATTEMPT_EVENT_EDGES` and the ids of what decided, authorized, ran and
 * receipted it. The step queue shows an attempt's state in line; this view
 * is each attempt's own record (`GET /v1/attempts/<id>`, and a step's list).
 */
export type { AttemptRow };

/** Events of the task stream that describe an attempt besides its own `attempt.*` events. */
const FACT_EVENTS = new Set(['execution.completed', 'execution.outcome_resolved', 'receipt.issued', 'context.pack_compiled']);

function attemptOf(event: ProjectedEvent): string | null {
  const { envelope } = event;
  const type = envelope.event_type;
  if (type === 'receipt.issued') return idField(field(envelope.payload, 'receipt'), 'attempt_id') ?? envelope.attempt_id ?? null;
  if (type.startsWith('attempt.')) return envelope.attempt_id ?? (envelope.entity_type === 'attempt' ? envelope.entity_id : null) ?? idField(envelope.payload, 'attempt_id');
  if (FACT_EVENTS.has(type)) return envelope.attempt_id ?? (envelope.entity_type === 'attempt' ? envelope.entity_id : null);
  return null;
}

function locate(event: ProjectedEvent): Locator | undefined {
  if (event.aggregate.type !== 'task') return undefined;
  const attemptId = attemptOf(event);
  return attemptId === null ? undefined : { attempt_id: attemptId };
}

function policyFields(data: unknown): { policy_outcome: string | null; risk_band: string | null } {
  const policy = field(data, 'policy');
  return { policy_outcome: text(policy, 'outcome'), risk_band: text(policy, 'risk_band') };
}

function fold(row: AttemptRow | undefined, event: ProjectedEvent): Folded<AttemptRow> | undefined {
  const { envelope } = event;
  const type = envelope.event_type;
  const data = envelope.payload;
  const at = occurredAt(event);
  if (row === undefined) {
    if (type !== 'attempt.created') return undefined;
    const attemptId = idField(data, 'attempt_id') ?? attemptOf(event);
    if (attemptId === null) return undefined;
    return {
      attempt_id: attemptId,
      task_id: event.aggregate.id,
      step_id: idField(data, 'step_id') ?? stepIdOf(event),
      attempt_no: intField(data, 'attempt_no'),
      status: 'created',
      action_request_id: null,
      action_class: null,
      policy_outcome: null,
      risk_band: null,
      approval_id: null,
      grant_id: null,
      execution_outcome: null,
      result_code: null,
      receipt_id: null,
      reason_code: null,
      context_pack_sha256: null,
      context_pack_uri: null,
      context_pack_byte_size: null,
      last_task_seq: envelope.task_seq,
      last_event_type: type,
      created_at: instant(data['at']) ?? at,
      updated_at: at,
    };
  }
  // A redelivered or older event changes nothing, nor does the same attempt id in another task.
  if (envelope.task_seq <= row.last_task_seq || row.task_id !== event.aggregate.id) return row;
  const changes: { -readonly [K in keyof AttemptRow]?: AttemptRow[K] } = { last_task_seq: envelope.task_seq, last_event_type: type };
  const next = nextAttemptStatus(row.status, type);
  if (next !== null) changes.status = next;
  switch (type) {
    case 'attempt.awaiting_policy': {
      const request = field(data, 'action_request');
      changes.action_request_id = idField(request, 'action_request_id');
      changes.action_class = text(request, 'action_class');
      break;
    }
    case 'attempt.downgraded':
      Object.assign(changes, policyFields(data));
      changes.action_class = text(field(data, 'action_request'), 'action_class') ?? row.action_class;
      break;
    case 'attempt.authorized':
    case 'attempt.awaiting_approval':
    case 'attempt.policy_denied':
      if (field(data, 'policy') !== undefined) Object.assign(changes, policyFields(data));
      if (idField(data, 'approval_id') !== null) changes.approval_id = idField(data, 'approval_id');
      break;
    case 'attempt.grant_attached':
    case 'attempt.grant_renewed':
    case 'attempt.executing':
      changes.grant_id = idField(data, 'grant_id') ?? row.grant_id;
      break;
    case 'attempt.observing':
    case 'execution.completed':
      changes.execution_outcome = text(data, type === 'attempt.observing' ? 'execution_outcome' : 'outcome') ?? row.execution_outcome;
      break;
    case 'execution.outcome_resolved':
      changes.execution_outcome = text(data, 'outcome') ?? row.execution_outcome;
      break;
    case 'attempt.receipt_pending':
      changes.result_code = text(data, 'result_code');
      break;
    case 'attempt.succeeded':
    case 'attempt.unknown_outcome_receipted':
      changes.receipt_id = refId(data['receipt_ref']) ?? row.receipt_id;
      break;
    case 'attempt.failed':
      changes.reason_code = text(data, 'reason_code');
      changes.receipt_id = refId(data['receipt_ref']) ?? row.receipt_id;
      break;
    case 'context.pack_compiled': {
      // The first pack stands (the kernel decides one per attempt); a second in the log, forged or raced, changes nothing.
      if (row.context_pack_sha256 !== null) break;
      const sha256 = text(data, 'sha256');
      const size = data['byte_size'];
      if (sha256 === null || !/^[0-9a-f]{64}$/.test(sha256) || idField(data, 'attempt_id') !== row.attempt_id) break;
      changes.context_pack_sha256 = sha256;
      changes.context_pack_uri = text(data, 'uri');
      changes.context_pack_byte_size = typeof size === 'number' && Number.isSafeInteger(size) && size > 0 ? size : null;
      break;
    }
    case 'receipt.issued':
      // A receipt of an approval resolution is about the approval; the attempt's receipt is the one that ends it.
      if (text(data, 'cause') === 'approval_resolved') break;
      changes.receipt_id = idField(field(data, 'receipt'), 'receipt_id') ?? row.receipt_id;
      break;
    default:
      break;
  }
  return patch(row, changes, at);
}

export const attemptsView: View<AttemptRow> = {
  name: 'attempts',
  primaryKey: ['attempt_id'],
  published: true,
  topicId: (row) => row.attempt_id,
  locate,
  fold,
};
