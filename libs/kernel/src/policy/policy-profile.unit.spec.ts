import { PolicyResult, hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../test/decider-spec.js';
import { command, request } from '../../test/samples.js';
import { classifyRisk } from './classify-risk.js';
import { evaluatePolicy, toPolicyDecision, toPolicyResult } from './evaluate-policy.js';
import { BUILTIN_POLICY_PROFILES, builtinPolicyProfile, parsePolicyProfile, preparePolicyProfile, type PolicyProfile } from './policy-profile.js';

const base: PolicyProfile = BUILTIN_POLICY_PROFILES.local_edit_allowed;

describe('policy profiles as data', () => {
  it('given the built-ins, then each parses and is reachable by id', () => {
    for (const id of ['readonly_analysis', 'local_edit_allowed', 'destructive_denied']) {
      expect(builtinPolicyProfile(id).id).toBe(id);
      expect(() => parsePolicyProfile(builtinPolicyProfile(id))).not.toThrow();
    }
  });

  it('given an unknown id, then POLICY_PROFILE_UNKNOWN', () => {
    expect(codeOf(() => builtinPolicyProfile('yolo'))).toBe('POLICY_PROFILE_UNKNOWN');
    expect(codeOf(() => builtinPolicyProfile('__proto__'))).toBe('POLICY_PROFILE_UNKNOWN');
  });

  it.each<[string, unknown]>([
    ['a downgrade without a target', { ...base, action_classes: { write_local: { outcome: 'downgrade' } } }],
    ['a target without a downgrade', { ...base, action_classes: { write_local: { outcome: 'allow', downgrade_to: { action_class: 'read_local' } } } }],
    ['a downgrade the kernel cannot perform', { ...base, action_classes: { payment: { outcome: 'downgrade', downgrade_to: { action_class: 'read_local' } } } }],
    ['a same-class downgrade without a restricted mode', { ...base, action_classes: { execute_command: { outcome: 'downgrade', downgrade_to: { action_class: 'execute_command' } } } }],
    ['an unknown action class', { ...base, action_classes: { teleport: { outcome: 'allow' } } }],
    ['a sacred glob reaching outside', { ...base, sacred_paths: ['../**'] }],
    ['an absolute secret glob', { ...base, secret_paths: ['/etc/**'] }],
    ['an unknown key', { ...base, allow_everything: true }],
    ['an uppercase id', { ...base, id: 'Local' }],
  ])('given %s, then POLICY_PROFILE_INVALID', (_note, input) => {
    let error: unknown;
    try {
      parsePolicyProfile(input);
    } catch (e) {
      error = e;
    }
    expect(hasErrorCode(error, 'POLICY_PROFILE_INVALID')).toBe(true);
  });

  it('given a frozen (built-in) profile, then it is compiled once; a prepared profile is returned as is and is immutable', () => {
    expect(Object.isFrozen(base.action_classes)).toBe(true);
    expect(preparePolicyProfile(base)).toBe(preparePolicyProfile(base));
    const prepared = preparePolicyProfile(base);
    expect(preparePolicyProfile(prepared)).toBe(prepared);
    expect(Object.isFrozen(prepared.profile.sacred_paths)).toBe(true);
  });

  it('given a mutable profile object changed after a first evaluation, then the change is seen (no stale cache)', () => {
    const mutable = JSON.parse(JSON.stringify(base)) as { action_classes: Record<string, unknown> };
    const req = request();
    expect(evaluatePolicy(req, mutable as PolicyProfile, { files_owned: ['src/**'] }).outcome).toBe('allow');
    mutable.action_classes.write_local = { outcome: 'deny' };
    expect(evaluatePolicy(req, mutable as PolicyProfile, { files_owned: ['src/**'] }).outcome).toBe('deny');
  });

  it('given an action class the profile does not mention, then deny by default', () => {
    const minimal = parsePolicyProfile({ ...base, action_classes: {} });
    expect(evaluatePolicy(request({ action_class: 'read_local', params: { path: 'src/a.ts' } }), minimal, { files_owned: ['src/**'] }).outcome).toBe('deny');
  });

  it('given files_owned reaching outside the workspace, then POLICY_FACTS_INVALID', () => {
    expect(codeOf(() => evaluatePolicy(request(), base, { files_owned: ['../**'] }))).toBe('POLICY_FACTS_INVALID');
    expect(codeOf(() => evaluatePolicy(request(), base, { files_owned: ['/**'] }))).toBe('POLICY_FACTS_INVALID');
    expect(codeOf(() => evaluatePolicy(request(), base, { files_owned: ['src/**'], workspace_root: 'work' }))).toBe('POLICY_FACTS_INVALID');
  });

  it('given no files_owned, then no write is allowed', () => {
    expect(evaluatePolicy(request(), base, { files_owned: [] }).outcome).toBe('deny');
  });
});

describe('classifyRisk (Hermit 16.2)', () => {
  const facts = { files_owned: ['src/**'] };
  it.each<[string, Parameters<typeof classifyRisk>[0], string]>([
    ['a read', request({ action_class: 'read_local', params: { path: 'src/a.ts' } }), 'low'],
    ['a write in scope', request(), 'moderate'],
    ['an irreversible write', request({ reversibility_hint: 'irreversible' }), 'high'],
    ['a write out of scope', request({ target_resources: ['lib/a.ts'], params: { path: 'lib/a.ts' } }), 'high'],
    ['a write to a secret', request({ target_resources: ['src/.env'], params: { path: 'src/.env' } }), 'critical'],
    ['an escape', request({ target_resources: ['../x'], params: { path: '../x' } }), 'critical'],
    ['a plain command', command(['npm', 'test']), 'moderate'],
    ['a destructive command', command(['git', 'reset', '--hard']), 'high'],
    ['rm -rf /', command(['rm', '-rf', '/']), 'critical'],
    ['a payment', request({ action_class: 'payment', target_resources: ['https://pay.example.com/'], params: {} }), 'critical'],
  ])('given %s, then %s', (_note, req, band) => {
    expect(classifyRisk(req, facts).band).toBe(band);
  });

  it('given any request, then the band is the highest factor', () => {
    const risk = classifyRisk(command(['rm', '-rf', 'lib']), facts);
    expect(risk.factors.map((f) => f.code)).toEqual(expect.arrayContaining(['action_class', 'destructive_command', 'outside_files_owned']));
  });
});

describe('evaluation → contracts', () => {
  const meta = { policy_result_id: 'pr-1', task_id: 'task-1', step_id: 'step-1', attempt_id: 'attempt-1', evaluated_at: '2030-01-01T00:00:00Z', evaluated_by: 'writ-policy' };

  it.each<[string, PolicyProfile, Parameters<typeof evaluatePolicy>[0]]>([
    ['allow', base, request()],
    ['deny', base, request({ target_resources: ['lib/a.ts'], params: { path: 'lib/a.ts' } })],
    ['require_approval', base, command(['rm', '-rf', 'src/build'])],
    ['downgrade', BUILTIN_POLICY_PROFILES.readonly_analysis, request()],
  ])('given a %s evaluation, then toPolicyResult yields a valid PolicyResult', (outcome, profile, req) => {
    const evaluation = evaluatePolicy(req, profile, { files_owned: ['src/**'] });
    expect(evaluation.outcome).toBe(outcome);
    const result = toPolicyResult(evaluation, req, meta);
    expect(PolicyResult.safeParse(result).success).toBe(true);
    expect(result).toMatchObject({ outcome, policy_version: profile.version, policy_profile_ref: `${profile.id}@${profile.version}` });
    if (outcome === 'require_approval') expect(result.approver_roles).toEqual(['director']);
    expect(toPolicyDecision(evaluation, 'pr-1')).toEqual({
      policy_result_id: 'pr-1',
      outcome,
      risk_band: evaluation.risk_band,
      profile_id: profile.id,
      policy_version: profile.version,
      witness_required: evaluation.witness_required,
    });
  });
});
