import { PolicyResult, hasErrorCode } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { codeOf } from '../../test/decider-spec.js';
import { command, request } from '../../test/samples.js';
import { classifyRisk } from './classify-risk.js';
import { evaluatePolicy, toPolicyDecision, toPolicyResult } from './evaluate-policy.js';
import {
  BUILTIN_POLICY_DOCUMENTS,
  BUILTIN_POLICY_PROFILES,
  PolicyProfileDocument,
  builtinPolicyProfile,
  parsePolicyDocument,
  parsePolicyProfile,
  preparePolicyProfile,
  versionPolicyProfile,
  type PolicyDocumentIssue,
  type PolicyProfile,
} from './policy-profile.js';
import { DEFAULT_SACRED_PATHS, DEFAULT_SECRET_PATHS } from './sacred-scopes.js';

const base: PolicyProfile = BUILTIN_POLICY_PROFILES.local_edit_allowed;
const BUILTIN_IDS = ['readonly_analysis', 'local_edit_allowed', 'network_read_allowed', 'repo_mutation_gated', 'external_publish_gated', 'destructive_denied'];

function issuesOf(run: () => unknown): PolicyDocumentIssue[] {
  try {
    run();
  } catch (error) {
    expect(hasErrorCode(error, 'POLICY_PROFILE_INVALID')).toBe(true);
    return (error as { details: { issues: PolicyDocumentIssue[] } }).details.issues;
  }
  throw new Error('expected POLICY_PROFILE_INVALID');
}

