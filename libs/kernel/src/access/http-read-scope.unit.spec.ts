import { describe, expect, it } from 'vitest';
import { httpReadScope, mayRead } from './http-read-scope.js';

describe('httpReadScope', () => {
  it('given a director, operator or observer user or service, when scoped, then it reads all', () => {
    for (const role of ['director', 'operator', 'observer']) {
      expect(httpReadScope({ principal_id: 'p', principal_type: 'user', roles: [role] })).toEqual({ kind: 'all' });
      expect(httpReadScope({ principal_id: 'p', principal_type: 'service', roles: ['guest', role] })).toEqual({ kind: 'all' });
    }
  });

  it('given an agent, even one holding observer or director, when scoped, then it reads its own only', () => {
    expect(httpReadScope({ principal_id: 'a', principal_type: 'agent', roles: ['executor'] })).toEqual({ kind: 'own', principalId: 'a' });
    expect(httpReadScope({ principal_id: 'a', principal_type: 'agent', roles: ['observer', 'director'] })).toEqual({ kind: 'own', principalId: 'a' });
  });

  it('given a user with only executor or guest, when scoped, then it reads its own only', () => {
    expect(httpReadScope({ principal_id: 'u', principal_type: 'user', roles: ['executor', 'guest'] })).toEqual({ kind: 'own', principalId: 'u' });
  });
});

describe('mayRead', () => {
  it('given scope all, then anything (an unknown owner too) is readable', () => {
    expect(mayRead({ kind: 'all' }, 'b')).toBe(true);
    expect(mayRead({ kind: 'all' }, null)).toBe(true);
  });

  it('given an own scope, then only its own owner is readable, never an unknown one', () => {
    const scope = { kind: 'own', principalId: 'a' } as const;
    expect(mayRead(scope, 'a')).toBe(true);
    expect(mayRead(scope, 'b')).toBe(false);
    expect(mayRead(scope, null)).toBe(false);
    expect(mayRead(scope, undefined)).toBe(false);
  });
});
