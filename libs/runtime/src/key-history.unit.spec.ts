import { describe, expect, it } from 'vitest';
import { describeWindow, keyStandingAt, keyValidAt, keyWindows } from './key-history.js';

const jwk = (kid: string) => ({ kty: 'OKP' as const, crv: 'Ed25519' as const, x: 'A'.repeat(43), kid });
const registered = (kid: string, at: string) => ({
  event_type: 'principal.registered',
  payload: { principal_id: 'writ-receipt', principal_type: 'service', display_name: 'receipt', roles: [], keys: [jwk(kid)], registered_by: 'writ-receipt', at },
});
const added = (kid: string, at: string) => ({ event_type: 'principal.key_added', payload: { key: jwk(kid), added_by: 'writ-receipt', at } });
const revoked = (kid: string, at: string) => ({ event_type: 'principal.key_revoked', payload: { kid, reason: 'rotated', revoked_by: 'writ-receipt', at } });

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';
const T2 = '2026-01-03T00:00:00.000Z';

describe('keyWindows', () => {
  it('given a registration, a rotation and the old key revoked, then each key is valid from when it came until its revocation', () => {
    const windows = keyWindows([registered('k1', T0), added('k2', T1), revoked('k1', T2)]);
    expect(windows).toEqual([
      { jwk: jwk('k1'), valid_from: T0, valid_until: T2, revocation_reason: 'rotated' },
      { jwk: jwk('k2'), valid_from: T1, valid_until: null },
    ]);
  });

  it('given malformed events, a revocation of an unknown kid, a second revocation or a kid added again, then they change nothing', () => {
    const windows = keyWindows([
      registered('k1', T0),
      { event_type: 'principal.key_added', payload: { key: 'nope' } },
      revoked('k9', T1),
      revoked('k1', T1),
      revoked('k1', T2),
      added('k1', T2),
    ]);
    expect(windows).toEqual([{ jwk: jwk('k1'), valid_from: T0, valid_until: T1, revocation_reason: 'rotated' }]);
  });
});

describe('keyValidAt / keyStandingAt', () => {
  const windows = keyWindows([registered('k1', T0), added('k2', T1), revoked('k1', T2)]);

  it.each([
    { note: 'before the key came', kid: 'k1', at: '2025-12-31T23:59:59.999Z', want: 'not_valid_then' },
    { note: 'at its registration', kid: 'k1', at: T0, want: 'valid' },
    { note: 'just before its revocation', kid: 'k1', at: '2026-01-02T23:59:59.999Z', want: 'valid' },
    { note: 'at its revocation', kid: 'k1', at: T2, want: 'not_valid_then' },
    { note: 'a key never revoked, long after', kid: 'k2', at: '2030-01-01T00:00:00.000Z', want: 'valid' },
    { note: 'a kid the principal never had', kid: 'k3', at: T1, want: 'unknown' },
    { note: 'an instant that is not a time', kid: 'k2', at: 'yesterday', want: 'not_valid_then' },
  ])('$note → $want', ({ kid, at, want }) => {
    expect(keyStandingAt(windows, kid, at).standing).toBe(want);
  });

  it('takes epoch milliseconds too, and says the window in words', () => {
    expect(keyValidAt(windows[0]!, Date.parse(T1))).toBe(true);
    expect(describeWindow(windows[0]!)).toBe(`valid from ${T0} until ${T2} (revoked: rotated)`);
    expect(describeWindow(windows[1]!)).toBe(`valid from ${T1}, not revoked`);
  });
});
