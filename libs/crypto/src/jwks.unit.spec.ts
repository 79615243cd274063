import { describe, expect, it } from 'vitest';
import { exportEd25519PrivateJwk, generateEd25519Key } from './ed25519-keys.js';
import { KeySet } from './jwks.js';
import { signJws, verifyJws } from './jws.js';

describe('KeySet', () => {
  it('given signing keys, when serialized, then it is a { keys } document of public JWKs only', async () => {
    const [a, b] = await Promise.all([generateEd25519Key({ kid: 'a' }), generateEd25519Key({ kid: 'b' })]);

    const jwks = JSON.parse(JSON.stringify(KeySet.of([a, b]))) as { keys: Record<string, unknown>[] };

    expect(jwks).toEqual({ keys: [a.publicJwk, b.publicJwk] });
    expect(jwks.keys.every((jwk) => !('d' in jwk))).toBe(true);
  });

  it('given a published JWKS, when parsed back, then it verifies what the keys signed', async () => {
    const signer = await generateEd25519Key();
    const published = JSON.stringify(KeySet.of([signer]).toJwks());

    const keys = await KeySet.fromJwks(JSON.parse(published));

    expect(keys.kids()).toEqual([signer.kid]);
    expect(keys.has(signer.kid)).toBe(true);
    expect(keys.size).toBe(1);
    expect((await verifyJws(await signJws('x', signer), keys)).kid).toBe(signer.kid);
  });

  it('given two keys with one kid, then CRYPTO_KID_DUPLICATE', async () => {
    const [a, b] = await Promise.all([generateEd25519Key({ kid: 'same' }), generateEd25519Key({ kid: 'same' })]);

    expect(() => KeySet.of([a, b])).toThrow(expect.objectContaining({ code: 'CRYPTO_KID_DUPLICATE' }));
    await expect(KeySet.fromJwks({ keys: [a.publicJwk, b.publicJwk] })).rejects.toMatchObject({ code: 'CRYPTO_KID_DUPLICATE' });
  });

  it('given a JWKS that contains a private key, when parsed, then CRYPTO_KEY_INVALID', async () => {
    const privateJwk = await exportEd25519PrivateJwk(await generateEd25519Key({ extractable: true }));

    await expect(KeySet.fromJwks({ keys: [privateJwk] })).rejects.toMatchObject({ code: 'CRYPTO_KEY_INVALID' });
  });

  it.each([
    ['null', null],
    ['an array', []],
    ['keys not an array', { keys: {} }],
    ['an RSA key inside', { keys: [{ kty: 'RSA', kid: 'r', n: 'AQAB', e: 'AQAB' }] }],
  ])('given %s, when parsed as a JWKS, then CRYPTO_KEY_INVALID', async (_name, document) => {
    await expect(KeySet.fromJwks(document)).rejects.toMatchObject({ code: 'CRYPTO_KEY_INVALID' });
  });

  it('given a signing key, when put in a key set, then the set does not hold its private key', async () => {
    const signer = await generateEd25519Key({ kid: 'k' });

    const entry = KeySet.of([signer]).get('k');

    expect(entry).toBeDefined();
    expect(entry && 'privateKey' in entry).toBe(false);
  });
});
