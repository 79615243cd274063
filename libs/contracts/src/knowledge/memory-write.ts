import { z } from 'zod';
import { Id, Name, Sha256Hex } from '../ids.js';
import { JsonValue } from '../json.js';
import { LIMITS } from '../limits.js';
import { Text } from '../text.js';
import { TrustTier } from '../trust-tier.js';
import { KnowledgeEvidenceRef, KnowledgeScope, KnowledgeSensitivity } from './knowledge-evidence.js';
import { InvalidationPolicy, MemorySource } from './memory-record.js';
import { WorkingStateEntry } from './working-state.js';

/**
 * A memory promotion as an agent proposes it (`params.memory` of a
 * `memory_write` ActionRequest, Hermit 15.5). Every part but the id may be
 * missing: a missing part makes the promotion unsupported (it degrades to a
 * working state candidate, Hermit 6.3.1), never malformed. A part that is
 * given must be well formed, so a malformed promotion is refused at ingress
 * (CONTRACT_INVALID). Who promotes, the source belief as the log holds it,
 * the policy result and the approval are looked up by the executor from the
 * task's log, never taken from here.
 */
export const MemoryPromotionParams = z
  .strictObject({
    op: z.literal('promote'),
    memory_id: Id.describe('The record to create: one memory id is promoted once (the first promotion on its stream wins).'),
    claim: Text.optional(),
    scope: KnowledgeScope.optional(),
    evidence_refs: z.array(KnowledgeEvidenceRef).max(LIMITS.listItems).optional(),
    trust_tier: TrustTier.optional(),
    promotion_reason: Text.optional(),
    source: MemorySource.optional(),
    invalidation_policy: InvalidationPolicy.optional(),
    retention_class: Name.optional(),
    supersedes: Id.optional(),
    structured_assertion: JsonValue.optional(),
    sensitivity: KnowledgeSensitivity.optional(),
  })
  .meta({ title: 'MemoryPromotionParams', description: 'A memory promotion as proposed; missing parts degrade it to working state (Hermit 6.3.1, 15.5).' });
export type MemoryPromotionParams = z.infer<typeof MemoryPromotionParams>;

/** Invalidates a promoted record (`params.memory` of a `memory_write`): it stays, marked invalidated; nothing is ever deleted. */
export const MemoryInvalidationParams = z
  .strictObject({
    op: z.literal('invalidate'),
    memory_id: Id,
    reason: Text,
    superseded_by: Id.optional(),
  })
  .meta({ title: 'MemoryInvalidationParams', description: 'Invalidates a memory record; it stays readable, marked invalidated (Hermit 8.7).' });
export type MemoryInvalidationParams = z.infer<typeof MemoryInvalidationParams>;

/** `params.memory` of a `memory_write` ActionRequest: what to do to which memory record. */
export const MemoryWriteParams = z.discriminatedUnion('op', [MemoryPromotionParams, MemoryInvalidationParams]).meta({
  title: 'MemoryWriteParams',
  description: 'The memory write a memory_write action performs: promote a record, or invalidate one.',
});
export type MemoryWriteParams = z.infer<typeof MemoryWriteParams>;

/**
 * What a `memory_write` came to, as the executor recorded it in
 * `execution.completed.memory`: the memory event it appended on the record's
 * stream (`<events>.memory.<memory_id>`), by id and hash, so the receipt and a
 * reader of the task's log alone know which (the receipt binds the hash: the
 * memory event is not in the task's segment, its digest is). `degraded_to_working_state`: the
 * promotion lacked a Hermit 15.5 requirement (`reasons`); no record exists,
 * and `entry` is the working state candidate the orchestrator writes to the
 * task's working state instead.
 */
export const MemoryWriteOutcome = z
  .strictObject({
    memory_id: Id,
    op: z.enum(['promote', 'invalidate']),
    outcome: z.enum(['promoted', 'degraded_to_working_state', 'invalidated']),
    event_id: Id,
    /** The memory event's `hash`: a digest of an event kept on another stream, which the receipt binds (`sha256:<hex>`) and a task bundle resolves here. */
    event_sha256: Sha256Hex,
    reasons: z.array(z.string().min(1).max(64)).max(16).optional(),
    entry: WorkingStateEntry.optional(),
  })
  .meta({ title: 'MemoryWriteOutcome', description: 'The memory event a memory_write appended, and what it came to.' });
export type MemoryWriteOutcome = z.infer<typeof MemoryWriteOutcome>;
