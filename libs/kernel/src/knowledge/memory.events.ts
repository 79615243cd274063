import { Id, MemoryRecord, Text, Timestamp, WorkingStateEntry } from '@writ/contracts';
import { z } from 'zod';

const at = Timestamp;

/** Why a promotion is unsupported: each names a Hermit 15.5 requirement the request lacks. */
export const PromotionDegradeReason = z.enum([
  'CLAIM_MISSING',
  'SCOPE_MISSING',
  'EVIDENCE_MISSING',
  'TRUST_TIER_MISSING',
  'TRUST_TIER_NOT_PROMOTABLE',
  'PROMOTION_REASON_MISSING',
  'SOURCE_MISSING',
  'INVALIDATION_POLICY_MISSING',
  'RETENTION_CLASS_MISSING',
]);
export type PromotionDegradeReason = z.infer<typeof PromotionDegradeReason>;

/**
 * The events of one MemoryRecord (Hermit 8.7, 15.5). There is no deletion
 * event: a record is invalidated, revoked or expired, and stays readable.
 */
export const MemoryEvent = z.discriminatedUnion('type', [
  // MemoryRecord requires at least one evidence ref: a promotion without evidence cannot even be written.
  z.strictObject({ type: z.literal('memory.promoted'), data: z.strictObject({ record: MemoryRecord, at }) }),
  /** The unsupported promotion, recorded; `entry` is the working state entry the caller writes instead. */
  z.strictObject({
    type: z.literal('memory.promotion_degraded'),
    data: z.strictObject({ memory_id: Id, task_id: Id, reasons: z.array(PromotionDegradeReason).min(1), entry: WorkingStateEntry, at }),
  }),
  z.strictObject({ type: z.literal('memory.invalidated'), data: z.strictObject({ memory_id: Id, invalidated_by: Id, reason: Text, superseded_by: Id.optional(), at }) }),
  z.strictObject({ type: z.literal('memory.revoked'), data: z.strictObject({ memory_id: Id, revoked_by: Id, reason: Text, at }) }),
  z.strictObject({ type: z.literal('memory.expired'), data: z.strictObject({ memory_id: Id, at }) }),
]);
export type MemoryEvent = z.infer<typeof MemoryEvent>;
export type MemoryEventType = MemoryEvent['type'];
