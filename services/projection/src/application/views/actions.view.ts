import { ActionClass } from '@writ/contracts';
import {
  attemptIdOf,
  field,
  idField,
  isObject,
  occurredAt,
  peekJwsPayload,
  refId,
  stepIdOf,
  text,
  type ProjectedEvent,
} from '../projected-event.js';
import { patch, type Locator, type View, type Folded } from './view.js';
import type { ActionRow, ActionStatus } from '@writ/contracts/projection-rows';

/** The row type is the contract's (@writ/contracts/projection-rows): what is published is what is typed here. */
export type { ActionRow, ActionStatus };
export { ACTION_STATUSES } from '@writ/contracts/projection-rows';

/** Statuses no later event of the same attempt changes (a new attempt of the same request may). */
const FINAL_STATUSES: readonly ActionStatus[] = ['rejected', 'succeeded', 'failed', 'denied', 'cancelled', 'superseded'];

/** Task-stream events that set the action's status (the map of docs/governed-path.md). */
const STATUS_BY_EVENT: Readonly<Record<string, ActionStatus>> = {
  'attempt.awaiting_approval': 'awaiting_approval',
  'attempt.authorized': 'authorized',
  'attempt.downgraded': 'authorized',
  'attempt.policy_reentered': 'awaiting_policy',
  'grant.use_claimed': 'executing',
  'attempt.executing': 'executing',
  'attempt.unknown_outcome_receipted': 'unknown_outcome',
  'attempt.receipt_pending': 'receipt_pending',
  'attempt.policy_denied': 'denied',
  'attempt.approval_denied': 'denied',
  'attempt.approval_expired': 'denied',
  'attempt.succeeded': 'succeeded',
  'attempt.failed': 'failed',
  'attempt.cancelled': 'cancelled',
  'attempt.superseded': 'superseded',
};

/** Task-stream events that only fill in fields (ids of the policy result, grant, receipt…) or decide the status conditionally. */
const FIELD_EVENTS = new Set(['policy.evaluated', 'attempt.grant_attached', 'attempt.grant_renewed', 'grant.issued', 'receipt.issued', 'attempt.observing']);

type Changes = { -readonly [K in keyof ActionRow]?: ActionRow[K] };

function emptyRow(actionRequestId: string, status: ActionStatus, at: string): Folded<ActionRow> {
  return {
    action_request_id: actionRequestId,
    status,
    principal_id: null,
    ingress_id: null,
    task_id: null,
    step_id: null,
    attempt_id: null,
    action_class: null,
    policy_outcome: null,
    risk_band: null,
    policy_result_id: null,
    approval_id: null,
    grant_id: null,
    receipt_id: null,
    reason_code: null,
    received_at: null,
    // The row's birth: never patched, so a list ordered by it is stable while rows change.
    created_at: at,
    updated_at: at,
  };
}

