import { HTTP_TOKEN_JWS_TYPE, hasErrorCode } from '@writ/contracts';
import { KeySet, generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { mintHttpToken, verifyHttpBearer } from './http-credential.js';

const AUD = 'writ-http:writ';
const NOW = new Date('2031-01-01T00:00:00Z');
let key: Ed25519SigningKey;
let active = true;
const principals = {
  lookup: async (id: string) => (id === 'obs' ? { principal_id: 'obs', roles: ['observer'], principal_type: 'service' } : undefined),
  verificationKeys: async (id: string) => KeySet.of(id === 'obs' && active ? [key] : []),
};
const verify = (authorization: string | undefined, now = NOW) => verifyHttpBearer(authorization, { principals, audience: AUD, clock: () => now });
const code = (c: string) => (error: unknown) => hasErrorCode(error, c);

beforeAll(async () => {
  key = await generateEd25519Key({ kid: 'obs-k1' });
});

describe('verifyHttpBearer', () => {
  it('given a token minted for this API by an active key, when verified, then it names the caller, its key and expiry', async () => {
    const token = await mintHttpToken({ principalId: 'obs', key, audience: AUD, now: NOW, ttlSeconds: 600 });
    await expect(verify(`Bearer ${token}`)).resolves.toMatchObject({ principalId: 'obs', kid: 'obs-k1', expiresAt: new Date(NOW.getTime() + 600_000) });
  });

  it('given the token at exp plus the skew, then HTTP_AUTH_EXPIRED; before iat minus the skew, HTTP_AUTH_NOT_YET_VALID', async () => {
    const token = await mintHttpToken({ principalId: 'obs', key, audience: AUD, now: NOW, ttlSeconds: 60 });
    await expect(verify(`Bearer ${token}`, new Date(NOW.getTime() + 89_000))).resolves.toMatchObject({ principalId: 'obs' });
    await expect(verify(`Bearer ${token}`, new Date(NOW.getTime() + 91_000))).rejects.toSatisfy(code('HTTP_AUTH_EXPIRED'));
    await expect(verify(`Bearer ${token}`, new Date(NOW.getTime() - 31_000))).rejects.toSatisfy(code('HTTP_AUTH_NOT_YET_VALID'));
  });

  it('given claims whose iss is not their sub, then HTTP_AUTH_MALFORMED (no principal speaks for another)', async () => {
    const iat = NOW.getTime() / 1000;
    const token = await signJws(JSON.stringify({ sub: 'someone-else', iss: 'obs', aud: AUD, iat, exp: iat + 60 }), key, { typ: HTTP_TOKEN_JWS_TYPE });
    await expect(verify(`Bearer ${token}`)).rejects.toSatisfy(code('HTTP_AUTH_MALFORMED'));
  });

  it('given the key is no longer active, then HTTP_AUTH_KEY_UNKNOWN', async () => {
    const token = await mintHttpToken({ principalId: 'obs', key, audience: AUD, now: NOW });
    active = false;
    try {
      await expect(verify(`Bearer ${token}`)).rejects.toSatisfy(code('HTTP_AUTH_KEY_UNKNOWN'));
    } finally {
      active = true;
    }
  });
});

describe('mintHttpToken', () => {
  it('given a lifetime over 15 minutes or under 1 s, then it refuses to mint (HTTP_AUTH_LIFETIME_TOO_LONG)', async () => {
    await expect(mintHttpToken({ principalId: 'obs', key, audience: AUD, now: NOW, ttlSeconds: 901 })).rejects.toSatisfy(code('HTTP_AUTH_LIFETIME_TOO_LONG'));
    await expect(mintHttpToken({ principalId: 'obs', key, audience: AUD, now: NOW, ttlSeconds: 0 })).rejects.toSatisfy(code('HTTP_AUTH_LIFETIME_TOO_LONG'));
  });
});
