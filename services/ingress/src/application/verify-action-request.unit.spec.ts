import { type IngressRejectionCode, type PublicEd25519Jwk } from '@writ/contracts';
import { KeySet, generateEd25519Key, importEd25519PublicJwk, signJws, type Ed25519SigningKey } from '@writ/crypto';
import type { PrincipalRecord } from '@writ/runtime';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PrincipalDirectory } from './ports.js';
import { verifyActionRequest, type VerificationInput } from './verify-action-request.js';

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
