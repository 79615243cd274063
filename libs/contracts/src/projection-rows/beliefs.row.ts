import { z } from 'zod';
import { BeliefStatus } from '../knowledge/belief.js';
import { KnowledgeEvidenceRef } from '../knowledge/knowledge-evidence.js';
import { TrustTier } from '../trust-tier.js';
import { RowCount, RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/**
 * `<root>.proj.beliefs.<belief_id>`: one belief of a task as its `belief.*`
 * events fold (Hermit 13.6 belief view): every belief ever asserted, with its
 * trust tier, status (active, superseded, contradicted, revoked, expired),
 * version and evidence. Never removed. A belief marked `sensitivity: secret`
 * keeps its claim out of the row (`claim_withheld`).
 */
export const BeliefRowSchema = z.strictObject({
  task_id: RowId,
  belief_id: RowId,
  claim: RowText,
  claim_withheld: z.boolean(),
  scope: z.string(),
  trust_tier: TrustTier,
  status: BeliefStatus,
  confidence: z.number().min(0).max(1),
  version: RowCount,
  evidence_refs: z.array(KnowledgeEvidenceRef),
  asserted_by: RowRef,
  asserter_type: RowText,
  step_id: RowRef,
  attempt_id: RowRef,
  supersedes: RowRef,
  superseded_by: RowRef,
  contradicts: z.array(RowId),
  /** Whether a contradiction marked on it touches a tier whose contradictions a human reviews (TRUST_TIER_GATES). */
  needs_review: z.boolean(),
  expires_at: RowInstant.nullable(),
  revoked_by: RowRef,
  revoke_reason: RowText,
  epistemic_type: RowText,
  sensitivity: RowText,
  created_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type BeliefRow = z.infer<typeof BeliefRowSchema>;
