import { ActionClass, PolicyResult, type ActionRequest, type ParticipantStatus } from '@writ/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { at } from '../../test/decider-spec.js';
import { manifest, participantRequest } from '../../test/lineage-flow.js';
import { evaluatePolicy, toPolicyResult } from '../policy/evaluate-policy.js';
import { BUILTIN_POLICY_PROFILES, type PolicyProfile } from '../policy/policy-profile.js';
import { PARTICIPANT_SCOPE_ALLOWED, evaluateParticipantPolicy, participantScopeRef, type ParticipantPolicyFacts } from './participant-policy.js';
import { participantScope } from './participant-scope.js';

// The manifest of test/lineage-flow: fs read docs/**, write out/**; net api.example.com; shell ls, cat;
// providers anthropic; 20 calls; 3 600 s of wall clock from T0; expires T0 + 1 h.
const M = manifest();
const HASH = 'f'.repeat(64);
const scope = participantScope(M);

/** A profile that allows every class, anywhere, with any host: whatever is denied below, the manifest denied. */
const everything: PolicyProfile = {
  ...BUILTIN_POLICY_PROFILES.external_publish_gated,
  id: 'everything_allowed',
  action_classes: Object.fromEntries(ActionClass.options.map((cls) => [cls, { outcome: 'allow' }])),
  destructive_commands: 'require_approval',
  sacred_paths: [],
  secret_paths: [],
  ceilings: { ...BUILTIN_POLICY_PROFILES.external_publish_gated.ceilings, egress_hosts: ['*'] },
};

const facts = (overrides: Partial<ParticipantPolicyFacts> = {}): ParticipantPolicyFacts => ({
  scope,
  manifest_hash: HASH,
  status: 'active',
  now: at(10),
  usage: { calls: 0, tokens: 0 },
  ...overrides,
});
const TASK = { files_owned: ['**'] };

type Req = Pick<ActionRequest, 'action_class' | 'target_resources' | 'params'>;
const read = (path: string): Req => ({ action_class: 'read_local', target_resources: [path], params: { path } });
const write = (path: string): Req => ({ action_class: 'write_local', target_resources: [path], params: { path, content: 'x' } });
const get = (url: string): Req => ({ action_class: 'network_read', target_resources: [url], params: { url, method: 'GET' } });
const run = (...argv: string[]): Req => ({ action_class: 'execute_command', target_resources: ['docs/'], params: { argv } });

