import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EgressHostPattern, egressAllowed, intersectEgress, urlHost } from './egress.js';

describe('egress ceilings', () => {
  it.each([
    ['https://api.example.com/v1', 'api.example.com'],
    ['https://API.Example.COM/', 'api.example.com'],
    ['https://api.example.com:443/', 'api.example.com'],
    ['https://api.example.com:8443/', 'api.example.com:8443'],
    ['http://good.example.com@evil.test/', 'evil.test'],
    ['https://10.0.0.1/', '10.0.0.1'],
    ['ftp://files.example.com/', undefined],
    ['file:///etc/passwd', undefined],
    ['not a url', undefined],
  ])('given %s, then the host is %s', (url, host) => {
    expect(urlHost(url)).toBe(host);
  });

  it.each([
    [['*'], 'anything.test:8080', true],
    [['api.example.com'], 'api.example.com', true],
    [['api.example.com'], 'api.example.com:8443', false],
    [['api.example.com:8443'], 'api.example.com:8443', true],
    [['*.example.com'], 'a.b.example.com', true],
    [['*.example.com'], 'example.com', false],
    [['*.example.com'], 'evilexample.com', false],
    [[], 'api.example.com', false],
  ])('given patterns %j, then %s is allowed: %s', (patterns, host, want) => {
    expect(egressAllowed(patterns, host)).toBe(want);
  });

  it.each(['*', 'example.com', '*.example.com', 'example.com:8080', 'localhost'])('given %s, then it is a valid egress pattern', (pattern) => {
    expect(EgressHostPattern.safeParse(pattern).success).toBe(true);
  });

  it.each(['https://example.com', '*example.com', 'a.*.com', 'example.com/path', '*:80', ''])('given %j, then it is not a valid egress pattern', (pattern) => {
    expect(EgressHostPattern.safeParse(pattern).success).toBe(false);
  });

  it('property: the intersection allows exactly the hosts both lists allow, and never more than the ceiling', () => {
    const patterns = fc.subarray(['*', 'example.com', '*.example.com', 'api.example.com', '*.api.example.com', 'example.com:8443', 'other.test']);
    const hosts = ['example.com', 'api.example.com', 'x.api.example.com', 'www.example.com', 'example.com:8443', 'other.test', 'evil.test'];
    fc.assert(
      fc.property(patterns, fc.option(patterns, { nil: undefined }), (ceiling, narrowing) => {
        const scope = intersectEgress(ceiling, narrowing);
        for (const host of hosts) {
          const want = egressAllowed(ceiling, host) && (narrowing === undefined || egressAllowed(narrowing, host));
          expect(egressAllowed(scope, host), `${host} in ${scope.join(',')} (ceiling ${ceiling.join(',')}, narrowing ${narrowing?.join(',')})`).toBe(want);
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