describe('policy documents: profiles as data, versioned by content', () => {
  it('given the six built-ins of Hermit 16.3, then each is a valid document with a plain description, and a profile versioned builtin:<id>', () => {
    expect(Object.keys(BUILTIN_POLICY_DOCUMENTS).sort()).toEqual([...BUILTIN_IDS].sort());
    for (const id of BUILTIN_IDS) {
      const document = BUILTIN_POLICY_DOCUMENTS[id as keyof typeof BUILTIN_POLICY_DOCUMENTS];
      expect(document.id).toBe(id);
      expect(document).not.toHaveProperty('version');
      expect(parsePolicyDocument(document)).toEqual(document);
      expect(document.description.length).toBeGreaterThan(40);
      expect(Object.isFrozen(document.action_classes)).toBe(true);
      expect(builtinPolicyProfile(id)).toMatchObject({ id, version: `builtin:${id}` });
      expect(() => parsePolicyProfile(builtinPolicyProfile(id))).not.toThrow();
    }
  });

  it('given a minimal document, then the defaults are filled in: seed 003 sacred and secret paths, no exceptions, no egress, no handles, 15 minutes', () => {
    const document = parsePolicyDocument({ id: 'minimal', description: 'Reads only.', action_classes: { read_local: { outcome: 'allow' } }, destructive_commands: 'deny' });
    expect(document).toMatchObject({
      files_owned: 'enforce',
      sacred_paths: [...DEFAULT_SACRED_PATHS],
      secret_paths: [...DEFAULT_SECRET_PATHS],
      sacred_exceptions: [],
      ceilings: { egress_hosts: [], secret_handles: [], max_wall_clock_ms: 900_000 },
      approval: { expires_in_seconds: 3_600 },
    });
  });

  it('given a document that carries a version, then it is rejected with a message saying the version is derived from the content', () => {
    const issues = issuesOf(() => parsePolicyDocument({ ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed, version: '2' }));
    expect(issues).toEqual([{ path: 'version', message: expect.stringMatching(/derived from the content/) }]);
    expect(PolicyProfileDocument.safeParse({ ...BUILTIN_POLICY_DOCUMENTS.local_edit_allowed, version: '2' }).error?.issues[0]?.message).toMatch(/derived from the content/);
  });

  it('given a document with several mistakes, then POLICY_PROFILE_INVALID lists every one of them, each with its path', () => {
    const issues = issuesOf(() =>
      parsePolicyDocument({
        id: 'Bad Id',
        version: '1',
        description: 'Several mistakes at once.',
        action_classes: {
          write_local: { outcome: 'downgrade' },
          payment: { outcome: 'downgrade', downgrade_to: { action_class: 'read_local' } },
          network_write: { outcome: 'downgrade', downgrade_to: { action_class: 'network_read', draft_dir: 'drafts' } },
          execute_command: { outcome: 'maybe' },
          teleport: { outcome: 'allow' },
        },
        destructive_commands: 'sometimes',
        sacred_paths: ['../outside/**'],
        sacred_exceptions: ['/etc/**'],
        ceilings: { egress_hosts: ['https://example.com'], secret_handles: ['STRIPE KEY'], max_wall_clock_ms: 0 },
        approval: { expires_in_seconds: 5 },
        allow_everything: true,
      }),
    );
    expect(new Set(issues.map((issue) => issue.path))).toEqual(
      new Set([
        'id',
        'version',
        'allow_everything',
        'action_classes.write_local.downgrade_to',
        'action_classes.payment.downgrade_to',
        'action_classes.network_write.downgrade_to',
        'action_classes.execute_command.outcome',
        'action_classes.teleport',
        'destructive_commands',
        'sacred_paths.0',
        'sacred_exceptions.0',
        'ceilings.egress_hosts.0',
        'ceilings.secret_handles.0',
        'ceilings.max_wall_clock_ms',
        'approval.expires_in_seconds',
      ]),
    );
    for (const issue of issues) expect(issue.message.length).toBeGreaterThan(0);
  });

  it('given the error message of an invalid document, then it names every offending path', () => {
    let message = '';
    try {
      parsePolicyDocument({ id: 'x', description: 'd', action_classes: {}, destructive_commands: 'no', files_owned: 'maybe' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('destructive_commands');
    expect(message).toContain('files_owned');
  });

  it('given versionPolicyProfile, then the profile is the document plus the version, validated and deeply frozen', () => {
    const profile = versionPolicyProfile(BUILTIN_POLICY_DOCUMENTS.network_read_allowed, 'sha256:' + 'a'.repeat(64));
    expect(profile).toEqual({ ...BUILTIN_POLICY_DOCUMENTS.network_read_allowed, version: 'sha256:' + 'a'.repeat(64) });
    expect(Object.isFrozen(profile)).toBe(true);
    expect(Object.isFrozen(profile.ceilings.egress_hosts)).toBe(true);
    expect(preparePolicyProfile(profile)).toBe(preparePolicyProfile(profile));
    expect(issuesOf(() => versionPolicyProfile(BUILTIN_POLICY_DOCUMENTS.network_read_allowed, '')).map((i) => i.path)).toEqual(['version']);
    expect(issuesOf(() => versionPolicyProfile({ ...BUILTIN_POLICY_DOCUMENTS.network_read_allowed, id: 'NO' }, 'v1')).map((i) => i.path)).toEqual(['id']);
  });

  it('given a publication downgrade, then only publication → write_local may name a draft_dir, and the draft_dir has no wildcards', () => {
    const doc = (rule: unknown) => ({ id: 'p', description: 'd', action_classes: { publication: rule }, destructive_commands: 'deny' });
    expect(() => parsePolicyDocument(doc({ outcome: 'downgrade', downgrade_to: { action_class: 'write_local', draft_dir: 'out/drafts' } }))).not.toThrow();
    expect(() => parsePolicyDocument(doc({ outcome: 'downgrade', downgrade_to: { action_class: 'publication', restricted_mode: 'external_effects_disabled' } }))).not.toThrow();
    expect(issuesOf(() => parsePolicyDocument(doc({ outcome: 'downgrade', downgrade_to: { action_class: 'write_local', draft_dir: 'out/*' } }))).map((i) => i.path)).toEqual([
      'action_classes.publication.downgrade_to.draft_dir',
    ]);
  });
});

describe('policy profiles as data', () => {
  it('given the built-ins, then each parses and is reachable by id', () => {
    for (const id of BUILTIN_IDS) {
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