describe('evaluateParticipantPolicy: the manifest scope before the profile', () => {
  const table: { note: string; request: Req; profile?: PolicyProfile; context?: Partial<ParticipantPolicyFacts>; want: string; rule: string }[] = [
    { note: 'a read inside read:docs/**', request: read('docs/a.md'), want: 'allow', rule: PARTICIPANT_SCOPE_ALLOWED },
    { note: 'a read outside every fs glob', request: read('src/a.ts'), want: 'deny', rule: 'participant_path_denied' },
    { note: 'a write where the manifest grants only reading', request: write('docs/a.md'), want: 'deny', rule: 'participant_path_denied' },
    { note: 'a write under write:out/**', request: write('out/index.json'), want: 'allow', rule: PARTICIPANT_SCOPE_ALLOWED },
    { note: 'a GET of a host outside net', request: get('https://evil.example.net/'), want: 'deny', rule: 'participant_host_denied' },
    { note: 'a GET of the listed host', request: get('https://api.example.com/v1'), want: 'allow', rule: PARTICIPANT_SCOPE_ALLOWED },
    { note: 'a program outside shell', request: run('rm', '-rf', 'docs'), want: 'deny', rule: 'participant_command_denied' },
    { note: 'a listed program inside sh -c, sh not listed', request: run('sh', '-c', 'ls docs'), want: 'deny', rule: 'participant_command_denied' },
    { note: 'a listed program', request: run('ls', 'docs'), want: 'allow', rule: PARTICIPANT_SCOPE_ALLOWED },
    {
      note: 'a provider outside providers',
      request: { action_class: 'credentialed_api_call', target_resources: ['https://api.example.com/m'], params: { url: 'https://api.example.com/m', provider: 'openai' } },
      want: 'deny',
      rule: 'participant_provider_denied',
    },
    { note: 'a payment (never in a manifest)', request: { action_class: 'payment', target_resources: ['https://api.example.com/pay'], params: { url: 'https://api.example.com/pay' } }, want: 'deny', rule: 'participant_action_class_denied' },
    { note: 'the calls used up', request: read('docs/a.md'), context: { usage: { calls: 20, tokens: 0 } }, want: 'deny', rule: 'participant_limit_exceeded' },
    { note: 'the last call left', request: read('docs/a.md'), context: { usage: { calls: 19, tokens: 0 } }, want: 'allow', rule: PARTICIPANT_SCOPE_ALLOWED },
    { note: 'the wall clock spent (TTL still running)', request: read('docs/a.md'), context: { scope: participantScope(manifest({ resource_limits: { max_tokens: 1, max_calls: 20, max_wallclock_seconds: 5 } })) }, want: 'deny', rule: 'participant_limit_exceeded' },
    { note: 'a paused participant', request: read('docs/a.md'), context: { status: 'paused' }, want: 'deny', rule: 'participant_not_active' },
    { note: 'an active participant past its TTL', request: read('docs/a.md'), context: { now: at(3_600) }, want: 'deny', rule: 'participant_not_active' },
    { note: 'inside the scope, but the profile denies the class', request: get('https://api.example.com/v1'), profile: BUILTIN_POLICY_PROFILES.local_edit_allowed, want: 'deny', rule: 'action_class_denied' },
  ];

  it.each(table)('given $note, then $want ($rule)', ({ request, profile, context, want, rule }) => {
    const evaluation = evaluateParticipantPolicy(participantRequest(request), profile ?? everything, TASK, facts(context));
    expect(evaluation.outcome).toBe(want);
    expect(evaluation.matched_rules[0]).toBe(rule);
    expect(evaluation.participant.scope_ref).toBe(participantScopeRef('seed-1', HASH));
  });

  it('given a scope refusal where the profile would ask for approval, then deny with the participant code first and no approval or downgrade left', () => {
    const destructive = participantRequest(run('rm', '-rf', 'docs'));
    expect(evaluatePolicy(destructive, everything, TASK).outcome).toBe('require_approval');
    const evaluation = evaluateParticipantPolicy(destructive, everything, TASK, facts());
    expect(evaluation).toMatchObject({ outcome: 'deny', witness_required: false });
    expect(evaluation.approver_roles).toBeUndefined();
    expect(evaluation.reasons[0]).toMatchObject({ code: 'participant_command_denied', outcome: 'deny' });
    expect(evaluation.reasons[0]?.message).toContain(HASH);
  });

  it('given a downgrade, then it stands only inside the scope: outside it, deny and no rewritten request', () => {
    // network_write downgrades to network_read of the same URL under network_read_allowed.
    const post: Req = { action_class: 'network_write', target_resources: ['https://api.example.com/x'], params: { url: 'https://api.example.com/x', method: 'POST', body: '{}' } };
    const allowed = evaluateParticipantPolicy(participantRequest(post), BUILTIN_POLICY_PROFILES.network_read_allowed, TASK, facts());
    expect(allowed.outcome).toBe('downgrade');
    expect(allowed.downgrade?.action_request.action_class).toBe('network_read');
    const noNet = participantScope(manifest({ capabilities: { ...M.capabilities, net: [] } }));
    const denied = evaluateParticipantPolicy(participantRequest(post), BUILTIN_POLICY_PROFILES.network_read_allowed, TASK, facts({ scope: noNet }));
    expect(denied.outcome).toBe('deny');
    expect(denied.matched_rules[0]).toBe('participant_host_denied');
    expect(denied.downgrade).toBeUndefined();
  });

  it('given an admitted action, then the capability scope is narrowed to the manifest: egress to net, wall clock to what is left', () => {
    const evaluation = evaluateParticipantPolicy(participantRequest(get('https://api.example.com/v1')), everything, TASK, facts({ now: at(3_000) }));
    expect(evaluation.capability_scope.egress_hosts).toEqual(['api.example.com']);
    expect(evaluation.capability_scope.max_wall_clock_ms).toBe(600_000);
  });

  it('given the evaluation as a PolicyResult, then it names the scope version (participant_scope_ref) and the contract accepts it', () => {
    const evaluation = evaluateParticipantPolicy(participantRequest(read('src/a.ts')), everything, TASK, facts());
    const result = toPolicyResult(evaluation, participantRequest(read('src/a.ts')), {
      policy_result_id: 'pr-1',
      task_id: 'tsk-1',
      step_id: 'stp-1',
      attempt_id: 'att-1',
      evaluated_at: at(10),
      evaluated_by: 'writ-policy',
      participant_scope_ref: evaluation.participant.scope_ref,
    });
    expect(PolicyResult.parse(result)).toMatchObject({ outcome: 'deny', participant_scope_ref: `participant:seed-1@${HASH}`, matched_rules: ['participant_path_denied'] });
    expect(result.reasoning_summary.startsWith('participant_path_denied: ')).toBe(true);
  });

  it('given a principal that is not a participant, then evaluatePolicy alone decides exactly as before (no participant rule appears)', () => {
    const evaluation = evaluatePolicy(participantRequest(read('src/a.ts')), everything, TASK);
    expect(evaluation.outcome).toBe('allow');
    expect(evaluation.matched_rules).not.toContain(PARTICIPANT_SCOPE_ALLOWED);
  });
});

// ---- property: nothing outside the manifest is ever admitted ----------------------------------

const FS_OK = { read: ['docs/a.md', 'docs/x/y.md', 'out/r.json'], write: ['out/a.json', 'out/x/y.txt'] };
const FS_OUT = ['src/a.ts', 'docs2/a.md', '../etc/passwd', 'docs/../src/a.ts', '/etc/passwd', '~/x', 'outx/a', 'README.md'];
const HOSTS_OUT = ['evil.example.net', 'api.example.com.evil.net', 'example.com', 'x.api.example.com', 'api.example.com:8443'];
const PROGRAMS_OUT = ['rm', 'curl', 'python3', 'sh', 'bash', '/bin/ls', './ls', 'env'];

