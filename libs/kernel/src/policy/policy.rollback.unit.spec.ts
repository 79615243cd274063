import type { ActionRequest, RiskBand } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { request } from '../../test/samples.js';
import { riskRank } from './classify-risk.js';
import { evaluatePolicy } from './evaluate-policy.js';
import { BUILTIN_POLICY_DOCUMENTS, BUILTIN_POLICY_PROFILES, versionPolicyProfile, type BuiltinPolicyProfileId } from './policy-profile.js';

/*
 * A receipt's rollback (Hermit 18.6) as policy judges it: its steps are
 * writes, under the rules of write_local / delete_local paths; its params
 * must be a receipt's steps, each inside its target resources; it is at least
 * moderate risk; the built-ins that edit files gate it behind approval.
 */

const facts = { files_owned: ['src/**'], workspace_root: '/work/main' };
const AFTER = 'a'.repeat(64);
const BEFORE = 'b'.repeat(64);

type Step = { action_class: 'write_local' | 'delete_local'; path: string; expected_sha256: string | null; restore_artifact_ref?: string; restore_sha256?: string };

const restore = (path: string): Step => ({ action_class: 'write_local', path, expected_sha256: AFTER, restore_artifact_ref: 'artifact:art-1', restore_sha256: BEFORE });
const remove = (path: string): Step => ({ action_class: 'delete_local', path, expected_sha256: AFTER });

function rollback(steps: readonly Step[], overrides: Partial<ActionRequest> = {}): ActionRequest {
  return request({
    action_class: 'rollback',
    target_resources: [...new Set(steps.map((step) => step.path))],
    params: { receipt_id: 'rct-1', receipt_hash: 'c'.repeat(64), steps: steps.map((step) => ({ ...step })) },
    expected_effects: ['the receipt rct-1 is undone'],
    ...overrides,
  });
}

const local = BUILTIN_POLICY_PROFILES.local_edit_allowed;
const codes = (result: ReturnType<typeof evaluatePolicy>) => result.reasons.map((reason) => reason.code);

