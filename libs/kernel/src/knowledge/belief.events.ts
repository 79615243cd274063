import { Belief, Id, KnowledgeEvidenceRef, LIMITS, PrincipalType, Text, Timestamp, UnitInterval } from '@writ/contracts';
import { z } from 'zod';

const at = Timestamp;

/**
 * The events of a task's beliefs (Hermit 8.6, 15.3). Nothing removes a
 * belief: supersession, contradiction, revocation and expiry change its
 * status and raise its version.
 */
export const BeliefEvent = z.discriminatedUnion('type', [
  // `asserter_type` is kept so a replay re-checks the tier's admission: a forged tier in the log is not folded.
  z.strictObject({ type: z.literal('belief.asserted'), data: z.strictObject({ belief: Belief, asserter_type: PrincipalType, at }) }),
  z.strictObject({
    type: z.literal('belief.confidence_updated'),
    data: z.strictObject({ belief_id: Id, confidence: UnitInterval, added_evidence: z.array(KnowledgeEvidenceRef).max(LIMITS.listItems), updated_by: Id, at }),
  }),
  z.strictObject({ type: z.literal('belief.superseded'), data: z.strictObject({ belief_id: Id, superseded_by: Id, at }) }),
  /** `same_scope`: both become `contradicted` (neither steers planning until one is superseded); different scopes coexist, both active. */
  z.strictObject({
    type: z.literal('belief.contradiction_marked'),
    data: z.strictObject({ belief_id: Id, contradicts: Id, same_scope: z.boolean(), needs_review: z.boolean(), marked_by: Id, at }),
  }),
  z.strictObject({ type: z.literal('belief.revoked'), data: z.strictObject({ belief_id: Id, revoked_by: Id, reason: Text, at }) }),
  z.strictObject({ type: z.literal('belief.expired'), data: z.strictObject({ belief_id: Id, at }) }),
]);
export type BeliefEvent = z.infer<typeof BeliefEvent>;
export type BeliefEventType = BeliefEvent['type'];
