import { describe, expect, it } from 'vitest';
import { FACTS, POLICY_CASES } from '../../test/policy.cases.js';
import { evaluatePolicy } from './evaluate-policy.js';
import { BUILTIN_POLICY_PROFILES } from './policy-profile.js';

describe('policy cases (table)', () => {
  it.each(POLICY_CASES.map((c) => [c.note, c] as const))('%s', (note, c) => {
    const profile = typeof c.profile === 'string' ? BUILTIN_POLICY_PROFILES[c.profile] : c.profile;
    const result = evaluatePolicy(c.request, profile, { ...FACTS, ...c.facts });
    const codes = result.reasons.map((reason) => reason.code);
    const explain = `[${note}] got ${result.outcome} (${result.risk_band}): ${result.reasons.map((r) => `${r.code}/${r.outcome}`).join(', ')}`;
    expect(result.outcome, explain).toBe(c.want.outcome);
    for (const code of c.want.reasons ?? []) expect(codes, explain).toContain(code);
    for (const code of c.want.absent ?? []) expect(codes, explain).not.toContain(code);
    if (c.want.risk_band !== undefined) expect(result.risk_band, explain).toBe(c.want.risk_band);
    if (c.want.witness_required !== undefined) expect(result.witness_required, explain).toBe(c.want.witness_required);
    if (c.want.downgraded_to !== undefined) expect(result.downgrade?.action_request.action_class, explain).toBe(c.want.downgraded_to);
    expect(result.profile_id).toBe(profile.id);
    expect(result.profile_version).toBe(profile.version);
    expect(result.matched_rules.length, explain).toBeGreaterThan(0);
  });
});
