import { CompactSign, SignJWT, base64url, exportJWK, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519Key, type Ed25519SigningKey } from './ed25519-keys.js';
import { KeySet } from './jwks.js';
import { signDetachedJws, signJws, verifyDetachedJws, verifyJws } from './jws.js';

const encodeJson = (value: unknown): string => base64url.encode(JSON.stringify(value));
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

let alice: Ed25519SigningKey;
let bob: Ed25519SigningKey;
let trusted: KeySet;

beforeAll(async () => {
  [alice, bob] = await Promise.all([generateEd25519Key({ kid: 'alice' }), generateEd25519Key({ kid: 'bob' })]);
  trusted = KeySet.of([alice, bob]);
});

describe('signJws / verifyJws', () => {
  it('given a payload signed by a trusted key, when verified, then the payload and kid come back', async () => {
    const jws = await signJws('{"hello":"world"}', alice);

    const verified = await verifyJws(jws, trusted);

    expect(text(verified.payload)).toBe('{"hello":"world"}');
    expect(verified.kid).toBe('alice');
    expect(verified.protectedHeader).toEqual({ alg: 'EdDSA', kid: 'alice' });
  });

  it('given bytes and a typ, when signed and verified with the same typ, then it passes', async () => {
    const jws = await signJws(Uint8Array.of(0, 1, 2, 255), bob, { typ: 'writ-receipt+jws' });

    const verified = await verifyJws(jws, trusted, { typ: 'writ-receipt+jws' });

    expect(verified.payload).toEqual(Uint8Array.of(0, 1, 2, 255));
    expect(verified.protectedHeader.typ).toBe('writ-receipt+jws');
  });

  it('given a JWS of another typ, when verified expecting a typ, then JWS_TYPE_MISMATCH', async () => {
    const jws = await signJws('x', alice, { typ: 'writ-request+jws' });

    await expect(verifyJws(jws, trusted, { typ: 'writ-receipt+jws' })).rejects.toMatchObject({ code: 'JWS_TYPE_MISMATCH' });
    await expect(verifyJws(await signJws('x', alice), trusted, { typ: 'writ-receipt+jws' })).rejects.toMatchObject({
      code: 'JWS_TYPE_MISMATCH',
    });
  });

  it('given a single public key rather than a key set, when its kid matches, then it verifies', async () => {
    const jws = await signJws('x', alice);

    expect((await verifyJws(jws, alice)).kid).toBe('alice');
    await expect(verifyJws(jws, bob)).rejects.toMatchObject({ code: 'JWS_KID_UNKNOWN' });
  });

  it('given a public key instead of a private one, when signing, then CRYPTO_KEY_INVALID', async () => {
    await expect(signJws('x', { privateKey: alice.publicKey, kid: 'alice' })).rejects.toMatchObject({ code: 'CRYPTO_KEY_INVALID' });
  });

  it('given a payload that is neither bytes nor a string, when signing, then CRYPTO_ARGUMENT_INVALID', async () => {
    await expect(signJws({ not: 'serialized' } as unknown as string, alice)).rejects.toMatchObject({ code: 'CRYPTO_ARGUMENT_INVALID' });
  });

  it('given trust material that is neither a key set nor a key, when verifying, then CRYPTO_ARGUMENT_INVALID', async () => {
    const jws = await signJws('x', alice);

    await expect(verifyJws(jws, undefined as unknown as KeySet)).rejects.toMatchObject({ code: 'CRYPTO_ARGUMENT_INVALID' });
  });
});

