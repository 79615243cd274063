import { describe, expect, it } from 'vitest';
import { at } from '../../test/decider-spec.js';
import { claims } from '../../test/samples.js';
import { checkGrantUse, type GrantUse } from './grant-use.js';

const use = (overrides: Partial<GrantUse> = {}): GrantUse => ({
  task_id: 'task-1',
  attempt_id: 'attempt-1',
  action_class: 'write_local',
  resources: { paths: ['src/a.ts'] },
  now: at(10),
  ...overrides,
});

const scoped = (constraints: Record<string, unknown>, hosts: string[] = []) => {
  const base = claims();
  return { ...base, resource_scope: { ...base.resource_scope, hosts }, constraints: { ...base.constraints, ...constraints } };
};

const codeOf = (result: ReturnType<typeof checkGrantUse>) => (result.ok ? 'ok' : result.code);

describe('checkGrantUse: capability scope (egress hosts, secret handles, wall clock)', () => {
  it('given a grant naming a secret handle, when the use names it, then it is allowed', () => {
    expect(codeOf(checkGrantUse(scoped({ secret_handles: ['deploy_token'] }), use({ secret_handles: ['deploy_token'] }), 0))).toBe('ok');
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['a grant without secret handles', {}, ['deploy_token']],
    ['a grant naming another handle', { secret_handles: ['read_token'] }, ['deploy_token']],
    ['one granted and one not', { secret_handles: ['read_token'] }, ['read_token', 'deploy_token']],
    ['a case disguise', { secret_handles: ['deploy_token'] }, ['DEPLOY_TOKEN']],
  ])('given %s, when the use names a handle outside it, then GRANT_SECRET_OUT_OF_SCOPE', (_note, constraints, handles) => {
    expect(codeOf(checkGrantUse(scoped(constraints), use({ secret_handles: handles }), 0))).toBe('GRANT_SECRET_OUT_OF_SCOPE');
  });

  it('given a 1000 ms grant, when the use asks for 1000 ms or less, then it is allowed', () => {
    expect(codeOf(checkGrantUse(scoped({ timeout_ms: 1000 }), use({ wall_clock_ms: 1000 }), 0))).toBe('ok');
    expect(codeOf(checkGrantUse(scoped({ timeout_ms: 1000 }), use({ wall_clock_ms: 1 }), 0))).toBe('ok');
  });

  it.each<[string, Record<string, unknown>, number]>([
    ['more than the grant allows', { timeout_ms: 1000 }, 1001],
    ['zero', { timeout_ms: 1000 }, 0],
    ['a fraction', {}, 1.5],
    ['a negative number', {}, -1],
  ])('given a use asking %s, then GRANT_WALL_CLOCK_EXCEEDED', (_note, constraints, ms) => {
    expect(codeOf(checkGrantUse(scoped(constraints), use({ wall_clock_ms: ms }), 0))).toBe('GRANT_WALL_CLOCK_EXCEEDED');
  });

  it('given a grant with egress hosts, when the use reaches one of them, then it is allowed; another host or port is out of scope', () => {
    const grant = scoped({}, ['api.example.com', 'files.example.com:8443']);
    expect(codeOf(checkGrantUse(grant, use({ resources: { hosts: ['api.example.com'] } }), 0))).toBe('ok');
    expect(codeOf(checkGrantUse(grant, use({ resources: { hosts: ['files.example.com:8443'] } }), 0))).toBe('ok');
    expect(codeOf(checkGrantUse(grant, use({ resources: { hosts: ['evil.example.com'] } }), 0))).toBe('GRANT_OUT_OF_SCOPE');
    expect(codeOf(checkGrantUse(grant, use({ resources: { hosts: ['api.example.com:8080'] } }), 0))).toBe('GRANT_OUT_OF_SCOPE');
    expect(codeOf(checkGrantUse(grant, use({ resources: { hosts: ['api.example.com.evil.org'] } }), 0))).toBe('GRANT_OUT_OF_SCOPE');
  });

  it('given an exhausted grant and an out-of-scope secret, then the scope refusal comes first', () => {
    expect(codeOf(checkGrantUse(scoped({}), use({ secret_handles: ['x'] }), 5))).toBe('GRANT_SECRET_OUT_OF_SCOPE');
  });
});
