import { APPROVAL_TERMINAL_STATES, type ApprovalStatus } from '@writ/contracts';
import { redactSecrets } from '@writ/telemetry';
import { attemptIdOf, field, idField, instant, isObject, occurredAt, stepIdOf, text, type ProjectedEvent } from '../projected-event.js';
import { patch, type Locator, type View } from './view.js';
import type { ApprovalRow } from '@writ/contracts';

export type { ApprovalRow };

/** The resolution events, their status, and the statuses they may leave (Hermit 8.9; `granted` may still be invalidated). */
const RESOLUTIONS: Readonly<Record<string, { readonly to: ApprovalStatus; readonly from: readonly ApprovalStatus[] }>> = {
  'approval.granted': { to: 'granted', from: ['pending'] },
  'approval.denied': { to: 'denied', from: ['pending'] },
  'approval.expired': { to: 'expired', from: ['pending'] },
  'approval.cancelled': { to: 'cancelled', from: ['pending'] },
  'approval.invalidated': { to: 'invalidated', from: ['pending', 'granted'] },
  // A question a legal blocked.json asked (docs/task-claims.md) leaves the inbox when its task ends.
  'question.withdrawn': { to: 'cancelled', from: ['pending'] },
};

/** `question.asked`: a blocked claim's question for a human, shown in the inbox as an approval of kind `question`; it authorizes nothing. */
const QUESTION_ASKED = 'question.asked';

function approvalIdOf(event: ProjectedEvent): string | null {
  const { envelope } = event;
  return idField(envelope.payload, 'approval_id') ?? (envelope.entity_type === 'approval' ? envelope.entity_id : null);
}

function locate(event: ProjectedEvent): Locator | undefined {
  const type = event.envelope.event_type;
  if (event.aggregate.type !== 'task' || (type !== 'approval.requested' && type !== QUESTION_ASKED && RESOLUTIONS[type] === undefined)) return undefined;
  const approvalId = approvalIdOf(event);
  if (approvalId !== null) return { approval_id: approvalId };
  // A resolution that names no approval: the pending one of its attempt.
  const attempt = attemptIdOf(event);
  return attempt === null ? undefined : { task_id: event.aggregate.id, attempt_id: attempt, status: 'pending' };
}

function packetOf(data: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const packet = data['packet'];
  if (isObject(packet)) return redactSecrets(packet);
  const refs: Record<string, unknown> = {};
  for (const key of ['approval_type', 'requested_action_ref', 'approval_packet_ref', 'policy_result_ref', 'state_witness', 'reason', 'risk_band']) {
    if (data[key] !== undefined) refs[key] = data[key];
  }
  return redactSecrets(refs);
}

function fold(row: ApprovalRow | undefined, event: ProjectedEvent): ApprovalRow | undefined {
  const { envelope } = event;
  const data = envelope.payload;
  const at = occurredAt(event);
  if (envelope.event_type === QUESTION_ASKED) {
    const approvalId = approvalIdOf(event);
    if (row !== undefined || approvalId === null) return row;
    const packet: Record<string, unknown> = { kind: 'question' };
    for (const key of ['claim_id', 'question', 'best_guess', 'fallback_action', 'human_required_for']) if (data[key] !== undefined) packet[key] = data[key];
    return {
      approval_id: approvalId,
      task_id: event.aggregate.id,
      step_id: null,
      attempt_id: null,
      status: 'pending',
      packet: redactSecrets(packet),
      requested_by: idField(data, 'requested_by'),
      resolved_by: null,
      resolution_note: null,
      requested_at: instant(data['at']) ?? at,
      resolved_at: null,
      expires_at: null,
      updated_at: at,
    };
  }
  if (envelope.event_type === 'approval.requested') {
    if (row !== undefined) return row;
    const approvalId = approvalIdOf(event);
    if (approvalId === null) return undefined;
    return {
      approval_id: approvalId,
      task_id: event.aggregate.id,
      step_id: stepIdOf(event),
      attempt_id: attemptIdOf(event),
      status: 'pending',
      packet: packetOf(data),
      requested_by: idField(data, 'requested_by'),
      resolved_by: null,
      resolution_note: null,
      requested_at: instant(data['at']) ?? at,
      resolved_at: null,
      expires_at: instant(data['expires_at']) ?? instant(field(data['packet'], 'expires_at')),
      updated_at: at,
    };
  }
  const resolution = RESOLUTIONS[envelope.event_type];
  if (row === undefined || resolution === undefined) return row;
  if (APPROVAL_TERMINAL_STATES.includes(row.status) || !resolution.from.includes(row.status)) return row;
  return patch(
    row,
    {
      status: resolution.to,
      resolved_by: idField(data, 'resolved_by') ?? envelope.actor_id,
      resolved_at: instant(data['at']) ?? at,
      resolution_note: text(data, 'note') ?? text(data, 'reason') ?? text(data, 'cause'),
    },
    at,
  );
}

export const approvalsView: View<ApprovalRow> = {
  name: 'approvals',
  primaryKey: ['approval_id'],
  published: true,
  topicId: (row) => row.approval_id,
  locate,
  fold,
};
