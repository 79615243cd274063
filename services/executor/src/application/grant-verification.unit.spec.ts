import { KeySet, generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { IDS, T0, signSampleGrant, type SampleGrant } from '../../test/grants.js';
import { paramsSha256, verifyGrant, type VerifyGrantInput } from './grant-verification.js';

let key: Ed25519SigningKey;
let keys: KeySet;
const params = { argv: ['sh', '-c', 'echo hello > out.txt'] };

beforeAll(async () => {
  key = await generateEd25519Key({ kid: 'approval-k1' });
  keys = KeySet.of([key]);
});

async function verify(spec: SampleGrant & { signer?: Ed25519SigningKey }, input: Partial<VerifyGrantInput> = {}) {
  const jws = await signSampleGrant(spec.signer ?? key, spec);
  return verifyGrant({ jws, grantId: 'grant-1', stepId: IDS.step_id, params, keys, issuer: 'writ-approval', audience: 'writ-executor', now: new Date(T0.getTime() + 10_000), ...input });
}

const codeOf = (result: Awaited<ReturnType<typeof verifyGrant>>) => (result.ok ? 'ok' : result.code);

describe('verifyGrant (DESIGN invariant 3: the executor checks the grant itself)', () => {
  it('given a grant signed by the issuer key, when verified, then its claims come back with the kid', async () => {
    const result = await verify({});
    expect(result).toMatchObject({ ok: true, kid: 'approval-k1', claims: { jti: 'grant-1', task_id: 'task-1', max_uses: 1 } });
  });

  it('given the grant pins the params it was minted for, when the same params come, then it verifies', async () => {
    expect(codeOf(await verify({ claims: { constraints: { params_sha256: paramsSha256(params) } } }))).toBe('ok');
  });

  it.each<[string, SampleGrant & { signer?: () => Promise<Ed25519SigningKey> }, Partial<VerifyGrantInput>, string]>([
    ['a key of the same kid that is not in the log (forged)', { signer: () => generateEd25519Key({ kid: 'approval-k1' }) }, {}, 'GRANT_SIGNATURE_INVALID'],
    ['an unknown kid', { signer: () => generateEd25519Key({ kid: 'other-k2' }) }, {}, 'GRANT_SIGNATURE_INVALID'],
    ['no keys at all for the issuer', {}, { keys: KeySet.of([]) }, 'GRANT_SIGNATURE_INVALID'],
    ['another typ (a receipt passing for a grant)', { typ: 'writ-receipt+jws' }, {}, 'GRANT_SIGNATURE_INVALID'],
    ['another issuer', { issuer: 'writ-intruder' }, {}, 'GRANT_CLAIMS_INVALID'],
    ['another audience', { audience: 'writ-someone-else' }, {}, 'GRANT_CLAIMS_INVALID'],
    ['an expired grant', { issuedAt: new Date(T0.getTime() - 600_000), expiresAt: new Date(T0.getTime() - 300_000) }, {}, 'GRANT_EXPIRED'],
    ['a grant not valid yet', { claims: { nbf: Math.floor(T0.getTime() / 1000) + 120 } }, {}, 'GRANT_NOT_YET_VALID'],
    ['claims that are not a capability grant', { claims: { max_uses: 0 } }, {}, 'GRANT_CLAIMS_INVALID'],
    ['an unknown claim', { claims: { admin: true } }, {}, 'GRANT_CLAIMS_INVALID'],
    ['another grant than the command names', {}, { grantId: 'grant-2' }, 'GRANT_CLAIMS_INVALID'],
    ['another step than the command', {}, { stepId: 'step-2' }, 'GRANT_WRONG_ATTEMPT'],
    ['other params than the grant pinned', { claims: { constraints: { params_sha256: paramsSha256({ argv: ['true'] }) } } }, {}, 'GRANT_PARAMS_MISMATCH'],
  ])('given %s, then the refusal is %s', async (_note, spec, input, code) => {
    const signer = spec.signer === undefined ? key : await spec.signer();
    expect(codeOf(await verify({ ...spec, signer }, input))).toBe(code);
  });

  it('given grant.issued in the log, when the JWS carries other claims than it recorded, then GRANT_CLAIMS_INVALID; the same claims verify', async () => {
    const first = await verify({});
    if (!first.ok) throw new Error('the sample grant must verify');
    expect(codeOf(await verify({}, { recorded: first.claims }))).toBe('ok');
    expect(codeOf(await verify({}, { recorded: { ...first.claims, max_uses: 5 } }))).toBe('GRANT_CLAIMS_INVALID');
  });

  it('given a tampered payload, then GRANT_SIGNATURE_INVALID', async () => {
    const jws = await signSampleGrant(key);
    const [header, payload, signature] = jws.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>;
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, max_uses: 1000 })).toString('base64url')}.${signature}`;
    expect(JSON.parse(Buffer.from(header ?? '', 'base64url').toString())).toMatchObject({ typ: 'writ-grant+jwt', kid: 'approval-k1' });
    const result = await verifyGrant({ jws: forged, grantId: 'grant-1', stepId: IDS.step_id, params, keys, issuer: 'writ-approval', audience: 'writ-executor', now: T0 });
    expect(codeOf(result)).toBe('GRANT_SIGNATURE_INVALID');
  });

  it('given params as objects with keys in another order, then params_sha256 is the same (RFC 8785)', () => {
    expect(paramsSha256({ a: 1, b: [2, 3] })).toBe(paramsSha256({ b: [2, 3], a: 1 }));
  });
});
