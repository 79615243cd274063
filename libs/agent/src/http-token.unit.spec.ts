import { HttpTokenClaims } from '@writ/contracts';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { generateAgentKey } from './agent-key.js';
import { signHttpToken } from './http-token.js';

describe('signHttpToken', () => {
  it('given an agent key, when a token is signed, then it is an EdDSA writ-http+jws for writ-http:<root>, sub = iss = the agent, 5 minutes', async () => {
    // given
    const key = await generateAgentKey({ kid: 'agent-1-k1' });
    const now = new Date();
    // when
    const token = await signHttpToken('agent-1', key, { subjectRoot: 'writ_e2e', now });
    // then
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'EdDSA', kid: 'agent-1-k1', typ: 'writ-http+jws' });
    const { payload } = await jwtVerify(token, await importJWK(key.publicJwk, 'EdDSA'), { algorithms: ['EdDSA'], audience: 'writ-http:writ_e2e', typ: 'writ-http+jws' });
    expect(HttpTokenClaims.parse(payload)).toMatchObject({ sub: 'agent-1', iss: 'agent-1', aud: 'writ-http:writ_e2e' });
    expect(Number(payload.exp) - Number(payload.iat)).toBe(300);
  });

  it.each([0, 901, 1.5])('given a lifetime of %s s, when a token is signed, then AGENT_REQUEST_INVALID (the API accepts 1 to 900 s)', async (ttlSeconds) => {
    const key = await generateAgentKey({ kid: 'agent-1-k1' });
    await expect(signHttpToken('agent-1', key, { ttlSeconds })).rejects.toMatchObject({ code: 'AGENT_REQUEST_INVALID' });
  });
});
