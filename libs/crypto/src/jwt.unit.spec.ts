import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519Key, type Ed25519SigningKey } from './ed25519-keys.js';
import { KeySet } from './jwks.js';
import { signJws } from './jws.js';
import { DEFAULT_CLOCK_TOLERANCE_SECONDS, signClaims, verifyClaims, type SignClaimsOptions } from './jwt.js';

const T0 = new Date('2030-01-01T00:00:00Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

const ISSUER = 'writ:approval';
const AUDIENCE = 'writ:executor';

let issuer: Ed25519SigningKey;
let keys: KeySet;

beforeAll(async () => {
  issuer = await generateEd25519Key({ kid: 'approval-2030-01' });
  keys = KeySet.of([issuer]);
});

function grantOptions(overrides: Partial<SignClaimsOptions> = {}): SignClaimsOptions {
  return { issuer: ISSUER, audience: AUDIENCE, issuedAt: T0, expiresAt: at(60), subject: 'task-1', ...overrides };
}

describe('signClaims / verifyClaims', () => {
  it('given a grant signed for the executor, when verified by the executor inside its lifetime, then the claims come back', async () => {
    const token = await signClaims({ action_class: 'fs.write', max_uses: 1 }, issuer, grantOptions({ jwtId: 'grant-1', typ: 'writ-grant+jwt' }));

    const { claims, kid, protectedHeader } = await verifyClaims(token, keys, {
      issuer: ISSUER,
      audience: AUDIENCE,
      subject: 'task-1',
      typ: 'writ-grant+jwt',
      now: at(30),
    });

    expect(kid).toBe('approval-2030-01');
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: 'approval-2030-01', typ: 'writ-grant+jwt' });
    expect(claims).toEqual({
      action_class: 'fs.write',
      max_uses: 1,
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'task-1',
      jti: 'grant-1',
      iat: T0.getTime() / 1000,
      exp: at(60).getTime() / 1000,
    });
  });

  it('given registered claims in the claims object, when signed, then the options win', async () => {
    const token = await signClaims({ iss: 'forged', exp: 4102444800 * 2 }, issuer, grantOptions());

    const { claims } = await verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(1) });

    expect(claims.iss).toBe(ISSUER);
    expect(claims.exp).toBe(at(60).getTime() / 1000);
  });

  it('given several accepted audiences, when the token names one of them, then it verifies', async () => {
    const token = await signClaims({}, issuer, grantOptions({ audience: ['writ:executor', 'writ:receipt'] }));

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: ['writ:receipt'], now: at(1) })).resolves.toMatchObject({
      kid: 'approval-2030-01',
    });
  });
});

describe('verifyClaims: time', () => {
  it(`documents a default clock tolerance of 30 seconds`, () => {
    expect(DEFAULT_CLOCK_TOLERANCE_SECONDS).toBe(30);
  });

  it('given a token just past exp but within the default tolerance, then it still verifies', async () => {
    const token = await signClaims({}, issuer, grantOptions());

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(60 + 25) })).resolves.toBeDefined();
  });

  it('given a token past exp beyond the default tolerance, then JWS_EXPIRED', async () => {
    const token = await signClaims({}, issuer, grantOptions());

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(60 + 35) })).rejects.toMatchObject({
      code: 'JWS_EXPIRED',
    });
  });

  it('given a zero tolerance, when one second past exp, then JWS_EXPIRED', async () => {
    const token = await signClaims({}, issuer, grantOptions());

    await expect(
      verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(61), clockToleranceSeconds: 0 }),
    ).rejects.toMatchObject({ code: 'JWS_EXPIRED' });
  });

  it('given a token whose nbf is in the future beyond the tolerance, then JWS_NOT_YET_VALID', async () => {
    const token = await signClaims({}, issuer, grantOptions({ notBefore: at(120), expiresAt: at(600) }));

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(0) })).rejects.toMatchObject({
      code: 'JWS_NOT_YET_VALID',
    });
    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(100) })).resolves.toBeDefined();
  });

  it('given a token without exp, then JWS_CLAIM_INVALID', async () => {
    const token = await new SignJWT({ iss: ISSUER, aud: AUDIENCE })
      .setProtectedHeader({ alg: 'EdDSA', kid: issuer.kid })
      .sign(issuer.privateKey);

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(0) })).rejects.toMatchObject({
      code: 'JWS_CLAIM_INVALID',
      details: { claim: 'exp' },
    });
  });
});

