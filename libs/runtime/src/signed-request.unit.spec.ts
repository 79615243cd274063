import { WritError, hasErrorCode, type PrincipalRole, type PrincipalType, type PublicEd25519Jwk } from '@writ/contracts';
import { KeySet, generateEd25519Key, importEd25519PublicJwk, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { evolvePrincipal, type PrincipalRecord } from './principal-registry.js';
import {
  SIGNED_REQUESTS,
  claimedSignedRequest,
  signRequest,
  verifySignedRequest,
  type SignedRequestFailure,
  type SignedRequestPrincipals,
  type SignedRequestRules,
} from './signed-request.js';

/**
 * The principal port as a plain in-memory fold of principal events (the same
 * `evolvePrincipal` the PrincipalRegistry folds the log with): Writ's own port,
 * not a stand-in for NATS.
 */
class InMemoryPrincipals implements SignedRequestPrincipals<PrincipalRecord> {
  readonly #records = new Map<string, PrincipalRecord>();

  register(id: string, type: PrincipalType, roles: PrincipalRole[], key: Ed25519SigningKey): void {
    this.#apply(id, 'principal.registered', {
      principal_id: id,
      principal_type: type,
      display_name: id,
      roles,
      keys: [key.publicJwk as PublicEd25519Jwk],
      registered_by: 'operator-1',
      at: '2030-01-01T00:00:00.000Z',
    });
  }

  revoke(id: string, kid: string): void {
    this.#apply(id, 'principal.key_revoked', { kid, reason: 'compromised', revoked_by: 'operator-1', at: '2030-01-01T00:00:00.000Z' });
  }

  async lookup(id: string): Promise<PrincipalRecord | undefined> {
    return this.#records.get(id);
  }

  async verificationKeys(id: string): Promise<KeySet> {
    return KeySet.of(await Promise.all([...(this.#records.get(id)?.keys.values() ?? [])].map((jwk) => importEd25519PublicJwk(jwk))));
  }

  #apply(id: string, event_type: string, payload: Record<string, unknown>): void {
    const next = evolvePrincipal(this.#records.get(id), { event_type, payload });
    if (next !== undefined) this.#records.set(id, next);
  }
}

const NOW = new Date('2030-06-01T12:00:00.000Z');
const at = (offsetSeconds: number) => new Date(NOW.getTime() + offsetSeconds * 1000);

const failure: SignedRequestFailure = (reason, message, details, cause) =>
  reason === 'contract_invalid' && cause instanceof Error ? cause : new WritError(`TEST_${reason.toUpperCase()}`, message, { details, cause });

const revocationRules: SignedRequestRules<typeof SIGNED_REQUESTS.grantRevocation.schema> = { ...SIGNED_REQUESTS.grantRevocation, signers: 'director', freshnessSeconds: 300 };
const revocationFields = { grant_id: 'grt-1', task_id: 'task-1', reason: 'no longer needed' };

async function codeOf(run: Promise<unknown>): Promise<string | undefined> {
  try {
    await run;
  } catch (error) {
    return hasErrorCode(error) ? error.code : 'untyped';
  }
  return undefined;
}

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('verifySignedRequest', () => {
  const principals = new InMemoryPrincipals();
  const deps = { principals, clock: () => NOW, failure };
  const keys: Record<string, Ed25519SigningKey> = {};

  beforeAll(async () => {
    for (const name of ['director', 'rotated', 'agent', 'observer', 'forger', 'stranger']) keys[name] = await generateEd25519Key();
    principals.register('director-1', 'user', ['director'], keys['director'] as Ed25519SigningKey);
    principals.register('director-2', 'user', ['director'], keys['rotated'] as Ed25519SigningKey);
    principals.revoke('director-2', (keys['rotated'] as Ed25519SigningKey).kid);
    principals.register('agent-1', 'agent', ['director'], keys['agent'] as Ed25519SigningKey);
    principals.register('observer-1', 'user', ['observer'], keys['observer'] as Ed25519SigningKey);
  });

  const revocation = (principalId: string, key: string, signedAt: Date = NOW) =>
    signRequest(SIGNED_REQUESTS.grantRevocation, revocationFields, { principalId, key: keys[key] as Ed25519SigningKey, now: signedAt });

  it('given a director signing now, when verified, then the payload, the signer and its record are returned', async () => {
    const { jws, payload } = await revocation('director-1', 'director');

    const verified = await verifySignedRequest(jws, revocationRules, deps);

    expect(verified.payload).toEqual(payload);
    expect(verified.signer).toBe('director-1');
    expect(verified.principal.roles).toEqual(['director']);
  });

  it.each([
    ['signed at the edge of the window in the past', -300],
    ['signed at the edge of the window in the future', 300],
  ])('given a request %s, then it is accepted', async (_note, offset) => {
    const { jws } = await revocation('director-1', 'director', at(offset));
    await expect(verifySignedRequest(jws, revocationRules, deps)).resolves.toMatchObject({ signer: 'director-1' });
  });

  const refusals: ReadonlyArray<readonly [string, () => Promise<string>, string]> = [
    ['naming a director but signed with another key (forged)', async () => (await revocation('director-1', 'forger')).jws, 'TEST_SIGNATURE_INVALID'],
    ['signed with a revoked key', async () => (await revocation('director-2', 'rotated')).jws, 'TEST_SIGNATURE_INVALID'],
    ['signed by an unknown principal', async () => (await revocation('stranger-1', 'stranger')).jws, 'TEST_SIGNER_NOT_ALLOWED'],
    ['signed by an agent holding the director role', async () => (await revocation('agent-1', 'agent')).jws, 'TEST_SIGNER_NOT_ALLOWED'],
    ['signed by an observer', async () => (await revocation('observer-1', 'observer')).jws, 'TEST_SIGNER_NOT_ALLOWED'],
    ['signed 301 s ago (a replay)', async () => (await revocation('director-1', 'director', at(-301))).jws, 'TEST_STALE'],
    ['signed 301 s ahead (a wrong clock)', async () => (await revocation('director-1', 'director', at(301))).jws, 'TEST_STALE'],
  ];
  it.each(refusals)('given a request %s, then %s', async (_note, make, want) => {
    expect(await codeOf(verifySignedRequest(await make(), revocationRules, deps))).toBe(want);
  });

  it('given a director-signed payload swapped into another signature (tampered), then TEST_SIGNATURE_INVALID', async () => {
    const [header, , signature] = (await revocation('director-1', 'director')).jws.split('.');
    const tampered = `${header}.${b64({ ...revocationFields, grant_id: 'grt-other', revoked_by: 'director-1', revoked_at: NOW.toISOString() })}.${signature}`;
    expect(await codeOf(verifySignedRequest(tampered, revocationRules, deps))).toBe('TEST_SIGNATURE_INVALID');
  });

  it.each([
    ['not a compact JWS', 'not-a-jws'],
    ['four parts', 'a.b.c.d'],
    ['a detached payload', `${b64({ alg: 'EdDSA' })}..c2ln`],
    ['a payload that is not JSON', `${b64({ alg: 'EdDSA' })}.${b64('{nope')}.c2ln`],
    ['characters outside base64url', `${b64({ alg: 'EdDSA' })}.${b64(revocationFields)}+.c2ln`],
  ])('given %s (malformed), then TEST_SIGNATURE_INVALID', async (_note, jws) => {
    expect(await codeOf(verifySignedRequest(jws, revocationRules, deps))).toBe('TEST_SIGNATURE_INVALID');
  });

  it('given a signed payload off the contract, then the ContractError is handed to the failure factory (CONTRACT_INVALID)', async () => {
    const jws = await signJws(JSON.stringify({ grant_id: 'grt-1', revoked_by: 'director-1' }), keys['director'] as Ed25519SigningKey);
    expect(await codeOf(verifySignedRequest(jws, revocationRules, deps))).toBe('CONTRACT_INVALID');
  });

  describe('a kind with a typ', () => {
    const applicationRules = { ...SIGNED_REQUESTS.policyApplication, signers: 'director', freshnessSeconds: 300 } as const;
    const fields = { document: { id: 'team_profile' } };

    it('given the typ the kind names, then it verifies', async () => {
      const { jws } = await signRequest(SIGNED_REQUESTS.policyApplication, fields, { principalId: 'director-1', key: keys['director'] as Ed25519SigningKey, now: NOW });
      await expect(verifySignedRequest(jws, applicationRules, deps)).resolves.toMatchObject({ signer: 'director-1' });
    });

    it.each([
      ['no typ', {}],
      ['another typ', { typ: 'writ-grant+jwt' }],
    ])('given a director-signed JWS with %s, then TEST_SIGNATURE_INVALID', async (_note, options) => {
      const payload = { ...fields, applied_by: 'director-1', applied_at: NOW.toISOString() };
      const jws = await signJws(JSON.stringify(payload), keys['director'] as Ed25519SigningKey, options);
      expect(await codeOf(verifySignedRequest(jws, applicationRules, deps))).toBe('TEST_SIGNATURE_INVALID');
    });
  });

  describe("signers: 'any', freshness not checked (a decider downstream rules on the signer)", () => {
    const anyRules = { ...SIGNED_REQUESTS.approvalResolution, signers: 'any', freshnessSeconds: null } as const;
    const resolution = (principalId: string, key: string, signedAt: Date) =>
      signRequest(SIGNED_REQUESTS.approvalResolution, { approval_id: 'apr-1', decision: 'grant', packet_hash: `sha256:${'c'.repeat(64)}` }, { principalId, key: keys[key] as Ed25519SigningKey, now: signedAt });

    it('given an observer signing a day ago, then it verifies and the record is handed over for the decider', async () => {
      const { jws } = await resolution('observer-1', 'observer', at(-86_400));
      const verified = await verifySignedRequest(jws, anyRules, deps);
      expect(verified.principal.roles).toEqual(['observer']);
    });

    it('given a forged signature or an unknown signer, then they are still refused', async () => {
      expect(await codeOf(verifySignedRequest((await resolution('observer-1', 'forger', NOW)).jws, anyRules, deps))).toBe('TEST_SIGNATURE_INVALID');
      expect(await codeOf(verifySignedRequest((await resolution('stranger-1', 'stranger', NOW)).jws, anyRules, deps))).toBe('TEST_SIGNER_NOT_ALLOWED');
    });
  });
});

describe('claimedSignedRequest', () => {
  it('given a JWS, then it reads the claimed payload without verifying it', () => {
    const payload = { ...revocationFields, revoked_by: 'director-1', revoked_at: NOW.toISOString() };
    expect(claimedSignedRequest(`${b64({ alg: 'EdDSA' })}.${b64(payload)}.c2ln`, SIGNED_REQUESTS.grantRevocation, failure)).toEqual(payload);
  });
});

describe('signRequest', () => {
  it('given fields off the contract, then CONTRACT_INVALID and nothing is signed', async () => {
    const key = await generateEd25519Key();
    const bad = { grant_id: 'grt-1', task_id: 'task-1', reason: '' };
    expect(await codeOf(signRequest(SIGNED_REQUESTS.grantRevocation, bad, { principalId: 'director-1', key, now: NOW }))).toBe('CONTRACT_INVALID');
  });
});
