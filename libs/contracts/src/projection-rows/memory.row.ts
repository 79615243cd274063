import { z } from 'zod';
import { MemoryStatus } from '../knowledge/memory-record.js';
import { KnowledgeEvidenceRef } from '../knowledge/knowledge-evidence.js';
import { TrustTier } from '../trust-tier.js';
import { RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/**
 * `<root>.proj.memory.<memory_id>`: one durable memory record as its stream's
 * `memory.*` events fold (issue 17, Hermit 8.7, 15.5): promoted with its
 * claim, scope, evidence, trust tier and promotion reason, the authority it
 * was promoted under (policy result, approval, and the receipt of the
 * promoting action once issued), then invalidated, revoked or expired — never
 * removed. A promotion that degraded to working state made no record and has
 * no row. A record marked `sensitivity: secret` keeps its claim out of the row.
 */
export const MemoryRowSchema = z.strictObject({
  memory_id: RowId,
  task_id: RowId,
  claim: RowText,
  claim_withheld: z.boolean(),
  scope: z.string(),
  trust_tier: TrustTier,
  status: MemoryStatus,
  evidence_refs: z.array(KnowledgeEvidenceRef),
  promotion_reason: RowText,
  source_kind: RowText,
  source_id: RowRef,
  invalidation_mode: RowText,
  expires_at: RowInstant.nullable(),
  retention_class: RowText,
  promoted_by: RowRef,
  policy_result_ref: z.string().nullable(),
  approval_ref: z.string().nullable(),
  /** The receipt of the promoting action (`receipt:<id>`); null until the receipt service issued it. */
  receipt_ref: z.string().nullable(),
  /** The attempt that promoted it, and the one that invalidated it (their receipts are found by them). */
  attempt_id: RowRef,
  invalidation_attempt_id: RowRef,
  invalidation_receipt_ref: z.string().nullable(),
  supersedes: RowRef,
  superseded_by: RowRef,
  invalidated_by: RowRef,
  invalidation_reason: RowText,
  invalidated_at: RowInstant.nullable(),
  sensitivity: RowText,
  created_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type MemoryRow = z.infer<typeof MemoryRowSchema>;
