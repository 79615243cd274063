import { z } from 'zod';
import { Id, Name, Ref, Timestamp } from '../ids.js';
import { JsonValue } from '../json.js';
import { LIMITS } from '../limits.js';
import { isPresent, withRules } from '../rules.js';
import { Text } from '../text.js';
import { TrustTier } from '../trust-tier.js';
import { KnowledgeEvidenceRef, KnowledgeScope, KnowledgeSensitivity } from './knowledge-evidence.js';

/** Memory statuses (Hermit 8.7). There is no `deleted`: invalidation is the correction path. */
export const MemoryStatus = z.enum(['active', 'invalidated', 'revoked', 'expired']);
export type MemoryStatus = z.infer<typeof MemoryStatus>;

/** When a memory stops holding: only by hand, when its evidence is revoked, or at a fixed instant. */
export const InvalidationPolicy = withRules(
  z.strictObject({ mode: z.enum(['manual', 'on_evidence_revoked', 'at_expiry']), expires_at: Timestamp.optional() }),
  (policy, report) => {
    if (policy.mode === 'at_expiry' && !isPresent(policy.expires_at)) report(['expires_at'], 'is required when mode is at_expiry');
  },
);
export type InvalidationPolicy = z.infer<typeof InvalidationPolicy>;

/** The belief or artifact a memory was promoted from (Hermit 15.5). */
export const MemorySource = z.strictObject({ kind: z.enum(['belief', 'artifact']), id: Id });
export type MemorySource = z.infer<typeof MemorySource>;

/** Durable cross-task knowledge, promoted with evidence and trust metadata (Hermit 8.7, 15.5). */
export const MemoryRecord = z
  .strictObject({
    memory_id: Id,
    task_id: Id.describe('The task that promoted it (Hermit 6.1.2: no orphan durable objects).'),
    claim: Text.describe('The claim in words; on a record marked secret it says what the secret is about, never the secret itself.'),
    scope: KnowledgeScope,
    evidence_refs: z.array(KnowledgeEvidenceRef).min(1).max(LIMITS.listItems),
    trust_tier: TrustTier,
    promotion_reason: Text,
    source: MemorySource,
    invalidation_policy: InvalidationPolicy,
    retention_class: Name.describe('How long it is kept, e.g. project, org, audit.'),
    status: MemoryStatus,
    created_at: Timestamp,
    promoted_by: Id,
    policy_result_ref: Ref.describe('The policy result that allowed the promotion (an important action).'),
    approval_ref: Ref.optional(),
    supersedes: Id.optional(),
    invalidated_at: Timestamp.optional(),
    invalidation_reason: Text.optional(),
    structured_assertion: JsonValue.optional(),
    sensitivity: KnowledgeSensitivity.optional().describe(
      '`secret`: the record is about secret material. Its structured_assertion, if any, is exactly a SecretReference `{ "secret_ref": <Ref> }` (else KNOWLEDGE_SECRET_BY_VALUE).',
    ),
  })
  .meta({ title: 'MemoryRecord', description: 'Durable cross-task knowledge, promoted only with evidence; invalidated, never deleted (Hermit 8.7).' });
export type MemoryRecord = z.infer<typeof MemoryRecord>;
