import { type IngressRejectionCode, type PublicEd25519Jwk } from '@writ/contracts';
import { KeySet, ed25519Fingerprint, generateEd25519Key, importEd25519PublicJwk, signJws, type Ed25519SigningKey } from '@writ/crypto';
import type { PrincipalRecord } from '@writ/runtime';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ParticipantSigner, ParticipantSigners, PrincipalDirectory } from './ports.js';
import { participantKids, verifyActionRequest, type VerificationInput } from './verify-action-request.js';

const NOW = new Date('2030-01-01T00:00:00Z');
let key: Ed25519SigningKey;
let other: Ed25519SigningKey;
let directory: PrincipalDirectory;

function request(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    action_request_id: 'ar-1',
    task: { title: 't', goal: 'g', policy_profile: 'local_edit_allowed', files_owned: ['src/**'] },
    action_class: 'read_local',
    target_resources: ['src/a.ts'],
    params: { path: 'src/a.ts' },
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'r',
    proposed_by: 'agent-1',
    proposed_at: NOW.toISOString(),
    ...overrides,
  };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeAll(async () => {
  key = await generateEd25519Key({ kid: 'agent-1-k1' });
  other = await generateEd25519Key({ kid: 'agent-1-k1' });
  const record: PrincipalRecord = {
    principal_id: 'agent-1',
    principal_type: 'agent',
    display_name: 'agent 1',
    roles: ['executor'],
    keys: new Map([[key.kid, key.publicJwk as PublicEd25519Jwk]]),
    revoked_kids: new Set(['agent-1-k0']),
  };
  directory = {
    lookup: async (id) => (id === 'agent-1' ? record : undefined),
    verificationKeys: async (r) => KeySet.of(await Promise.all([...r.keys.values()].map((jwk) => importEd25519PublicJwk(jwk)))),
  };
});

const input = (raw: string, overrides: Partial<VerificationInput> = {}): VerificationInput => ({
  raw,
  rawBytes: Buffer.byteLength(raw),
  principalId: 'agent-1',
  receivedAt: NOW,
  freshnessSeconds: 300,
  maxBytes: 256 * 1024,
  ...overrides,
});

describe('verifyActionRequest', () => {
  it('accepts a request signed by an active key of its proposer, fresh within the window', async () => {
    const verdict = await verifyActionRequest(input(await signJws(JSON.stringify(request({ proposed_at: '2030-01-01T00:04:59Z' })), key)), directory);
    expect(verdict).toMatchObject({ ok: true, kid: 'agent-1-k1', request: { action_request_id: 'ar-1' } });
  });

  const cases: { note: string; code: IngressRejectionCode; raw: () => Promise<string>; overrides?: Partial<VerificationInput>; reportsId?: boolean }[] = [
    { note: 'over the size limit', code: 'INGRESS_TOO_LARGE', raw: async () => signJws(JSON.stringify(request()), key), overrides: { maxBytes: 10 } },
    { note: 'not a JWS', code: 'INGRESS_REQUEST_INVALID', raw: async () => JSON.stringify(request()) },
    { note: 'alg none', code: 'INGRESS_SIGNATURE_INVALID', raw: async () => `${b64({ alg: 'none', kid: 'agent-1-k1' })}.${b64(request())}.c2ln` },
    { note: 'alg HS256', code: 'INGRESS_SIGNATURE_INVALID', raw: async () => `${b64({ alg: 'HS256', kid: 'agent-1-k1' })}.${b64(request())}.c2ln` },
    { note: 'no kid', code: 'INGRESS_KEY_UNKNOWN', raw: async () => signJws(JSON.stringify(request()), { privateKey: key.privateKey }) },
    { note: 'an unregistered principal', code: 'INGRESS_PRINCIPAL_UNKNOWN', raw: async () => signJws(JSON.stringify(request()), key), overrides: { principalId: 'agent-2' } },
    { note: 'a principal id that is not an Id', code: 'INGRESS_PRINCIPAL_UNKNOWN', raw: async () => signJws(JSON.stringify(request()), key), overrides: { principalId: '' } },
    { note: 'a revoked kid', code: 'INGRESS_KEY_UNKNOWN', raw: async () => signJws(JSON.stringify(request()), { ...key, kid: 'agent-1-k0' }) },
    { note: 'a forged signature under the right kid', code: 'INGRESS_SIGNATURE_INVALID', raw: async () => signJws(JSON.stringify(request()), other) },
    {
      note: 'a tampered payload',
      code: 'INGRESS_SIGNATURE_INVALID',
      raw: async () => {
        const [h, , s] = (await signJws(JSON.stringify(request()), key)).split('.');
        return `${h}.${b64(request({ reason: 'changed' }))}.${s}`;
      },
    },
    { note: 'a payload that is not JSON', code: 'INGRESS_REQUEST_INVALID', raw: async () => signJws('not json', key) },
    { note: 'an invalid ActionRequest', code: 'INGRESS_REQUEST_INVALID', raw: async () => signJws(JSON.stringify(request({ params: {} })), key), reportsId: true },
    { note: 'proposed_by someone else', code: 'INGRESS_PRINCIPAL_MISMATCH', raw: async () => signJws(JSON.stringify(request({ proposed_by: 'agent-2' })), key), reportsId: true },
    { note: 'proposed too early', code: 'INGRESS_STALE', raw: async () => signJws(JSON.stringify(request({ proposed_at: '2029-12-31T23:54:59Z' })), key), reportsId: true },
    { note: 'proposed in the future', code: 'INGRESS_STALE', raw: async () => signJws(JSON.stringify(request({ proposed_at: '2030-01-01T00:05:01Z' })), key), reportsId: true },
  ];

  it.each(cases)('refuses $note with $code', async ({ code, raw, overrides, reportsId }) => {
    const verdict = await verifyActionRequest(input(await raw(), overrides), directory);
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.code).toBe(code);
    // the claimed id is reported only once the signature verified
    expect(verdict.actionRequestId).toBe(reportsId === true ? 'ar-1' : undefined);
  });

  it('lists every offending path of an invalid ActionRequest', async () => {
    const verdict = await verifyActionRequest(input(await signJws(JSON.stringify(request({ params: {}, reason: '' })), key)), directory);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.message).toContain('params.path');
      expect(verdict.message).toContain('reason');
    }
  });
});

