import type { Belief, InvalidationPolicy, KnowledgeEvidenceRef, KnowledgeSensitivity, MemoryRecord, MemorySource, TrustTier, WorkingStateEntry } from '@writ/contracts';
import { JsonValue } from '@writ/contracts';
import type { Asserter } from './belief.decider.js';
import { isBeliefActive } from './belief.decider.js';
import { KnowledgeError } from './knowledge.errors.js';
import { assertionHoldsSecretByValue, secretByValue } from './secret-by-reference.js';
import type { PromotionDegradeReason } from './memory.events.js';

export type { PromotionDegradeReason } from './memory.events.js';
import { TRUST_TIER_RANK, trustGate, trustTierRefusal } from './trust-tier.gates.js';

/** A request to promote a claim to durable memory. Everything but the ids may be missing: a missing part makes it unsupported, not invalid. */
export interface MemoryPromotionRequest {
  readonly memory_id: string;
  readonly task_id: string;
  readonly claim?: string;
  readonly scope?: string;
  readonly evidence_refs?: readonly KnowledgeEvidenceRef[];
  readonly trust_tier?: TrustTier;
  readonly promotion_reason?: string;
  readonly source?: MemorySource;
  readonly invalidation_policy?: InvalidationPolicy;
  readonly retention_class?: string;
  readonly supersedes?: string;
  readonly structured_assertion?: JsonValue;
  readonly sensitivity?: KnowledgeSensitivity;
}

/** What the service looked up and checked before asking: who promotes, the source belief as folded, the policy allow. */
export interface MemoryPromotionFacts {
  readonly promoted_by: Asserter;
  /** The source belief from the task's belief fold; required when `source.kind` is `belief`. */
  readonly source_belief?: Belief;
  /** The policy result that allowed the promotion (an important action, Hermit 15.5). */
  readonly policy_result_ref?: string;
  readonly approval_ref?: string;
}


export type MemoryPromotionJudgment =
  | { readonly outcome: 'promote'; readonly record: MemoryRecord }
  /** Hermit 6.3.1: an unsupported write degrades to working state; `entry` is what to write there instead. */
  | { readonly outcome: 'degrade_to_working_state'; readonly reasons: readonly PromotionDegradeReason[]; readonly entry: WorkingStateEntry };

/** The working state key of a degraded candidate: a Name derived from the memory id. */
export function memoryCandidateKey(memoryId: string): string {
  return `memory_candidate.${memoryId.toLowerCase().replace(/-/g, '_')}`;
}

function missing(request: MemoryPromotionRequest): PromotionDegradeReason[] {
  const reasons: PromotionDegradeReason[] = [];
  const blank = (value: string | undefined) => value === undefined || value.trim() === '';
  if (blank(request.claim)) reasons.push('CLAIM_MISSING');
  if (blank(request.scope)) reasons.push('SCOPE_MISSING');
  if ((request.evidence_refs ?? []).length === 0) reasons.push('EVIDENCE_MISSING');
  if (request.trust_tier === undefined) reasons.push('TRUST_TIER_MISSING');
  else if (!trustGate(request.trust_tier, 'promote_to_memory')) reasons.push('TRUST_TIER_NOT_PROMOTABLE');
  if (blank(request.promotion_reason)) reasons.push('PROMOTION_REASON_MISSING');
  if (request.source === undefined) reasons.push('SOURCE_MISSING');
  if (request.invalidation_policy === undefined) reasons.push('INVALIDATION_POLICY_MISSING');
  if (blank(request.retention_class)) reasons.push('RETENTION_CLASS_MISSING');
  return reasons;
}

