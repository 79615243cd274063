import { TrustTier } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { TRUST_TIER_GATES, TRUST_TIER_RANK, trustGate, trustTierRefusal, type TrustGate } from './trust-tier.gates.js';

// Policy cases as a table (note, input, want): a changed gate fails the row that names it.
const CASES: readonly { note: string; tier: string; gate: TrustGate; want: boolean }[] = [
  { note: 'an untrusted claim never steers planning', tier: 'untrusted', gate: 'influence_planning', want: false },
  { note: 'an untrusted claim is never promoted to memory', tier: 'untrusted', gate: 'promote_to_memory', want: false },
  { note: 'an observation steers planning', tier: 'observed', gate: 'influence_planning', want: true },
  { note: 'an observation alone never triggers an autonomous action', tier: 'observed', gate: 'trigger_autonomous_action', want: false },
  { note: 'an observation may be promoted (with evidence)', tier: 'observed', gate: 'promote_to_memory', want: true },
  { note: 'a receipted, verified claim may trigger an autonomous action', tier: 'verified', gate: 'trigger_autonomous_action', want: true },
  { note: 'a user\'s word is not ground for an autonomous action', tier: 'user_asserted', gate: 'trigger_autonomous_action', want: false },
  { note: 'policy-asserted claims may trigger autonomous action', tier: 'policy_asserted', gate: 'trigger_autonomous_action', want: true },
  { note: 'contradicting a verified claim needs a human', tier: 'verified', gate: 'contradiction_needs_review', want: true },
  { note: 'contradicting a user-asserted claim needs a human', tier: 'user_asserted', gate: 'contradiction_needs_review', want: true },
  { note: 'contradictions between observations are resolved by observing', tier: 'observed', gate: 'contradiction_needs_review', want: false },
  { note: 'an unknown tier passes nothing (deny by default)', tier: 'trusted_by_me', gate: 'influence_planning', want: false },
];

describe('trust tier gates (Hermit 15.4) as kernel policy', () => {
  it.each(CASES)('$note', ({ tier, gate, want }) => {
    expect(trustGate(tier, gate)).toBe(want);
  });

  it('given the table, then every tier of the contract has a row and a rank, and only verified / policy_asserted trigger autonomous action', () => {
    expect(Object.keys(TRUST_TIER_GATES).sort()).toEqual([...TrustTier.options].sort());
    expect(Object.keys(TRUST_TIER_RANK).sort()).toEqual([...TrustTier.options].sort());
    expect(TrustTier.options.filter((tier) => trustGate(tier, 'trigger_autonomous_action')).sort()).toEqual(['policy_asserted', 'verified']);
  });

  it.each([
    ['verified', 'agent', [{ kind: 'observation' }], false],
    ['verified', 'agent', [{ kind: 'receipt' }], true],
    ['observed', 'agent', [], false],
    ['user_asserted', 'agent', [], false],
    ['user_asserted', 'supervisor', [], true],
    ['policy_asserted', 'service', [], false],
    ['policy_asserted', 'policy_engine', [], true],
    ['untrusted', 'webhook', [], true],
  ] as const)('given %s claimed by a %s citing %j, then admitted is %s', (tier, asserter, evidence, admitted) => {
    expect(trustTierRefusal(tier, asserter, evidence) === undefined).toBe(admitted);
  });
});
