import { HttpTokenClaims, httpAudience } from '@writ/contracts';
import { KeySet, exportEd25519PrivateJwk, generateEd25519Key } from '@writ/crypto';
import { SIGNED_REQUESTS, approvalPacketHash as servicePacketHash, verifyHttpBearer, verifySignedRequest } from '@writ/runtime';
import { approvalPacketHash, importPrivateJwk, signApprovalResolution, signGrantRevocation } from '@writ/verification';
import { describe, expect, it } from 'vitest';
import { BearerTokens, TOKEN_TTL_SECONDS } from './bearer-tokens.js';

/**
 * What the browser signs must pass the very verifiers the services run:
 * `verifyHttpBearer` (the API's guard) for tokens, and `verifySignedRequest`
 * with the approval resolution's rules (the approval service) for a
 * director's resolution. Real keys, real verifiers, a registry of one.
 */
const jose = await generateEd25519Key({ kid: 'director-1-k1', extractable: true });
const key = await importPrivateJwk(await exportEd25519PrivateJwk(jose));
const director = { principal_id: 'director-1', roles: ['director'], principal_type: 'user' };
const principals = {
  lookup: async (id: string) => (id === director.principal_id ? director : undefined),
  verificationKeys: async () => KeySet.of([jose]),
};

describe('what the console signs, as the services verify it', () => {
  it('given a session key, when tokens are taken, then the API guard accepts them and one token serves until near its expiry', async () => {
    // given
    let now = new Date('2031-05-01T12:00:00Z');
    const tokens = new BearerTokens({ principalId: 'director-1', key, audience: httpAudience('writ'), clock: () => now });
    // when
    const first = await tokens.authorization();
    const again = await tokens.authorization();
    now = new Date(now.getTime() + (TOKEN_TTL_SECONDS - 20) * 1000);
    const renewed = await tokens.authorization();
    // then
    expect(again).toBe(first);
    expect(renewed).not.toBe(first);
    const verified = await verifyHttpBearer(renewed, { principals, audience: httpAudience('writ'), clock: () => now });
    expect(verified).toMatchObject({ principalId: 'director-1', kid: 'director-1-k1' });
    const claims = HttpTokenClaims.parse(JSON.parse(Buffer.from(renewed.split('.')[1] as string, 'base64url').toString('utf8')));
    expect(claims.exp - claims.iat).toBe(TOKEN_TTL_SECONDS);
  });

  it("given a director's key, when a resolution is signed in the browser's way, then the approval service's verifier accepts it as that director's", async () => {
    // given
    const now = new Date('2031-05-01T12:00:00Z');
    const packet = { action_summary: 'execute_command: rm -rf build', risk_band: 'high' };
    const witness = { ref: 'sha256:abc', fingerprints: { build: 'dir:1' } };
    // when
    const packetHash = await approvalPacketHash(packet, witness);
    const jws = await signApprovalResolution({ approval_id: 'apv-1', decision: 'grant', packet_hash: packetHash, note: 'ok' }, { principalId: 'director-1', key, now });
    // then
    expect(packetHash).toBe(servicePacketHash(packet, witness));
    const verified = await verifySignedRequest(jws, { ...SIGNED_REQUESTS.approvalResolution, signers: 'director', freshnessSeconds: 300 }, {
      principals,
      clock: () => now,
      failure: (reason, message) => new Error(`${reason}: ${message}`),
    });
    expect(verified.payload).toMatchObject({ approval_id: 'apv-1', decision: 'grant', packet_hash: packetHash, resolved_by: 'director-1', note: 'ok' });
  });

  it("given a director's key, when a grant revocation is signed in the browser's way, then the approval service's verifier accepts it as that director's", async () => {
    // given
    const now = new Date('2031-05-01T12:00:00Z');
    // when
    const jws = await signGrantRevocation({ grant_id: 'gnt-1', task_id: 'tsk-1', reason: 'the plan changed' }, { principalId: 'director-1', key, now });
    // then
    const verified = await verifySignedRequest(jws, { ...SIGNED_REQUESTS.grantRevocation, signers: 'director', freshnessSeconds: 300 }, {
      principals,
      clock: () => now,
      failure: (reason, message) => new Error(`${reason}: ${message}`),
    });
    expect(verified.payload).toEqual({ grant_id: 'gnt-1', task_id: 'tsk-1', reason: 'the plan changed', revoked_by: 'director-1', revoked_at: '2031-05-01T12:00:00.000Z' });
  });

  it('given a revocation without a reason, when it is signed in the browser, then the contract refuses it and nothing is signed', async () => {
    await expect(signGrantRevocation({ grant_id: 'gnt-1', task_id: 'tsk-1', reason: '' }, { principalId: 'director-1', key, now: new Date() })).rejects.toThrow();
  });
});