/** Throws when the request forges trust: an inactive or unknown source belief, a tier above it, a tier its promoter and evidence cannot support. */
function checkTrust(request: MemoryPromotionRequest, facts: MemoryPromotionFacts, nowMs: number): void {
  if (request.source?.kind === 'belief') {
    const belief = facts.source_belief;
    if (belief === undefined || belief.belief_id !== request.source.id) {
      throw new KnowledgeError('KNOWLEDGE_BELIEF_NOT_FOUND', `the source belief ${request.source.id} was not supplied: look it up in the task's beliefs first`, { details: { belief_id: request.source.id } });
    }
    if (!isBeliefActive(belief, nowMs)) {
      throw new KnowledgeError('KNOWLEDGE_BELIEF_NOT_ACTIVE', `belief ${belief.belief_id} is ${belief.status === 'active' ? 'expired' : belief.status} and cannot be promoted`, { details: { belief_id: belief.belief_id } });
    }
    if (request.trust_tier !== undefined && TRUST_TIER_RANK[request.trust_tier] > TRUST_TIER_RANK[belief.trust_tier]) {
      throw new KnowledgeError('KNOWLEDGE_TRUST_TIER_ESCALATION', `memory ${request.memory_id} claims ${request.trust_tier} but its source belief is ${belief.trust_tier}: promote at ${belief.trust_tier} or lower`, {
        details: { trust_tier: request.trust_tier, source_trust_tier: belief.trust_tier },
      });
    }
    return;
  }
  const evidence = request.evidence_refs ?? [];
  if (request.trust_tier === undefined || evidence.length === 0) return;
  const refusal = trustTierRefusal(request.trust_tier, facts.promoted_by.principal_type, evidence);
  if (refusal !== undefined) throw new KnowledgeError('KNOWLEDGE_TRUST_TIER_UNSUPPORTED', `memory ${request.memory_id}: ${refusal}`, { details: { trust_tier: request.trust_tier } });
}

/**
 * The promotion decision (Hermit 6.3.1, 15.5), pure: forged trust throws; a
 * request missing any 15.5 requirement (evidence first of all) degrades to a
 * working state entry; a supported one needs a policy allow and becomes a record.
 * A request marked secret names its secret by reference: its structured
 * assertion is a SecretReference, and a secret candidate that degrades holds
 * that reference as its entry's value (KNOWLEDGE_SECRET_BY_VALUE otherwise).
 */
export function judgeMemoryPromotion(request: MemoryPromotionRequest, facts: MemoryPromotionFacts, at: string, nowMs: number): MemoryPromotionJudgment {
  checkTrust(request, facts, nowMs);
  if (assertionHoldsSecretByValue(request)) throw secretByValue(`memory ${request.memory_id}`, 'structured_assertion', { memory_id: request.memory_id });
  const reasons = missing(request);
  if (reasons.length > 0) {
    const secret = request.sensitivity === 'secret';
    // A secret candidate is a secret working state entry: it holds the reference, never the claim's data (the reasons are in the event).
    if (secret && request.structured_assertion === undefined) {
      throw secretByValue(`memory ${request.memory_id}`, 'structured_assertion', { memory_id: request.memory_id, degraded_because: reasons });
    }
    const value = secret ? (request.structured_assertion as JsonValue) : JsonValue.parse(
      JSON.parse(JSON.stringify({ claim: request.claim ?? null, scope: request.scope ?? null, trust_tier: request.trust_tier ?? null, promotion_reason: request.promotion_reason ?? null, degraded_because: reasons })),
    );
    const sourceRefs = [
      ...(request.source === undefined ? [] : [`${request.source.kind}:${request.source.id}`]),
      ...(request.evidence_refs ?? []).map((ref) => `${ref.kind}:${ref.id}`),
    ].slice(0, 32);
    const entry: WorkingStateEntry = {
      key: memoryCandidateKey(request.memory_id),
      kind: 'uncertainty',
      value,
      ...(sourceRefs.length === 0 ? {} : { source_refs: sourceRefs }),
      ...(request.sensitivity === undefined ? {} : { sensitivity: request.sensitivity }),
    };
    return { outcome: 'degrade_to_working_state', reasons, entry };
  }
  if (facts.policy_result_ref === undefined) {
    throw new KnowledgeError('KNOWLEDGE_PROMOTION_AUTHORITY_MISSING', `memory ${request.memory_id} cites no policy result: promotion is an important action, evaluate policy first`);
  }
  const record: MemoryRecord = {
    memory_id: request.memory_id,
    task_id: request.task_id,
    claim: request.claim as string,
    scope: request.scope as string,
    evidence_refs: [...(request.evidence_refs ?? [])],
    trust_tier: request.trust_tier as TrustTier,
    promotion_reason: request.promotion_reason as string,
    source: request.source as MemorySource,
    invalidation_policy: request.invalidation_policy as InvalidationPolicy,
    retention_class: request.retention_class as string,
    status: 'active',
    created_at: at,
    promoted_by: facts.promoted_by.principal_id,
    policy_result_ref: facts.policy_result_ref,
    ...(facts.approval_ref === undefined ? {} : { approval_ref: facts.approval_ref }),
    ...(request.supersedes === undefined ? {} : { supersedes: request.supersedes }),
    ...(request.structured_assertion === undefined ? {} : { structured_assertion: request.structured_assertion }),
    ...(request.sensitivity === undefined ? {} : { sensitivity: request.sensitivity }),
  };
  return { outcome: 'promote', record };
}
