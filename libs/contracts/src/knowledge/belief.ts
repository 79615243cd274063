import { z } from 'zod';
import { Id, Timestamp } from '../ids.js';
import { JsonValue } from '../json.js';
import { LIMITS } from '../limits.js';
import { EpistemicType } from '../lineage/last-will.js';
import { Text, UnitInterval } from '../text.js';
import { TrustTier } from '../trust-tier.js';
import { KnowledgeEvidenceRef, KnowledgeScope, KnowledgeSensitivity } from './knowledge-evidence.js';

/** Belief statuses (Hermit 8.6). Only `active` beliefs are reasoned with. */
export const BeliefStatus = z.enum(['active', 'superseded', 'contradicted', 'revoked', 'expired']);
export type BeliefStatus = z.infer<typeof BeliefStatus>;

/** What the system treats as true enough to reason with inside a task (Hermit 8.6, 15.3). Never deleted: revised by new versions. */
export const Belief = z
  .strictObject({
    belief_id: Id,
    task_id: Id,
    claim: Text.describe('The claim in words. On a belief marked secret it says what the secret is about, never the secret itself: a claim cannot be checked, so the asserter answers for it (pattern redaction in the orchestrator is the last net).'),
    scope: KnowledgeScope,
    evidence_refs: z.array(KnowledgeEvidenceRef).max(LIMITS.listItems),
    confidence: UnitInterval,
    trust_tier: TrustTier,
    status: BeliefStatus,
    created_at: Timestamp,
    asserted_by: Id.describe('principal_id of who asserted it.'),
    version: z.int().min(1).describe('Raised by every change (confidence, contradiction, status): never overwritten in place.'),
    step_id: Id.optional(),
    attempt_id: Id.optional(),
    supersedes: Id.optional(),
    superseded_by: Id.optional(),
    contradicts: z.array(Id).max(LIMITS.listItems).optional(),
    expires_at: Timestamp.optional(),
    structured_assertion: JsonValue.optional(),
    epistemic_type: EpistemicType.optional().describe('How a Last Will delta knew it (seed 002): retrieved, inferred, hypothesis, ...'),
    sensitivity: KnowledgeSensitivity.optional().describe(
      '`secret`: the belief is about secret material. Its structured_assertion, if any, is exactly a SecretReference `{ "secret_ref": <Ref> }` (else KNOWLEDGE_SECRET_BY_VALUE); it is left out of context packs, or named by that reference.',
    ),
  })
  .meta({ title: 'Belief', description: 'Evidence-backed, revisable working truth (Hermit 8.6, 15.3).' });
export type Belief = z.infer<typeof Belief>;