type Probe = { readonly request: Req; readonly outside: boolean; readonly what: string };

const path = (kind: 'read' | 'write') => fc.oneof(fc.constantFrom(...FS_OK[kind]).map((p) => ({ p, outside: false })), fc.constantFrom(...FS_OUT).map((p) => ({ p, outside: true })));
const host = fc.oneof(fc.constant({ h: 'api.example.com', outside: false }), fc.constantFrom(...HOSTS_OUT).map((h) => ({ h, outside: true })));
const program = fc.oneof(fc.constantFrom('ls', 'cat').map((p) => ({ p, outside: false })), fc.constantFrom(...PROGRAMS_OUT).map((p) => ({ p, outside: true })));

const probe: fc.Arbitrary<Probe> = fc.oneof(
  path('read').map(({ p, outside }) => ({ request: read(p), outside, what: `read ${p}` })),
  fc
    .tuple(path('write'), fc.constantFrom('write_local', 'delete_local'))
    .map(([{ p, outside }, cls]) => ({ request: cls === 'write_local' ? write(p) : { action_class: 'delete_local', target_resources: [p], params: { path: p } }, outside, what: `${cls} ${p}` }) as Probe),
  // Reads of the write area are inside; writes into the read-only area are outside.
  fc.constantFrom(...FS_OK.read.filter((p) => p.startsWith('docs/'))).map((p) => ({ request: write(p), outside: true, what: `write ${p} (read-only)` })),
  fc
    .tuple(host, fc.constantFrom('network_read', 'network_write'))
    .map(([{ h, outside }, cls]) => ({ request: { action_class: cls, target_resources: [`https://${h}/v1`], params: { url: `https://${h}/v1`, method: cls === 'network_read' ? 'GET' : 'POST' } }, outside, what: `${cls} ${h}` }) as Probe),
  fc
    .tuple(program, fc.boolean(), program)
    .map(([outer, wrapped, inner]) =>
      wrapped
        ? { request: run('sh', '-c', `${outer.p} docs; ${inner.p} docs/a.md`), outside: true, what: `sh -c '${outer.p}; ${inner.p}' (sh is not listed)` }
        : { request: run(outer.p, 'docs/a.md'), outside: outer.outside, what: `${outer.p} docs/a.md` },
    ),
  fc
    .tuple(fc.constantFrom('anthropic', 'openai', 'aws', '*'), host)
    .map(([provider, { h, outside }]) => ({
      request: { action_class: 'credentialed_api_call', target_resources: [`https://${h}/m`], params: { url: `https://${h}/m`, provider } },
      outside: outside || provider !== 'anthropic',
      what: `${provider} at ${h}`,
    }) as Probe),
  fc.constantFrom('payment', 'publication', 'memory_write', 'rollback').map((cls) => ({ request: { action_class: cls, target_resources: ['out/a.json'], params: { path: 'out/a.json' } }, outside: true, what: cls }) as Probe),
);

const profiles = fc.constantFrom<PolicyProfile>(everything, ...Object.values(BUILTIN_POLICY_PROFILES));
const status = fc.constantFrom<ParticipantStatus>('active', 'active', 'active', 'paused', 'retired', 'expired', 'failed');

describe('evaluateParticipantPolicy properties', () => {
  it('property: no action outside the manifest (capabilities, status, TTL, calls) is ever admitted, under any profile', () => {
    fc.assert(
      fc.property(probe, profiles, status, fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 4_000 }), (p, profile, st, calls, seconds) => {
        const request = participantRequest(p.request);
        const evaluation = evaluateParticipantPolicy(request, profile, TASK, facts({ status: st, usage: { calls, tokens: 0 }, now: at(seconds) }));
        const outside = p.outside || st !== 'active' || calls >= 20 || seconds >= 3_600;
        if (outside) {
          expect(evaluation.outcome, `${p.what} (${st}, ${calls} calls, t=${seconds}s) under ${profile.id}`).toBe('deny');
          expect(evaluation.matched_rules[0], p.what).toMatch(/^participant_/);
        }
        // Whatever the scope says, the participant never gets more than the profile gives.
        if (evaluatePolicy(request, profile, TASK).outcome === 'deny') expect(evaluation.outcome, p.what).toBe('deny');
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: an admitted action is one the scope checker allows, and its grant scope reaches no host outside net', () => {
    fc.assert(
      fc.property(probe, profiles, (p, profile) => {
        const evaluation = evaluateParticipantPolicy(participantRequest(p.request), profile, TASK, facts());
        if (evaluation.outcome === 'deny') return;
        expect(evaluation.participant.check.ok, p.what).toBe(true);
        expect(p.outside, p.what).toBe(false);
        for (const pattern of evaluation.capability_scope.egress_hosts) expect(pattern, p.what).toBe('api.example.com');
      }),
      { numRuns: 1_000 },
    );
  });
});