describe('policy for rollback', () => {
  it('given a rollback whose steps are inside files_owned, when evaluated under local_edit_allowed, then it requires a director\'s approval, with a state witness, at high risk', () => {
    const result = evaluatePolicy(rollback([restore('src/a.ts'), remove('src/b.ts')]), local, facts);
    expect(result.outcome).toBe('require_approval');
    expect(result.matched_rules).toEqual(['action_class_requires_approval']);
    expect(result.approver_roles).toEqual(['director']);
    expect(result.witness_required).toBe(true);
    expect(result.risk_band).toBe('high');
    expect(result.affected_resources).toEqual(['src/a.ts', 'src/b.ts']);
  });

  it('given any rollback under any built-in, then its risk band is at least moderate', () => {
    for (const id of Object.keys(BUILTIN_POLICY_PROFILES) as BuiltinPolicyProfileId[]) {
      const result = evaluatePolicy(rollback([remove('src/a.ts')], { reversibility_hint: 'reversible' }), BUILTIN_POLICY_PROFILES[id], facts);
      expect(riskRank(result.risk_band), id).toBeGreaterThanOrEqual(riskRank('moderate' satisfies RiskBand));
    }
  });

  it('given the built-ins, then readonly_analysis denies a rollback and every profile that edits files requires approval for it', () => {
    const outcomes = Object.fromEntries(
      (Object.keys(BUILTIN_POLICY_PROFILES) as BuiltinPolicyProfileId[]).map((id) => [id, evaluatePolicy(rollback([restore('src/a.ts')]), BUILTIN_POLICY_PROFILES[id], facts).outcome]),
    );
    expect(outcomes).toEqual({
      readonly_analysis: 'deny',
      local_edit_allowed: 'require_approval',
      network_read_allowed: 'require_approval',
      repo_mutation_gated: 'require_approval',
      external_publish_gated: 'require_approval',
      destructive_denied: 'require_approval',
    });
  });

  it('given a profile that allows rollback outright, when a step is inside files_owned, then it is allowed', () => {
    const profile = versionPolicyProfile({ ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed, action_classes: { ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed.action_classes, rollback: { outcome: 'allow' } } }, 'v-allow');
    expect(evaluatePolicy(rollback([restore('src/a.ts')]), profile, facts).outcome).toBe('allow');
  });

  it('given one step outside files_owned, when evaluated, then the rollback is not denied but goes to a director (it puts back what an action of the task replaced there)', () => {
    const result = evaluatePolicy(rollback([restore('src/a.ts'), remove('lib/b.ts')]), local, facts);
    expect(result.outcome).toBe('require_approval');
    expect(result.approver_roles).toEqual(['director']);
    expect(codes(result)).toContain('rollback_restores_outside_files_owned');
    expect(codes(result)).not.toContain('write_outside_files_owned');
  });

  it('given a profile that allows rollback outright, when a step is outside files_owned or on a Sacred Scope, then it still needs a director', () => {
    const profile = versionPolicyProfile({ ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed, action_classes: { ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed.action_classes, rollback: { outcome: 'allow' } } }, 'v-allow');
    expect(evaluatePolicy(rollback([remove('lib/b.ts')]), profile, facts).outcome).toBe('require_approval');
    expect(evaluatePolicy(rollback([remove('billing/plan.ts')]), profile, facts).outcome).toBe('require_approval');
  });

  it('given the same paths written (not rolled back), when evaluated, then they are still denied', () => {
    const write = request({ action_class: 'write_local', target_resources: ['src/package.json'], params: { path: 'src/package.json', content: '{}' } });
    expect(codes(evaluatePolicy(write, local, facts))).toContain('sacred_path');
    expect(evaluatePolicy(write, local, facts).outcome).toBe('deny');
    const outside = request({ action_class: 'write_local', target_resources: ['lib/b.ts'], params: { path: 'lib/b.ts', content: 'x' } });
    expect(evaluatePolicy(outside, local, facts).outcome).toBe('deny');
  });

  it('given a step on a Sacred Scope, when no or only one of the two exceptions names it, then it goes to a director (rollback_restores_sacred_path); when both do (inside files_owned), then it goes to approval as an excepted path', () => {
    const step = restore('src/package.json');
    for (const result of [evaluatePolicy(rollback([step]), local, facts), evaluatePolicy(rollback([step]), local, { ...facts, sacred_exceptions: ['src/package.json'] })]) {
      expect(result.outcome).toBe('require_approval');
      expect(codes(result)).toContain('rollback_restores_sacred_path');
      expect(codes(result)).not.toContain('sacred_path');
    }
    const excepted = versionPolicyProfile({ ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed, sacred_exceptions: ['**/package.json'] }, 'v-exc');
    expect(codes(evaluatePolicy(rollback([step]), excepted, facts))).toContain('rollback_restores_sacred_path');
    const both = evaluatePolicy(rollback([step]), excepted, { ...facts, sacred_exceptions: ['src/package.json'] });
    expect(both.outcome).toBe('require_approval');
    expect(codes(both)).toContain('sacred_path_excepted');
  });

  it('given a step on a secret path, then it is denied even inside files_owned', () => {
    const result = evaluatePolicy(rollback([restore('src/.env')]), local, facts);
    expect(result.outcome).toBe('deny');
    expect(codes(result)).toContain('secret_path');
  });

  it('given a step whose path no target resource names or contains, then it is denied (rollback_step_not_targeted); a containing target is enough', () => {
    const untargeted = evaluatePolicy(rollback([restore('src/a.ts'), remove('src/b.ts')], { target_resources: ['src/a.ts'] }), local, facts);
    expect(untargeted.outcome).toBe('deny');
    expect(untargeted.reasons.find((reason) => reason.code === 'rollback_step_not_targeted')?.message).toContain('src/b.ts');
    expect(evaluatePolicy(rollback([restore('src/a.ts'), remove('src/b.ts')], { target_resources: ['src'] }), local, facts).outcome).toBe('require_approval');
  });

  it('given params that are not a receipt and its steps, then the rollback is denied (rollback_params_invalid)', () => {
    const cases: ActionRequest['params'][] = [
      {},
      { receipt_id: 'rct-1', receipt_hash: 'c'.repeat(64), steps: [] },
      { receipt_id: 'rct-1', receipt_hash: 'not-a-hash', steps: [remove('src/a.ts')] },
      { receipt_id: 'rct-1', receipt_hash: 'c'.repeat(64), steps: [{ action_class: 'write_local', path: 'src/a.ts', expected_sha256: AFTER }] },
      { receipt_id: 'rct-1', receipt_hash: 'c'.repeat(64), steps: [remove('src/a.ts'), restore('src/a.ts')] },
      { receipt_id: 'rct-1', receipt_hash: 'c'.repeat(64), steps: [{ action_class: 'execute_command', path: 'src/a.ts', expected_sha256: AFTER }] },
    ];
    for (const params of cases) {
      const result = evaluatePolicy(request({ action_class: 'rollback', target_resources: ['src/a.ts'], params }), local, facts);
      expect(result.outcome, JSON.stringify(params)).toBe('deny');
      expect(codes(result), JSON.stringify(params)).toContain('rollback_params_invalid');
    }
  });

  it('given a step that climbs out of the workspace, then it is denied (path_invalid), whatever the targets say', () => {
    const result = evaluatePolicy(rollback([restore('../outside.txt')], { target_resources: ['.'] }), local, { ...facts, files_owned: ['**'] });
    expect(result.outcome).toBe('deny');
    expect(codes(result)).toContain('path_invalid');
  });

  it('given a URL among a rollback\'s target resources, then it is denied (resource_not_a_path): a rollback undoes workspace changes only', () => {
    const result = evaluatePolicy(rollback([restore('src/a.ts')], { target_resources: ['src/a.ts', 'https://example.com/x'] }), local, facts);
    expect(result.outcome).toBe('deny');
    expect(codes(result)).toContain('resource_not_a_path');
  });
});