describe('verifyJws rejects', () => {
  it('given a token signed with HS256 using the public key bytes as the secret (algorithm confusion), then JWS_ALG_NOT_ALLOWED', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(alice.publicJwk));
    const token = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'HS256', kid: 'alice' }).sign(secret);

    await expect(verifyJws(token, trusted)).rejects.toMatchObject({ code: 'JWS_ALG_NOT_ALLOWED' });
  });

  it('given an unsecured token (alg none), then JWS_ALG_NOT_ALLOWED', async () => {
    const token = `${encodeJson({ alg: 'none', kid: 'alice' })}.${encodeJson({ sub: 'x' })}.`;

    await expect(verifyJws(token, trusted)).rejects.toMatchObject({ code: 'JWS_ALG_NOT_ALLOWED' });
  });

  it('given an Ed25519 signature labelled with the fully-specified alg "Ed25519", then JWS_ALG_NOT_ALLOWED (pinned to EdDSA)', async () => {
    const token = await new CompactSign(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'Ed25519', kid: 'alice' }).sign(alice.privateKey);

    await expect(verifyJws(token, trusted)).rejects.toMatchObject({ code: 'JWS_ALG_NOT_ALLOWED' });
  });

  it('given an ES256 token, then JWS_ALG_NOT_ALLOWED', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new CompactSign(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'ES256', kid: 'alice' }).sign(privateKey);

    await expect(verifyJws(token, trusted)).rejects.toMatchObject({ code: 'JWS_ALG_NOT_ALLOWED' });
  });

  it("given a token signed by the wrong key under a trusted key's kid, then JWS_SIGNATURE_INVALID", async () => {
    const mallory = await generateEd25519Key();
    const token = await signJws('x', { privateKey: mallory.privateKey, kid: 'alice' });

    await expect(verifyJws(token, trusted)).rejects.toMatchObject({ code: 'JWS_SIGNATURE_INVALID' });
  });

  it('given a token that embeds its own jwk header, then the embedded key is ignored and JWS_SIGNATURE_INVALID', async () => {
    const mallory = await generateEd25519Key();
    const jwk = await exportJWK(mallory.publicKey);
    const token = await new CompactSign(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'EdDSA', kid: 'alice', jwk }).sign(mallory.privateKey);

    await expect(verifyJws(token, trusted)).rejects.toMatchObject({ code: 'JWS_SIGNATURE_INVALID' });
  });

  it('given a tampered payload, then JWS_SIGNATURE_INVALID', async () => {
    const [header, , signature] = (await signJws('{"amount":1}', alice)).split('.');
    const tampered = `${header ?? ''}.${base64url.encode('{"amount":9}')}.${signature ?? ''}`;

    await expect(verifyJws(tampered, trusted)).rejects.toMatchObject({ code: 'JWS_SIGNATURE_INVALID' });
  });

  it("given a header re-pointed at another trusted key's kid, then JWS_SIGNATURE_INVALID", async () => {
    const [, payload, signature] = (await signJws('x', alice)).split('.');
    const repointed = `${encodeJson({ alg: 'EdDSA', kid: 'bob' })}.${payload ?? ''}.${signature ?? ''}`;

    await expect(verifyJws(repointed, trusted)).rejects.toMatchObject({ code: 'JWS_SIGNATURE_INVALID' });
  });

  it('given an unknown kid, then JWS_KID_UNKNOWN', async () => {
    const stranger = await generateEd25519Key({ kid: 'carol' });

    await expect(verifyJws(await signJws('x', stranger), trusted)).rejects.toMatchObject({ code: 'JWS_KID_UNKNOWN' });
  });

  it('given no kid in the header, when verified against a key set, then JWS_KID_MISSING', async () => {
    const token = await signJws('x', { privateKey: alice.privateKey });

    await expect(verifyJws(token, trusted)).rejects.toMatchObject({ code: 'JWS_KID_MISSING' });
  });

  it.each([
    ['an empty string', ''],
    ['two segments', 'a.b'],
    ['garbage segments', 'a.b.c'],
    ['a header that is not JSON', `${base64url.encode('nope')}.${base64url.encode('x')}.AAAA`],
    ['a JWE-shaped string', 'a.b.c.d.e'],
    ['not a string', 42],
  ])('given %s, then JWS_MALFORMED', async (_name, token) => {
    await expect(verifyJws(token as string, trusted)).rejects.toMatchObject({ code: 'JWS_MALFORMED' });
  });

  it('given a critical header extension the verifier does not understand, then JWS_MALFORMED', async () => {
    const header = encodeJson({ alg: 'EdDSA', kid: 'alice', crit: ['exp-policy'], 'exp-policy': 1 });
    const payload = base64url.encode('x');
    const signature = base64url.encode(
      new Uint8Array(await crypto.subtle.sign('Ed25519', alice.privateKey, new TextEncoder().encode(`${header}.${payload}`))),
    );

    await expect(verifyJws(`${header}.${payload}.${signature}`, trusted)).rejects.toMatchObject({ code: 'JWS_MALFORMED' });
  });
});

describe('detached-payload JWS', () => {
  it('given a document signed detached, when verified with the same bytes, then it passes and the token carries no payload', async () => {
    const document = '{"receipt":1}';

    const jws = await signDetachedJws(document, alice);
    const verified = await verifyDetachedJws(jws, document, trusted);

    expect(jws.split('.')[1]).toBe('');
    expect(verified.kid).toBe('alice');
    expect(text(verified.payload)).toBe(document);
  });

  it('given a different document, when verified, then JWS_SIGNATURE_INVALID', async () => {
    const jws = await signDetachedJws('{"receipt":1}', alice);

    await expect(verifyDetachedJws(jws, '{"receipt":2}', trusted)).rejects.toMatchObject({ code: 'JWS_SIGNATURE_INVALID' });
  });

  it('given an attached JWS, when verified as detached, then JWS_MALFORMED', async () => {
    const jws = await signJws('{"receipt":1}', alice);

    await expect(verifyDetachedJws(jws, '{"receipt":1}', trusted)).rejects.toMatchObject({ code: 'JWS_MALFORMED' });
  });
});
