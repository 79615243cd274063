import { memoryDecider } from '@writ/kernel';
import { redactSecrets } from '@writ/telemetry';
import { field, idField, occurredAt, text, type ProjectedEvent } from '../projected-event.js';
import { patch, type Folded, type Locator, type View } from './view.js';
import type { MemoryRow } from '@writ/contracts/projection-rows';

/**
 * The memory view (issue 17, Hermit 8.7, 15.5): one row per durable memory
 * record, never removed. A record's own stream (`<events>.memory.<id>`,
 * appended by the executor alone: the log's authorship check keeps a forged
 * one out before any fold) is folded as the kernel's memory `evolve` folds
 * it: a promotion is taken only as a new, active record of this stream's id
 * that passes the trust gate (checked again here, so a forged tier in the log
 * is not shown); invalidation, revocation and expiry apply only to an active
 * record and keep it, with its status. A degraded promotion made no record
 * (its candidate went to the task's working state) and has no row. The
 * receipts of the promoting and invalidating actions (`receipt.issued` of
 * class `memory_promotion` on the task's stream) are attached by attempt.
 * A secret-marked record keeps its claim out of the row; free text passes the
 * secret redaction.
 */
export type { MemoryRow };

function locate(event: ProjectedEvent): Locator | readonly Locator[] | undefined {
  const { envelope, aggregate } = event;
  if (aggregate.type === 'memory') {
    if (!envelope.event_type.startsWith('memory.') || envelope.event_type === 'memory.promotion_degraded') return undefined;
    return { memory_id: aggregate.id };
  }
  if (aggregate.type !== 'task' || envelope.event_type !== 'receipt.issued') return undefined;
  const receipt = field(envelope.payload, 'receipt');
  const attemptId = idField(receipt, 'attempt_id');
  if (field(receipt, 'receipt_class') !== 'memory_promotion' || attemptId === null) return undefined;
  return [{ attempt_id: attemptId }, { invalidation_attempt_id: attemptId }];
}

function promoted(event: ProjectedEvent): Folded<MemoryRow> | undefined {
  const state = memoryDecider.evolve(memoryDecider.initialState(), { type: event.envelope.event_type, data: event.envelope.payload });
  // Not applied by the kernel (malformed, not active, below the trust gate, a secret by value): no row.
  if (state.status !== 'active') return undefined;
  const record = state.record;
  if (record.memory_id !== event.aggregate.id) return undefined;
  const secret = record.sensitivity === 'secret';
  const at = occurredAt(event);
  const policy = record.invalidation_policy;
  return {
    memory_id: record.memory_id,
    task_id: record.task_id,
    claim: secret ? null : (redactSecrets(record.claim) as string),
    claim_withheld: secret,
    scope: record.scope,
    trust_tier: record.trust_tier,
    status: 'active',
    evidence_refs: record.evidence_refs,
    promotion_reason: redactSecrets(record.promotion_reason) as string,
    source_kind: record.source.kind,
    source_id: record.source.id,
    invalidation_mode: policy.mode,
    expires_at: policy.expires_at === undefined ? null : new Date(Date.parse(policy.expires_at)).toISOString(),
    retention_class: record.retention_class,
    promoted_by: record.promoted_by,
    policy_result_ref: record.policy_result_ref,
    approval_ref: record.approval_ref ?? null,
    receipt_ref: null,
    attempt_id: event.envelope.attempt_id ?? null,
    invalidation_attempt_id: null,
    invalidation_receipt_ref: null,
    supersedes: record.supersedes ?? null,
    superseded_by: null,
    invalidated_by: null,
    invalidation_reason: null,
    invalidated_at: null,
    sensitivity: record.sensitivity ?? null,
    created_at: at,
    updated_at: at,
  };
}

function fold(row: MemoryRow | undefined, event: ProjectedEvent, locator?: Locator): Folded<MemoryRow> | undefined {
  const { envelope } = event;
  const data = envelope.payload;
  if (envelope.event_type === 'memory.promoted') return row ?? promoted(event);
  if (row === undefined) return row;
  const at = occurredAt(event);
  if (envelope.event_type === 'receipt.issued') {
    const ref = idField(field(data, 'receipt'), 'receipt_id');
    if (ref === null) return row;
    if (locator?.['attempt_id'] !== undefined && row.receipt_ref === null) return patch(row, { receipt_ref: `receipt:${ref}` }, at);
    if (locator?.['invalidation_attempt_id'] !== undefined && row.invalidation_receipt_ref === null) return patch(row, { invalidation_receipt_ref: `receipt:${ref}` }, at);
    return row;
  }
  // Only an active record changes, and only about itself (as the kernel's evolve holds it).
  if (row.status !== 'active' || idField(data, 'memory_id') !== row.memory_id) return row;
  switch (envelope.event_type) {
    case 'memory.invalidated':
      return patch(
        row,
        {
          status: 'invalidated',
          invalidated_by: idField(data, 'invalidated_by'),
          invalidation_reason: redactSecrets(text(data, 'reason')),
          invalidated_at: at,
          superseded_by: idField(data, 'superseded_by'),
          invalidation_attempt_id: envelope.attempt_id ?? null,
        },
        at,
      );
    case 'memory.revoked':
      return patch(row, { status: 'revoked', invalidated_by: idField(data, 'revoked_by'), invalidation_reason: redactSecrets(text(data, 'reason')), invalidated_at: at }, at);
    case 'memory.expired':
      return patch(row, { status: 'expired' }, at);
    default:
      return row;
  }
}

export const memoryView: View<MemoryRow> = {
  name: 'memory',
  primaryKey: ['memory_id'],
  published: true,
  topicId: (row) => row.memory_id,
  locate,
  fold,
};
