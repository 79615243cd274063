import { hasErrorCode, type ActionRequest } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { checkGrantUse } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { buildGrantClaims, grantIdFor, resourceScopeOf, urlHost } from './grant-claims.js';
import { GRANT_TTL_CEILING_SECONDS, grantTtlFor } from './issue-grant.handler.js';

function request(overrides: Partial<ActionRequest>): ActionRequest {
  return {
    action_request_id: 'ar-1',
    task_id: 'task-1',
    action_class: 'execute_command',
    target_resources: ['src'],
    params: { argv: ['make'] },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'build',
    proposed_by: 'agent-1',
    proposed_at: '2030-01-01T00:00:00Z',
    ...overrides,
  };
}

const command = (req: ActionRequest, approvalId: string | null = 'apr-1') => ({
  task_id: 'task-1',
  step_id: 'step-1',
  attempt_id: 'att-1',
  action_request: req,
  policy_result_id: 'pr-1',
  approval_id: approvalId,
  issued_to: 'executor-1',
});

describe('resourceScopeOf', () => {
  const cases: Array<{ note: string; input: Partial<ActionRequest>; want: ReturnType<typeof resourceScopeOf> }> = [
    { note: 'paths from target_resources', input: { target_resources: ['src/build', 'docs'] }, want: { paths: ['src/build', 'docs'], hosts: [] } },
    {
      note: 'params.path is a path too',
      input: { action_class: 'write_local', target_resources: ['notes.md'], params: { path: 'out/notes.md', content: 'x' } },
      want: { paths: ['notes.md', 'out/notes.md'], hosts: [] },
    },
    {
      note: 'URLs give hosts (explicit ports kept), never paths',
      input: { action_class: 'network_read', target_resources: ['https://Example.org/a', 'http://api.example.org:8080/x'], params: { url: 'https://cdn.example.org/f' } },
      want: { paths: [], hosts: ['example.org', 'api.example.org:8080', 'cdn.example.org'] },
    },
    {
      note: 'repo resources become repo/ref constraints',
      input: { action_class: 'vcs_mutation', target_resources: ['repo:writ@refs/heads/writ/x', 'repo:writ@refs/heads/writ/y'], params: {} },
      want: { paths: [], hosts: [], repos: [{ repo: 'writ', refs: ['refs/heads/writ/x', 'refs/heads/writ/y'] }] },
    },
    { note: 'memory: and other schemes are not paths', input: { target_resources: ['memory:task', 'src'] }, want: { paths: ['src'], hosts: [] } },
    { note: 'cwd does not widen the scope', input: { target_resources: ['src/a'], params: { argv: ['ls'], cwd: '.' } }, want: { paths: ['src/a'], hosts: [] } },
  ];
  it.each(cases)('$note', ({ input, want }) => {
    expect(resourceScopeOf(request(input))).toEqual(want);
  });

  it('leaves out hosts a grant cannot name', () => {
    expect(urlHost('http://[::1]:8080/')).toBeUndefined();
    expect(urlHost('not a url')).toBeUndefined();
    expect(urlHost('https://user:secret@example.org/')).toBe('example.org');
  });
});

describe('grantIdFor', () => {
  it('is stable for a command and differs for a re-authorization', () => {
    const base = { attempt_id: 'att-1', policy_result_id: 'pr-1', approval_id: 'apr-1' };
    expect(grantIdFor(base)).toBe(grantIdFor({ ...base }));
    expect(grantIdFor(base)).toMatch(/^gnt-[0-9a-f]{32}$/);
    expect(grantIdFor({ ...base, policy_result_id: 'pr-2' })).not.toBe(grantIdFor(base));
    expect(grantIdFor({ ...base, approval_id: null })).not.toBe(grantIdFor(base));
  });
});

describe('buildGrantClaims', () => {
  it('binds one use to the attempt, class, scope, params and expiry', () => {
    // given an approved execute_command
    const req = request({ target_resources: ['src/build'] });
    // when the claims are built
    const claims = buildGrantClaims({ command: command(req), grantId: 'gnt-1', issuer: 'writ-approval', audience: 'writ-executor', issuedBy: 'director-1', nowSeconds: 1_900_000_000, ttlSeconds: 300 });
    // then they say exactly that
    expect(claims).toEqual({
      iss: 'writ-approval',
      sub: 'executor-1',
      aud: 'writ-executor',
      jti: 'gnt-1',
      iat: 1_900_000_000,
      exp: 1_900_000_300,
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: 'att-1',
      action_class: 'execute_command',
      resource_scope: { paths: ['src/build'], hosts: [] },
      max_uses: 1,
      issued_by_principal_id: 'director-1',
      approval_ref: 'approval:apr-1',
      policy_result_ref: 'policy_result:pr-1',
      constraints: { params_sha256: sha256Hex(canonicalJson(req.params)) },
    });
    // and the kernel's use check accepts the intended use once, and nothing outside the scope
    const use = { task_id: 'task-1', attempt_id: 'att-1', action_class: 'execute_command' as const, now: '2030-03-17T17:46:50Z' };
    expect(checkGrantUse(claims, { ...use, resources: { paths: ['src/build/out.o'] } }, 0)).toEqual({ ok: true, use_no: 1 });
    expect(checkGrantUse(claims, { ...use, resources: { paths: ['src/build/out.o'] } }, 1)).toMatchObject({ ok: false, code: 'GRANT_EXHAUSTED' });
    expect(checkGrantUse(claims, { ...use, resources: { paths: ['secrets'] } }, 0)).toMatchObject({ ok: false, code: 'GRANT_OUT_OF_SCOPE' });
    expect(checkGrantUse(claims, { ...use, resources: { hosts: ['example.org'] } }, 0)).toMatchObject({ ok: false, code: 'GRANT_OUT_OF_SCOPE' });
  });

  it('cites no approval for a direct allow', () => {
    const claims = buildGrantClaims({ command: command(request({}), null), grantId: 'gnt-1', issuer: 'writ-approval', audience: 'writ-executor', issuedBy: 'writ-policy', nowSeconds: 1, ttlSeconds: 300 });
    expect(claims.approval_ref).toBeUndefined();
    expect(claims.policy_result_ref).toBe('policy_result:pr-1');
  });

  it('refuses claims the contract refuses (CONTRACT_INVALID)', () => {
    const build = () => buildGrantClaims({ command: command(request({})), grantId: 'not an id', issuer: 'writ-approval', audience: 'writ-executor', issuedBy: 'd', nowSeconds: 1, ttlSeconds: 300 });
    expect(build).toThrow();
    try {
      build();
    } catch (error) {
      expect(hasErrorCode(error, 'CONTRACT_INVALID')).toBe(true);
    }
  });
});

describe('grantTtlFor', () => {
  it('given renewals, then each lives twice as long as the grant it renews, never past a day', () => {
    expect(grantTtlFor(300, undefined)).toBe(300);
    expect([1, 2, 3].map((n) => grantTtlFor(300, n))).toEqual([600, 1_200, 2_400]);
    expect(grantTtlFor(20 * 3600, 1)).toBe(GRANT_TTL_CEILING_SECONDS);
  });
});