function actionClassOf(value: unknown): ActionClass | null {
  const parsed = ActionClass.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** The attempt a task-stream event is about, looking inside the payloads that carry it. */
function attemptOfTaskEvent(event: ProjectedEvent): string | null {
  const payload = event.envelope.payload;
  switch (event.envelope.event_type) {
    case 'policy.evaluated':
      return attemptIdOf(event) ?? idField(field(payload, 'policy_result'), 'attempt_id');
    case 'grant.issued':
      return attemptIdOf(event) ?? idField(field(payload, 'claims'), 'attempt_id');
    case 'receipt.issued':
      return attemptIdOf(event) ?? idField(field(payload, 'receipt'), 'attempt_id');
    default:
      return attemptIdOf(event);
  }
}

function ingressIdOf(event: ProjectedEvent): string {
  return idField(event.envelope.payload, 'ingress_id') ?? event.aggregate.id;
}

function locate(event: ProjectedEvent): Locator | undefined {
  const { aggregate, envelope } = event;
  const payload = envelope.payload;
  if (aggregate.type === 'ingress') {
    switch (envelope.event_type) {
      case 'ingress.received': {
        const id = idField(peekJwsPayload(field(payload, 'raw')), 'action_request_id');
        return id === null ? undefined : { action_request_id: id };
      }
      case 'ingress.rejected': {
        const id = idField(payload, 'action_request_id');
        return id === null ? { ingress_id: ingressIdOf(event) } : { action_request_id: id };
      }
      case 'ingress.accepted': {
        const id = idField(payload, 'action_request_id');
        return id === null ? undefined : { action_request_id: id };
      }
      default:
        return undefined;
    }
  }
  if (aggregate.type !== 'task') return undefined;
  if (envelope.event_type === 'attempt.awaiting_policy') {
    const id = idField(field(payload, 'action_request'), 'action_request_id');
    return id === null ? undefined : { action_request_id: id };
  }
  if (STATUS_BY_EVENT[envelope.event_type] === undefined && !FIELD_EVENTS.has(envelope.event_type)) return undefined;
  const attempt = attemptOfTaskEvent(event);
  return attempt === null ? undefined : { task_id: aggregate.id, attempt_id: attempt };
}

function fold(row: Folded<ActionRow> | undefined, event: ProjectedEvent): Folded<ActionRow> | undefined {
  const at = occurredAt(event);
  if (event.aggregate.type === 'ingress') return foldIngress(row, event, at);
  if (event.envelope.event_type === 'attempt.awaiting_policy') return foldAwaitingPolicy(row, event, at);
  // Every other task event was located by (task, attempt): the row is bound to exactly this attempt.
  if (row === undefined) return undefined;
  return patch(row, taskEventChanges(row, event), at);
}

/**
 * Ingress events arrive before the task binding exists, keyed by an action
 * request id nobody has verified yet. So they only ever touch a row that is
 * not bound to a task, and a rejection only the row its own ingress created:
 * an unauthenticated request can never overwrite the status of a real action.
 */
function foldIngress(row: Folded<ActionRow> | undefined, event: ProjectedEvent, at: string): Folded<ActionRow> | undefined {
  const payload = event.envelope.payload;
  const ingressId = ingressIdOf(event);
  switch (event.envelope.event_type) {
    case 'ingress.received': {
      if (row !== undefined && row.task_id !== null) return row;
      const claimed = peekJwsPayload(field(payload, 'raw'));
      const id = idField(claimed, 'action_request_id');
      if (id === null) return row;
      const fresh: Folded<ActionRow> = {
        ...emptyRow(id, 'received', at),
        principal_id: idField(payload, 'claimed_principal_id'),
        ingress_id: ingressId,
        action_class: actionClassOf(field(claimed, 'action_class')),
        received_at: at,
      };
      return row === undefined ? fresh : patch(row, { ...fresh, created_at: row.created_at, updated_at: row.updated_at }, at);
    }
    case 'ingress.rejected': {
      const reason = text(payload, 'reason_code');
      if (row === undefined) {
        const id = idField(payload, 'action_request_id');
        return id === null ? undefined : { ...emptyRow(id, 'rejected', at), ingress_id: ingressId, reason_code: reason };
      }
      if (row.task_id !== null || (row.ingress_id !== null && row.ingress_id !== ingressId)) return row;
      return patch(row, { status: 'rejected', reason_code: reason, ingress_id: ingressId }, at);
    }
    case 'ingress.accepted': {
      const taskId = idField(payload, 'task_id');
      const base = row ?? emptyRow(idField(payload, 'action_request_id') ?? event.aggregate.id, 'awaiting_policy', at);
      if (taskId === null || (base.task_id !== null && base.task_id !== taskId)) return row;
      const changes: Changes = { principal_id: idField(payload, 'principal_id') ?? base.principal_id, ingress_id: ingressId };
      if (base.attempt_id === null) {
        Object.assign(changes, { task_id: taskId, step_id: idField(payload, 'step_id'), attempt_id: idField(payload, 'attempt_id'), reason_code: null });
      }
      if (base.status === 'received' || base.status === 'rejected') changes.status = 'awaiting_policy';
      return row === undefined ? { ...base, ...changes } : patch(row, changes, at);
    }
    default:
      return row;
  }
}

/** The request enters policy in an attempt of its task: binds the action to that attempt (a retry re-binds it). */
function foldAwaitingPolicy(row: Folded<ActionRow> | undefined, event: ProjectedEvent, at: string): Folded<ActionRow> | undefined {
  const request = field(event.envelope.payload, 'action_request');
  const id = idField(request, 'action_request_id');
  const attempt = attemptIdOf(event);
  if (id === null || attempt === null) return row;
  const taskId = event.aggregate.id;
  if (row !== undefined && row.task_id !== null && row.task_id !== taskId) return row; // another task's action of the same id
  const base = row ?? emptyRow(id, 'awaiting_policy', at);
  const binding: Changes = {
    task_id: taskId,
    step_id: stepIdOf(event) ?? base.step_id,
    attempt_id: attempt,
    status: 'awaiting_policy',
    principal_id: base.task_id === null ? (idField(request, 'proposed_by') ?? base.principal_id) : base.principal_id,
    action_class: actionClassOf(field(request, 'action_class')) ?? base.action_class,
    reason_code: null,
  };
  if (base.attempt_id !== null && base.attempt_id !== attempt) {
    Object.assign(binding, { policy_outcome: null, risk_band: null, policy_result_id: null, approval_id: null, grant_id: null, receipt_id: null });
  } else if (base.attempt_id === attempt && FINAL_STATUSES.includes(base.status)) {
    return row;
  }
  return row === undefined ? { ...base, ...binding } : patch(row, binding, at);
}

/** The policy decision an attempt event carries (`data.policy`). */
function policyChanges(policy: unknown): Changes {
  if (!isObject(policy)) return {};
  const changes: Changes = {};
  const resultId = idField(policy, 'policy_result_id');
  const outcome = text(policy, 'outcome');
  const band = text(policy, 'risk_band');
  if (resultId !== null) changes.policy_result_id = resultId;
  if (outcome !== null) changes.policy_outcome = outcome;
  if (band !== null) changes.risk_band = band;
  return changes;
}

function taskEventChanges(row: Folded<ActionRow>, event: ProjectedEvent): Changes {
  const type = event.envelope.event_type;
  const data = event.envelope.payload;
  const changes: Changes = {};
  let status: ActionStatus | undefined = STATUS_BY_EVENT[type];
  let reason: string | null | undefined;

  switch (type) {
    case 'policy.evaluated': {
      const result = field(data, 'policy_result');
      Object.assign(changes, policyChanges({ ...(isObject(result) ? result : {}) }));
      const actionClass = actionClassOf(field(result, 'action_class'));
      if (actionClass !== null) changes.action_class = actionClass;
      break;
    }
    case 'attempt.awaiting_approval':
      Object.assign(changes, policyChanges(field(data, 'policy')));
      if (idField(data, 'approval_id') !== null) changes.approval_id = idField(data, 'approval_id');
      break;
    case 'attempt.authorized':
      Object.assign(changes, policyChanges(field(data, 'policy')));
      if (idField(data, 'approval_id') !== null) changes.approval_id = idField(data, 'approval_id');
      reason = null;
      break;
    case 'attempt.downgraded':
      Object.assign(changes, policyChanges(field(data, 'policy')));
      reason = null;
      break;
    case 'attempt.policy_denied': {
      Object.assign(changes, policyChanges(field(data, 'policy')));
      const reasons = field(data, 'reasons');
      reason = (Array.isArray(reasons) ? text(reasons[0], 'code') : null) ?? 'policy_denied';
      break;
    }
    case 'attempt.approval_denied':
      reason = 'approval_denied';
      break;
    case 'attempt.approval_expired':
      reason = 'approval_expired';
      break;
    case 'attempt.policy_reentered':
      reason = text(data, 'cause');
      break;
    case 'attempt.grant_attached':
    case 'attempt.grant_renewed':
      if (idField(data, 'grant_id') !== null) changes.grant_id = idField(data, 'grant_id');
      break;
    case 'grant.issued': {
      const grantId = idField(field(data, 'claims'), 'jti');
      if (grantId !== null) changes.grant_id = grantId;
      break;
    }
    case 'attempt.observing':
      if (field(data, 'execution_outcome') === 'unknown') status = 'unknown_outcome';
      break;
    case 'attempt.unknown_outcome_receipted':
    case 'attempt.succeeded':
    case 'attempt.failed': {
      const receiptId = refId(field(data, 'receipt_ref'));
      if (receiptId !== null && row.receipt_id === null) changes.receipt_id = receiptId;
      if (type === 'attempt.succeeded') reason = null;
      if (type === 'attempt.failed') reason = text(data, 'reason_code') ?? 'failed';
      break;
    }
    case 'receipt.issued': {
      // An approval's own receipt (cause approval_resolved) is not the action's receipt.
      if (field(data, 'cause') === 'approval_resolved') break;
      const receiptId = idField(field(data, 'receipt'), 'receipt_id');
      if (receiptId !== null) changes.receipt_id = receiptId;
      break;
    }
    case 'attempt.cancelled':
      reason = 'cancelled';
      break;
    case 'attempt.superseded':
      reason = text(data, 'cause') ?? 'superseded';
      break;
    default:
      break;
  }

  if (status !== undefined && !FINAL_STATUSES.includes(row.status)) {
    changes.status = status;
    if (reason !== undefined) changes.reason_code = reason;
  }
  return changes;
}

export const actionsView: View<ActionRow> = {
  name: 'actions',
  primaryKey: ['action_request_id'],
  published: true,
  topicId: (row) => row.action_request_id,
  locate,
  fold,
};
