import { describe, expect, it } from 'vitest';
import { generateEd25519Key } from './ed25519-keys.js';
import { KeySet } from './jwks.js';
import { signJws, verifyJws } from './jws.js';
import { SigningKeyring } from './signing-keyring.js';

describe('SigningKeyring', () => {
  it('given a generated keyring, then its active key signs and its key set verifies', async () => {
    const ring = await SigningKeyring.generate();

    const jws = await signJws('x', ring.active);

    expect((await verifyJws(jws, ring.keySet())).kid).toBe(ring.activeKid);
    expect(ring.retired).toEqual([]);
  });

  it('given a rotation, then a new kid is active and what the old key signed still verifies against the published JWKS', async () => {
    const before = await SigningKeyring.generate();
    const oldToken = await signJws('old', before.active);

    const after = await before.rotate();
    const newToken = await signJws('new', after.active);
    const published = await KeySet.fromJwks(JSON.parse(JSON.stringify(after.toJwks())));

    expect(after.activeKid).not.toBe(before.activeKid);
    expect(after.retired.map((key) => key.kid)).toEqual([before.activeKid]);
    expect(published.kids()).toEqual([after.activeKid, before.activeKid]);
    expect((await verifyJws(oldToken, published)).kid).toBe(before.activeKid);
    expect((await verifyJws(newToken, published)).kid).toBe(after.activeKid);
  });

  it('given a rotation, then the keyring it came from is unchanged', async () => {
    const before = await SigningKeyring.generate();
    const activeKid = before.activeKid;

    await before.rotate();

    expect(before.activeKid).toBe(activeKid);
    expect(before.retired).toEqual([]);
  });

  it('given a rotation to a supplied key, then that key becomes active', async () => {
    const next = await generateEd25519Key({ kid: 'issuer-2030-02' });
    const ring = SigningKeyring.of(await generateEd25519Key({ kid: 'issuer-2030-01' }));

    const rotated = await ring.rotate(next);

    expect(rotated.activeKid).toBe('issuer-2030-02');
    expect(rotated.keySet().kids()).toEqual(['issuer-2030-02', 'issuer-2030-01']);
  });

  it('given a retired key is removed, then what it signed no longer verifies: JWS_KID_UNKNOWN', async () => {
    const first = await SigningKeyring.generate();
    const oldToken = await signJws('old', first.active);
    const rotated = await first.rotate();

    const pruned = rotated.removeRetired(first.activeKid);

    expect(pruned.keySet().kids()).toEqual([rotated.activeKid]);
    await expect(verifyJws(oldToken, pruned.keySet())).rejects.toMatchObject({ code: 'JWS_KID_UNKNOWN' });
  });

  it('given the active kid, when removal is requested, then CRYPTO_KEY_ACTIVE', async () => {
    const ring = await SigningKeyring.generate();

    expect(() => ring.removeRetired(ring.activeKid)).toThrow(expect.objectContaining({ code: 'CRYPTO_KEY_ACTIVE' }));
  });

  it('given an unknown kid, when removal is requested, then CRYPTO_KID_UNKNOWN', async () => {
    const ring = await SigningKeyring.generate();

    expect(() => ring.removeRetired('nope')).toThrow(expect.objectContaining({ code: 'CRYPTO_KID_UNKNOWN' }));
  });

  it('given a rotation to a key whose kid is already in the keyring, then CRYPTO_KID_DUPLICATE', async () => {
    const ring = await (await SigningKeyring.generate()).rotate();
    const reused = await generateEd25519Key({ kid: ring.retired[0]?.kid ?? '' });

    await expect(ring.rotate(reused)).rejects.toMatchObject({ code: 'CRYPTO_KID_DUPLICATE' });
  });

  it('given the JWKS of a keyring, then it holds no private key material', async () => {
    const ring = await (await SigningKeyring.generate()).rotate();

    const text = JSON.stringify(ring.toJwks());

    expect(text).not.toContain('"d"');
    expect(JSON.parse(text)).toEqual({ keys: [ring.active.publicJwk, ring.retired[0]?.publicJwk] });
  });
});
