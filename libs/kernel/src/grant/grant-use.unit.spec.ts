import { describe, expect, it } from 'vitest';
import { at, codeOf } from '../../test/decider-spec.js';
import { claims } from '../../test/samples.js';
import { assertGrantUse, checkGrantUse, hostInScope, pathInScope, repoRefInScope, type GrantUse } from './grant-use.js';

const use = (overrides: Partial<GrantUse> = {}): GrantUse => ({
  task_id: 'task-1',
  attempt_id: 'attempt-1',
  action_class: 'write_local',
  resources: { paths: ['src/a.ts'] },
  now: at(10),
  ...overrides,
});

describe('checkGrantUse (Hermit 8.12, 16.6; DESIGN invariant 3)', () => {
  it('given a use inside the grant, then it is allowed as use 1', () => {
    expect(checkGrantUse(claims(), use(), 0)).toEqual({ ok: true, use_no: 1 });
  });

  it.each<[string, Partial<GrantUse>, number, string]>([
    ['expired (now = exp)', { now: at(300) }, 0, 'GRANT_EXPIRED'],
    ['expired (long after)', { now: at(10_000) }, 0, 'GRANT_EXPIRED'],
    ['another task', { task_id: 'task-2' }, 0, 'GRANT_WRONG_TASK'],
    ['another attempt of the same task', { attempt_id: 'attempt-2' }, 0, 'GRANT_WRONG_ATTEMPT'],
    ['another action class', { action_class: 'delete_local' }, 0, 'GRANT_WRONG_ACTION_CLASS'],
    ['a path outside the scope', { resources: { paths: ['lib/a.ts'] } }, 0, 'GRANT_OUT_OF_SCOPE'],
    ['a sibling sharing the prefix', { resources: { paths: ['src2/a.ts'] } }, 0, 'GRANT_OUT_OF_SCOPE'],
    ['a .. escape', { resources: { paths: ['src/../../etc/passwd'] } }, 0, 'GRANT_OUT_OF_SCOPE'],
    ['a .. back out of the scope', { resources: { paths: ['src/../lib/a.ts'] } }, 0, 'GRANT_OUT_OF_SCOPE'],
    ['an absolute path', { resources: { paths: ['/src/a.ts'] } }, 0, 'GRANT_OUT_OF_SCOPE'],
    ['a home path', { resources: { paths: ['~/src/a.ts'] } }, 0, 'GRANT_OUT_OF_SCOPE'],
    ['a backslash disguise', { resources: { paths: ['src\\..\\..\\etc'] } }, 0, 'GRANT_OUT_OF_SCOPE'],
    ['a host when the grant has no network', { resources: { hosts: ['example.com'] } }, 0, 'GRANT_OUT_OF_SCOPE'],
    ['exhausted', {}, 1, 'GRANT_EXHAUSTED'],
  ])('given %s, then %s', (_note, overrides, consumed, code) => {
    const result = checkGrantUse(claims(), use(overrides), consumed);
    expect(result.ok ? 'ok' : result.code).toBe(code);
  });

  it('given nbf in the future, then GRANT_NOT_YET_VALID', () => {
    const c = claims({ nbf: claims().iat + 60 });
    const result = checkGrantUse(c, use({ now: at(30) }), 0);
    expect(result.ok ? 'ok' : result.code).toBe('GRANT_NOT_YET_VALID');
  });

  it('given max_uses 3 and 2 consumed, then the use is number 3', () => {
    expect(checkGrantUse(claims({ max_uses: 3 }), use(), 2)).toEqual({ ok: true, use_no: 3 });
  });

  it('given a refusal, then assertGrantUse throws the refusal code', () => {
    expect(codeOf(() => assertGrantUse(claims(), use({ attempt_id: 'attempt-9' }), 0))).toBe('GRANT_WRONG_ATTEMPT');
    expect(assertGrantUse(claims(), use(), 0)).toBe(1);
  });
});

describe('scope matchers', () => {
  it.each([
    [['src'], 'src', true],
    [['src'], 'src/a/b.ts', true],
    [['src'], './src/./a.ts', true],
    [['src'], 'src2', false],
    [['src/'], 'src/a', true],
    [['workspace/**'], 'workspace/a/b', true],
    [['workspace/*.ts'], 'workspace/a.ts', true],
    [['workspace/*.ts'], 'workspace/d/a.ts', false],
    [['src'], 'src/link/../../etc', false],
    [['/'], 'etc/passwd', false],
    [['..'], 'x', false],
    [['.'], 'anything/at/all', true],
  ])('given path scopes %j, then %j in scope: %s', (scopes, path, want) => {
    expect(pathInScope(scopes, path)).toBe(want);
  });

  it.each([
    [['api.example.com'], 'api.example.com', true],
    [['api.example.com'], 'API.Example.COM', true],
    [['api.example.com'], 'api.example.com.evil.io', false],
    [['api.example.com'], 'evilapi.example.com', false],
    [['api.example.com'], 'api.example.com:8443', false],
    [['api.example.com:8443'], 'api.example.com:8443', true],
    [['api.example.com:8443'], 'api.example.com', false],
    [['*.example.com'], 'a.example.com', true],
    [['*.example.com'], 'a.b.example.com', true],
    [['*.example.com'], 'example.com', false],
    [['*.example.com'], 'badexample.com', false],
    [['*.example.com'], '.example.com', false],
    [['example.com'], 'example.com.', false],
    [['example.com'], 'user@example.com', false],
  ])('given hosts %j, then %j in scope: %s', (patterns, host, want) => {
    expect(hostInScope(patterns, host)).toBe(want);
  });

  it('given repo scopes, then the repo is exact and refs match anchored globs', () => {
    const repos = [{ repo: 'github.com/acme/app', refs: ['refs/heads/writ/*'] }];
    expect(repoRefInScope(repos, { repo: 'github.com/acme/app', ref: 'refs/heads/writ/fix-1' })).toBe(true);
    expect(repoRefInScope(repos, { repo: 'github.com/acme/app', ref: 'refs/heads/main' })).toBe(false);
    expect(repoRefInScope(repos, { repo: 'github.com/acme/app', ref: 'refs/heads/writ/../main' })).toBe(false);
    expect(repoRefInScope(repos, { repo: 'github.com/acme/app-fork', ref: 'refs/heads/writ/x' })).toBe(false);
  });
});
