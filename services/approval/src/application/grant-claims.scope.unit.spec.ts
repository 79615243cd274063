import type { ActionRequest, PolicyCapabilityScope } from '@writ/contracts';
import { checkGrantUse } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { buildGrantClaims, requestedSecretHandles } from './grant-claims.js';

function request(overrides: Partial<ActionRequest>): ActionRequest {
  return {
    action_request_id: 'ar-1',
    task_id: 'task-1',
    action_class: 'execute_command',
    target_resources: ['src', 'http://allowed.test:8080/x', 'https://denied.test/'],
    params: { argv: ['make'], secret_handles: ['deploy_token', 'other_token'], timeout_ms: 5_000 },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'build',
    proposed_by: 'agent-1',
    proposed_at: '2030-01-01T00:00:00Z',
    ...overrides,
  };
}

const SCOPE: PolicyCapabilityScope = { write_paths: ['src/**'], egress_hosts: ['allowed.test:8080'], secret_handles: ['deploy_token'], max_wall_clock_ms: 60_000 };

const claimsFor = (req: ActionRequest, scope?: PolicyCapabilityScope) =>
  buildGrantClaims({
    command: { task_id: 'task-1', step_id: 'step-1', attempt_id: 'att-1', action_request: req, policy_result_id: 'pr-1', approval_id: null, issued_to: 'executor-1' },
    grantId: 'gnt-1',
    issuer: 'writ-approval',
    audience: 'writ-executor',
    issuedBy: 'writ-policy',
    nowSeconds: 1_900_000_000,
    ttlSeconds: 300,
    ...(scope === undefined ? {} : { scope }),
  });

const now = '2030-03-17T17:47:00.000Z';

describe('buildGrantClaims with the policy capability scope (policy → approval → executor)', () => {
  it('given a scope, then egress = the request hosts inside it, secrets = the named handles inside it, the wall clock = the shorter of the two', () => {
    const claims = claimsFor(request({}), SCOPE);
    expect(claims.resource_scope.hosts).toEqual(['allowed.test:8080']);
    expect(claims.constraints?.secret_handles).toEqual(['deploy_token']);
    expect(claims.constraints?.timeout_ms).toBe(5_000);
  });

  it('given a request without a timeout, then the grant encodes the ceiling', () => {
    const req = request({ params: { argv: ['make'] } });
    expect(claimsFor(req, SCOPE).constraints?.timeout_ms).toBe(60_000);
  });

  it('given the policy pattern "*", then the grant lists the concrete hosts, never "*"', () => {
    const claims = claimsFor(request({}), { ...SCOPE, egress_hosts: ['*'] });
    expect(claims.resource_scope.hosts).toEqual(['allowed.test:8080', 'denied.test']);
  });

  it('given no scope (an older evaluation), then no secret handle and no wall clock are granted', () => {
    const claims = claimsFor(request({}));
    expect(claims.constraints?.secret_handles).toBeUndefined();
    expect(claims.constraints?.timeout_ms).toBeUndefined();
  });

  it('given the claims, when the executor checks uses against them, then out-of-scope egress, secrets and wall clock are refused', () => {
    const claims = claimsFor(request({}), SCOPE);
    const use = (extra: Record<string, unknown>) => ({ task_id: 'task-1', attempt_id: 'att-1', action_class: 'execute_command' as const, resources: { paths: ['src'] }, now, ...extra });
    const check = (extra: Record<string, unknown>) => {
      const result = checkGrantUse(claims, use(extra), 0);
      return result.ok ? 'ok' : result.code;
    };
    expect(claims.exp).toBeGreaterThan(Date.parse(now) / 1000);
    expect(check({ resources: { paths: ['src'], hosts: ['allowed.test:8080'] }, secret_handles: ['deploy_token'], wall_clock_ms: 5_000 })).toBe('ok');
    expect(check({ resources: { paths: ['src'], hosts: ['denied.test'] } })).toBe('GRANT_OUT_OF_SCOPE');
    expect(check({ secret_handles: ['other_token'] })).toBe('GRANT_SECRET_OUT_OF_SCOPE');
    expect(check({ wall_clock_ms: 5_001 })).toBe('GRANT_WALL_CLOCK_EXCEEDED');
  });

  it('reads the handles a request names as the policy kernel does (strings only, deduplicated)', () => {
    expect(requestedSecretHandles({ secret_handle: 'a', secret_handles: ['b', 'a', 3] })).toEqual(['a', 'b']);
    expect(requestedSecretHandles({ secret_handle: 7 })).toEqual([]);
  });
});
