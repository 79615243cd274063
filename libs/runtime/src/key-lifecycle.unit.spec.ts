import { describe, expect, it } from 'vitest';
import { keyLifecycles } from './key-lifecycle.js';

const jwk = (kid: string) => ({ kty: 'OKP', crv: 'Ed25519', x: 'A'.repeat(43), kid });
const registered = (kid: string, at: string) => ({
  event_type: 'principal.registered',
  payload: { principal_id: 'writ-approval', principal_type: 'service', display_name: 'approval', roles: [], keys: [jwk(kid)], registered_by: 'writ-approval', at },
});
const added = (kid: string, at: string, replaces?: { kid: string; retire_after: string }) => ({
  event_type: 'principal.key_added',
  payload: { key: jwk(kid), added_by: 'director-1', at, ...(replaces === undefined ? {} : { replaces }) },
});
const revoked = (kid: string, at: string) => ({ event_type: 'principal.key_revoked', payload: { kid, reason: 'rotated', revoked_by: 'writ-approval', at } });

describe('keyLifecycles', () => {
  it('given a registered key, then it is active since registration', () => {
    expect(keyLifecycles([registered('k1', '2026-01-01T00:00:00.000Z')])).toEqual([{ kid: 'k1', status: 'active', added_at: '2026-01-01T00:00:00.000Z' }]);
  });

  it('given a rotation, then the new key is active and the old one retiring until retire_after', () => {
    const keys = keyLifecycles([registered('k1', '2026-01-01T00:00:00.000Z'), added('k2', '2026-01-02T00:00:00.000Z', { kid: 'k1', retire_after: '2026-01-02T00:06:00.000Z' })]);
    expect(keys).toEqual([
      { kid: 'k1', status: 'retiring', added_at: '2026-01-01T00:00:00.000Z', retire_after: '2026-01-02T00:06:00.000Z', replaced_by: 'k2' },
      { kid: 'k2', status: 'active', added_at: '2026-01-02T00:00:00.000Z' },
    ]);
  });

  it('given the retirement, then the old key is retired with when and why, and stays listed', () => {
    const keys = keyLifecycles([
      registered('k1', '2026-01-01T00:00:00.000Z'),
      added('k2', '2026-01-02T00:00:00.000Z', { kid: 'k1', retire_after: '2026-01-02T00:06:00.000Z' }),
      revoked('k1', '2026-01-02T00:06:01.000Z'),
    ]);
    expect(keys[0]).toEqual({ kid: 'k1', status: 'retired', added_at: '2026-01-01T00:00:00.000Z', replaced_by: 'k2', retired_at: '2026-01-02T00:06:01.000Z', reason: 'rotated' });
    expect(keys[1]).toMatchObject({ kid: 'k2', status: 'active' });
  });

  it('given a malformed event or a revocation of an unknown kid, then they are skipped', () => {
    const keys = keyLifecycles([
      registered('k1', '2026-01-01T00:00:00.000Z'),
      { event_type: 'principal.key_added', payload: { key: { ...jwk('k9'), d: 'secret' }, added_by: 'x', at: '2026-01-01T00:00:00.000Z' } },
      revoked('k7', '2026-01-03T00:00:00.000Z'),
    ]);
    expect(keys.map((key) => [key.kid, key.status])).toEqual([['k1', 'active']]);
  });
});
