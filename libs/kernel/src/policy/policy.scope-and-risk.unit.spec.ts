import { describe, expect, it } from 'vitest';
import { command, request } from '../../test/samples.js';
import { classifyRisk } from './classify-risk.js';
import { evaluatePolicy } from './evaluate-policy.js';
import { BUILTIN_POLICY_DOCUMENTS, BUILTIN_POLICY_PROFILES, versionPolicyProfile } from './policy-profile.js';

const facts = { files_owned: ['src/**', 'drafts/**'], workspace_root: '/work/main' };

describe('capability scope on the evaluation (what a grant may encode)', () => {
  const profile = versionPolicyProfile(
    { ...BUILTIN_POLICY_DOCUMENTS.external_publish_gated, ceilings: { egress_hosts: ['*.example.com', 'api.stripe.com'], secret_handles: ['stripe_key', 'github_token'], max_wall_clock_ms: 600_000 } },
    'v1',
  );

  it('given no narrowing facts, then the scope is files_owned and the profile ceilings', () => {
    expect(evaluatePolicy(request(), profile, facts).capability_scope).toEqual({
      write_paths: ['src/**', 'drafts/**'],
      egress_hosts: ['*.example.com', 'api.stripe.com'],
      secret_handles: ['stripe_key', 'github_token'],
      max_wall_clock_ms: 600_000,
    });
  });

  it('given narrowing facts, then the scope is the intersection, never wider than the profile', () => {
    const scope = evaluatePolicy(request(), profile, { ...facts, egress_hosts: ['api.example.com', 'evil.test', '*'], secret_handles: ['github_token', 'aws_root'], max_wall_clock_ms: 3_600_000 }).capability_scope;
    expect(scope.egress_hosts).toEqual(expect.arrayContaining(['*.example.com', 'api.stripe.com', 'api.example.com']));
    expect(scope.egress_hosts).not.toContain('evil.test');
    expect(scope.egress_hosts).not.toContain('*');
    expect(scope.secret_handles).toEqual(['github_token']);
    expect(scope.max_wall_clock_ms).toBe(600_000);
  });

  it('given a profile without egress, then the scope has no hosts whatever the facts ask', () => {
    expect(evaluatePolicy(request(), BUILTIN_POLICY_PROFILES.local_edit_allowed, { ...facts, egress_hosts: ['*'] }).capability_scope.egress_hosts).toEqual([]);
  });
});

describe('publish → draft (Hermit 11.4)', () => {
  const url = 'https://blog.example.com/posts';
  const publication = request({
    action_class: 'publication',
    target_resources: [url],
    params: { url, method: 'POST', body: '# v1.2', headers: { authorization: 'Bearer abc' }, secret_handle: 'blog_token' },
  });

  it('given local_edit_allowed, then the publication becomes a write_local of a draft under drafts/, in external_effects_disabled mode, without headers or handles', () => {
    const result = evaluatePolicy(publication, BUILTIN_POLICY_PROFILES.local_edit_allowed, facts);
    expect(result.outcome).toBe('downgrade');
    expect(result.downgrade?.restricted_mode).toBe('external_effects_disabled');
    const rewritten = result.downgrade?.action_request;
    expect(rewritten).toMatchObject({ action_class: 'write_local', action_request_id: 'ar-1-dg', target_resources: ['drafts/ar-1-dg.publication.json'], params: { path: 'drafts/ar-1-dg.publication.json' } });
    const draft = JSON.parse(String(rewritten?.params.content)) as Record<string, unknown>;
    expect(draft).toMatchObject({ draft_of: 'publication', action_request_id: 'ar-1', params: { url, method: 'POST', body: '# v1.2' } });
    expect(JSON.stringify(draft)).not.toContain('Bearer');
    expect(JSON.stringify(draft)).not.toContain('blog_token');
  });

  it('given a rewritten id in the facts, then the draft is named after it', () => {
    const result = evaluatePolicy(publication, BUILTIN_POLICY_PROFILES.local_edit_allowed, { ...facts, rewritten_action_request_id: 'ar-9' });
    expect(result.downgrade?.action_request.params.path).toBe('drafts/ar-9.publication.json');
  });
});

describe('risk factors (Hermit 16.2), each explicit', () => {
  const codes = (req: Parameters<typeof classifyRisk>[0], extra = {}) => classifyRisk(req, { ...facts, ...extra }).factors.map((factor) => factor.code);

  it.each<[string, Parameters<typeof classifyRisk>[0], string, string]>([
    ['action class', request({ action_class: 'read_local', params: { path: 'src/a.ts' } }), 'action_class', 'low'],
    ['resource sensitivity (read)', request({ action_class: 'read_local', target_resources: ['package.json'], params: { path: 'package.json' } }), 'sensitive_path', 'high'],
    ['resource sensitivity (write)', request({ target_resources: ['src/package.json'], params: { path: 'src/package.json', content: '{}' } }), 'sensitive_path', 'critical'],
    ['credential use (class)', request({ action_class: 'credentialed_api_call', target_resources: ['https://api.example.com/'], params: { url: 'https://api.example.com/' } }), 'credential_use', 'high'],
    ['credential use (handle)', request({ action_class: 'network_read', target_resources: ['https://api.example.com/'], params: { url: 'https://api.example.com/', secret_handle: 'k' } }), 'credential_use', 'high'],
    ['reversibility (irreversible)', request({ reversibility_hint: 'irreversible' }), 'irreversible', 'high'],
    ['reversibility (unknown)', request({ action_class: 'read_local', params: { path: 'src/a.ts' }, reversibility_hint: 'unknown' }), 'reversibility_unknown', 'moderate'],
    ['blast radius (whole tree)', request({ action_class: 'delete_local', target_resources: ['.'], params: { path: '.' } }), 'broad_target', 'critical'],
    ['blast radius (many targets)', request({ target_resources: Array.from({ length: 12 }, (_, i) => `src/f${i}.ts`), params: { content: 'x' } }), 'many_targets', 'high'],
    ['blast radius (recursive copy)', command(['cp', '-r', 'src/a', 'src/b']), 'recursive_operation', 'moderate'],
    ['blast radius (pattern target)', command(['sh', '-c', 'rm -f src/build/x?.o']), 'pattern_target', 'high'],
    ['target uncertainty (unplaceable)', command(['sh', '-c', 'cd src && touch x']), 'unplaceable_target', 'high'],
    ['target uncertainty (unknown host)', request({ action_class: 'network_read', target_resources: ['ftp://files.example.com/x'], params: { url: 'https://example.com/' } }), 'unknown_host', 'high'],
    ['target uncertainty (escape)', request({ target_resources: ['../x'], params: { path: '../x', content: 'x' } }), 'path_escape', 'critical'],
    ['scope (outside files_owned)', request({ target_resources: ['lib/a.ts'], params: { path: 'lib/a.ts', content: 'x' } }), 'outside_files_owned', 'high'],
    ['destructive command', command(['git', 'reset', '--hard']), 'destructive_command', 'high'],
  ])('given %s, then the factor is present with its band', (_note, req, code, band) => {
    const factor = classifyRisk(req, facts).factors.find((f) => f.code === code);
    expect(factor?.band).toBe(band);
  });

  it('given a plain write inside files_owned, then only the action class counts', () => {
    expect(codes(request())).toEqual(['action_class']);
  });
});