describe('verifyClaims: issuer, audience, subject, typ', () => {
  it('given a token for another audience, then JWS_CLAIM_INVALID on aud', async () => {
    const token = await signClaims({}, issuer, grantOptions({ audience: 'writ:projection' }));

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(1) })).rejects.toMatchObject({
      code: 'JWS_CLAIM_INVALID',
      details: { claim: 'aud' },
    });
  });

  it('given a token from another issuer, then JWS_CLAIM_INVALID on iss', async () => {
    const token = await signClaims({}, issuer, grantOptions({ issuer: 'writ:ingress' }));

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(1) })).rejects.toMatchObject({
      code: 'JWS_CLAIM_INVALID',
      details: { claim: 'iss' },
    });
  });

  it('given a token about another subject, when a subject is expected, then JWS_CLAIM_INVALID on sub', async () => {
    const token = await signClaims({}, issuer, grantOptions({ subject: 'task-2' }));

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, subject: 'task-1', now: at(1) })).rejects.toMatchObject({
      code: 'JWS_CLAIM_INVALID',
      details: { claim: 'sub' },
    });
  });

  it('given a token of another typ, when a typ is expected, then JWS_TYPE_MISMATCH', async () => {
    const token = await signClaims({}, issuer, grantOptions({ typ: 'writ-request+jwt' }));

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, typ: 'writ-grant+jwt', now: at(1) })).rejects.toMatchObject({
      code: 'JWS_TYPE_MISMATCH',
    });
  });

  it('given a compact JWS whose payload is not a claims set, then JWS_MALFORMED', async () => {
    const token = await signJws('not json', issuer);

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(1) })).rejects.toMatchObject({ code: 'JWS_MALFORMED' });
  });

  it('given an HS256 token, then JWS_ALG_NOT_ALLOWED', async () => {
    const token = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, exp: at(60).getTime() / 1000 })
      .setProtectedHeader({ alg: 'HS256', kid: issuer.kid })
      .sign(new Uint8Array(32));

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(1) })).rejects.toMatchObject({
      code: 'JWS_ALG_NOT_ALLOWED',
    });
  });

  it('given a token from an unknown key, then JWS_KID_UNKNOWN', async () => {
    const stranger = await generateEd25519Key();
    const token = await signClaims({}, stranger, grantOptions());

    await expect(verifyClaims(token, keys, { issuer: ISSUER, audience: AUDIENCE, now: at(1) })).rejects.toMatchObject({
      code: 'JWS_KID_UNKNOWN',
    });
  });
});

describe('verifyClaims / signClaims: caller mistakes', () => {
  it.each([
    ['an empty issuer', { issuer: '', audience: AUDIENCE }],
    ['an empty audience list', { issuer: ISSUER, audience: [] }],
    ['an empty audience', { issuer: ISSUER, audience: '' }],
    ['a missing issuer', { audience: AUDIENCE }],
    ['a negative tolerance', { issuer: ISSUER, audience: AUDIENCE, clockToleranceSeconds: -1 }],
    ['an infinite tolerance', { issuer: ISSUER, audience: AUDIENCE, clockToleranceSeconds: Infinity }],
    ['an invalid clock', { issuer: ISSUER, audience: AUDIENCE, now: new Date(Number.NaN) }],
  ])('given %s, when verifying, then CRYPTO_ARGUMENT_INVALID', async (_name, options) => {
    const token = await signClaims({}, issuer, grantOptions());

    await expect(verifyClaims(token, keys, options as never)).rejects.toMatchObject({ code: 'CRYPTO_ARGUMENT_INVALID' });
  });

  it.each([
    ['an empty issuer', { issuer: '' }],
    ['an empty audience list', { audience: [] }],
    ['an invalid expiry', { expiresAt: new Date(Number.NaN) }],
  ])('given %s, when signing, then CRYPTO_ARGUMENT_INVALID', async (_name, overrides) => {
    await expect(signClaims({}, issuer, grantOptions(overrides))).rejects.toMatchObject({ code: 'CRYPTO_ARGUMENT_INVALID' });
  });

  it.each([
    ['NaN', { limit: Number.NaN }],
    ['a bigint', { amount: 10n }],
  ])('given claims holding %s, when signing, then CRYPTO_NOT_CANONICALIZABLE', async (_name, claims) => {
    await expect(signClaims(claims, issuer, grantOptions())).rejects.toMatchObject({ code: 'CRYPTO_NOT_CANONICALIZABLE' });
  });
});