describe('verifyActionRequest for a participant (a spawned seed, its child key)', () => {
  let child: Ed25519SigningKey;
  let signer: ParticipantSigner;
  const participants = (found: () => ParticipantSigner | undefined): ParticipantSigners => ({
    lookup: async (id) => (id === 'seed-1' ? found() : undefined),
    verificationKey: async (s, kid) => importEd25519PublicJwk({ kty: 'OKP', crv: 'Ed25519', x: s.child_key.x, kid }),
  });

  beforeAll(async () => {
    child = await generateEd25519Key();
    signer = { seed_id: 'seed-1', status: 'active', expires_at: '2030-01-01T01:00:00Z', manifest_hash: 'a'.repeat(64), child_key: { fingerprint: ed25519Fingerprint(child.publicJwk.x), x: child.publicJwk.x } };
  });

  const seedRequest = () => request({ proposed_by: 'seed-1' });
  const seedInput = (raw: string, overrides: Partial<VerificationInput> = {}) => input(raw, { principalId: 'seed-1', ...overrides });

  it('given an active participant, when its child key signs (kid: the JWK thumbprint or the sha256 fingerprint), then it is accepted as that participant', async () => {
    for (const kid of participantKids(signer.child_key.fingerprint)) {
      const verdict = await verifyActionRequest(seedInput(await signJws(JSON.stringify(seedRequest()), { ...child, kid })), directory, participants(() => signer));
      expect(verdict).toMatchObject({ ok: true, kid, signer: { kind: 'participant', participant: { seed_id: 'seed-1' } } });
    }
    expect(participantKids(signer.child_key.fingerprint)).toContain(child.kid);
  });

  it.each([
    ['paused', { status: 'paused' as const }],
    ['retired', { status: 'retired' as const }],
    ['expired', { status: 'expired' as const }],
    ['failed', { status: 'failed' as const }],
    ['still active but past expires_at at the time of receipt', { expires_at: '2030-01-01T00:00:00Z' }],
  ])('given a participant %s, when its child key signs, then INGRESS_PARTICIPANT_INACTIVE (reporting the verified id)', async (_note, change) => {
    const verdict = await verifyActionRequest(seedInput(await signJws(JSON.stringify(seedRequest()), child)), directory, participants(() => ({ ...signer, ...change })));
    expect(verdict).toMatchObject({ ok: false, code: 'INGRESS_PARTICIPANT_INACTIVE', actionRequestId: 'ar-1' });
  });

  it('given an inactive participant, when a forger signs under its child kid, then INGRESS_SIGNATURE_INVALID (standing is judged only for a verified signature)', async () => {
    const verdict = await verifyActionRequest(seedInput(await signJws(JSON.stringify(seedRequest()), { ...other, kid: child.kid })), directory, participants(() => ({ ...signer, status: 'retired' })));
    expect(verdict).toMatchObject({ ok: false, code: 'INGRESS_SIGNATURE_INVALID' });
  });

  it('given a kid that is not the child key, then INGRESS_KEY_UNKNOWN; given no participants port, the seed is unknown', async () => {
    const raw = await signJws(JSON.stringify(seedRequest()), { ...child, kid: 'seed-1-k1' });
    expect(await verifyActionRequest(seedInput(raw), directory, participants(() => signer))).toMatchObject({ ok: false, code: 'INGRESS_KEY_UNKNOWN' });
    expect(await verifyActionRequest(seedInput(await signJws(JSON.stringify(seedRequest()), child)), directory)).toMatchObject({ ok: false, code: 'INGRESS_PRINCIPAL_UNKNOWN' });
  });

  it('given a registered principal of the same id, then its keys decide, never the child key', async () => {
    const both: ParticipantSigners = { ...participants(() => signer), lookup: async () => ({ ...signer, seed_id: 'agent-1' }) };
    const verdict = await verifyActionRequest(input(await signJws(JSON.stringify(request()), child)), directory, both);
    expect(verdict).toMatchObject({ ok: false, code: 'INGRESS_KEY_UNKNOWN' });
  });
});
