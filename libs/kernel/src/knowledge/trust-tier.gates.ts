import type { PrincipalType, TrustTier } from '@writ/contracts';

/**
 * What a claim of each trust tier may do (Hermit 15.4). Kernel policy as
 * data: the context compiler, the memory promotion and any autonomous
 * trigger read this table, never their own notion of trust.
 *
 * - untrusted claims never steer anything; they are kept for the record.
 * - observed and user-asserted claims steer planning, but an autonomous
 *   action needs verified (receipted) or policy-asserted ground.
 * - a contradiction touching a verified, user- or policy-asserted claim is
 *   a human's call; one between observations is resolved by observing more.
 */
export const TRUST_TIER_GATES = Object.freeze({
  untrusted: Object.freeze({ influence_planning: false, trigger_autonomous_action: false, promote_to_memory: false, contradiction_needs_review: false }),
  observed: Object.freeze({ influence_planning: true, trigger_autonomous_action: false, promote_to_memory: true, contradiction_needs_review: false }),
  verified: Object.freeze({ influence_planning: true, trigger_autonomous_action: true, promote_to_memory: true, contradiction_needs_review: true }),
  user_asserted: Object.freeze({ influence_planning: true, trigger_autonomous_action: false, promote_to_memory: true, contradiction_needs_review: true }),
  policy_asserted: Object.freeze({ influence_planning: true, trigger_autonomous_action: true, promote_to_memory: true, contradiction_needs_review: true }),
} as const satisfies Record<TrustTier, Record<string, boolean>>);

export type TrustGate = keyof (typeof TRUST_TIER_GATES)['untrusted'];

/** True when a claim of `tier` passes `gate`; an unknown tier passes nothing (deny by default). */
export function trustGate(tier: string, gate: TrustGate): boolean {
  const row = (TRUST_TIER_GATES as Record<string, Record<TrustGate, boolean>>)[tier];
  return row?.[gate] === true;
}

/** True when a contradiction between claims of these tiers needs a human's review. */
export function contradictionNeedsReview(a: TrustTier, b: TrustTier): boolean {
  return trustGate(a, 'contradiction_needs_review') || trustGate(b, 'contradiction_needs_review');
}

/**
 * Escalation order: a promotion or a copy may keep or lower a claim's tier,
 * never raise it. A user's word ranks under a receipted check; policy ranks highest.
 */
export const TRUST_TIER_RANK = Object.freeze({ untrusted: 0, observed: 1, user_asserted: 2, verified: 3, policy_asserted: 4 } as const satisfies Record<TrustTier, number>);

/**
 * Who may claim a tier, and on what evidence. A tier is not taken at the
 * asserter's word: `verified` cites a receipt, `observed` cites something,
 * only a human asserts `user_asserted` and only the policy engine `policy_asserted`.
 */
export const TRUST_TIER_ADMISSION = Object.freeze({
  untrusted: Object.freeze({ asserters: 'any', evidence: 'none' }),
  observed: Object.freeze({ asserters: 'any', evidence: 'any' }),
  verified: Object.freeze({ asserters: 'any', evidence: 'receipt' }),
  user_asserted: Object.freeze({ asserters: Object.freeze(['user', 'supervisor'] as const), evidence: 'none' }),
  policy_asserted: Object.freeze({ asserters: Object.freeze(['policy_engine'] as const), evidence: 'none' }),
} as const satisfies Record<TrustTier, { asserters: 'any' | readonly PrincipalType[]; evidence: 'none' | 'any' | 'receipt' }>);

/** Why a tier is not admitted, or undefined when it is. */
export function trustTierRefusal(tier: TrustTier, asserter: PrincipalType, evidence: readonly { readonly kind: string }[]): string | undefined {
  const rule = TRUST_TIER_ADMISSION[tier];
  if (rule === undefined) return `trust tier ${String(tier)} is unknown`;
  if (rule.asserters !== 'any' && !(rule.asserters as readonly string[]).includes(asserter)) {
    return `a ${asserter} cannot assert ${tier} (only ${rule.asserters.join(', ')})`;
  }
  if (rule.evidence === 'any' && evidence.length === 0) return `${tier} needs at least one evidence ref (an artifact, receipt or observation)`;
  if (rule.evidence === 'receipt' && !evidence.some((ref) => ref.kind === 'receipt')) return `${tier} needs a receipt among its evidence refs`;
  return undefined;
}
