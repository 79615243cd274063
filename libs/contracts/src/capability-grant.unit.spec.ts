import { describe, expect, it } from 'vitest';
import { capabilityGrantClaims as claims } from '../test/samples.js';
import { issuesOf, pathsOf } from '../test/issues.js';
import { hasErrorCode, parseCapabilityGrantClaims, safeParseCapabilityGrantClaims } from './index.js';

describe('CapabilityGrantClaims', () => {
  it('given valid claims, when parsed, then they are accepted', () => {
    expect(parseCapabilityGrantClaims(claims)).toEqual(claims);
  });

  it('given an unknown claim, when parsed, then it is rejected (a grant carries nothing unvetted)', () => {
    expect(issuesOf('CapabilityGrantClaims', { ...claims, admin: true })).toEqual([{ path: '', code: 'unrecognized_keys' }]);
  });

  it('given dates that are not whole NumericDate seconds, when parsed, then each is an offending path', () => {
    const input = { ...claims, iat: 1.5, nbf: -1, exp: '2026-01-01T00:00:00Z' };
    expect(pathsOf('CapabilityGrantClaims', input)).toEqual(['exp', 'iat', 'nbf']);
  });

  describe('lifetime', () => {
    it.each([
      { note: 'exp equal to iat', patch: { exp: claims.iat, nbf: undefined }, want: [{ path: 'exp', code: 'custom' }] },
      { note: 'exp before iat', patch: { exp: claims.iat - 1, nbf: undefined }, want: [{ path: 'exp', code: 'custom' }] },
      { note: 'nbf before iat', patch: { nbf: claims.iat - 1 }, want: [{ path: 'nbf', code: 'custom' }] },
      { note: 'nbf at exp', patch: { nbf: claims.exp }, want: [{ path: 'nbf', code: 'custom' }] },
    ])('given $note, when parsed, then it is rejected', ({ patch, want }) => {
      expect(issuesOf('CapabilityGrantClaims', { ...claims, ...patch })).toEqual(want);
    });
  });

  describe('resource scope', () => {
    it.each([
      ['a URL instead of a host', 'https://example.com', 'resource_scope.hosts.0'],
      ['a host with a path', 'example.com/x', 'resource_scope.hosts.0'],
      ['a bare wildcard', '*', 'resource_scope.hosts.0'],
      ['a mid-label wildcard', 'ex*.com', 'resource_scope.hosts.0'],
    ])('given %s in hosts, when parsed, then it is rejected', (_note, host, want) => {
      const input = { ...claims, resource_scope: { ...claims.resource_scope, hosts: [host] } };
      expect(pathsOf('CapabilityGrantClaims', input)).toEqual([want]);
    });

    it.each(['api.example.com', '*.example.com', 'registry.npmjs.org:443', '10.0.0.1'])('given host %s, when parsed, then it is accepted', (host) => {
      const input = { ...claims, resource_scope: { ...claims.resource_scope, hosts: [host] } };
      expect(issuesOf('CapabilityGrantClaims', input)).toEqual([]);
    });

    it('given a vcs_mutation grant without repos, when parsed, then resource_scope.repos is the offending path', () => {
      expect(issuesOf('CapabilityGrantClaims', { ...claims, action_class: 'vcs_mutation' })).toEqual([
        { path: 'resource_scope.repos', code: 'custom' },
      ]);
    });

    it('given a vcs_mutation grant with repos and ref patterns, when parsed, then it is accepted', () => {
      const resource_scope = { paths: ['repo/**'], hosts: ['github.com'], repos: [{ repo: 'git@github.com:writ/writ.git', refs: ['refs/heads/writ/*'] }] };
      expect(issuesOf('CapabilityGrantClaims', { ...claims, action_class: 'vcs_mutation', resource_scope })).toEqual([]);
    });

    it('given max_uses of zero, when parsed, then max_uses is the offending path', () => {
      const result = safeParseCapabilityGrantClaims({ ...claims, max_uses: 0 });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(hasErrorCode(result.error, 'CONTRACT_INVALID')).toBe(true);
        expect(result.error.issues.map((issue) => issue.path)).toEqual(['max_uses']);
      }
    });
  });
});
