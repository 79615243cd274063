import type { PrincipalRole, PrincipalType, PublicEd25519Jwk, TrustAnchor } from '@writ/contracts';
import { generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { RegistrationAuthority, type PrincipalEventLike } from './registration-authority.js';
import { principalHistory, type PrincipalHistory } from './resolution-authority.js';
import { signServiceEnrollment } from './service-enrollment.js';
import { SIGNED_REQUESTS, signRequest } from './signed-request.js';

/**
 * The registration authority check on in-memory principal streams built the way ingress
 * and the services append them: every case is a log a reader could be handed, and each
 * refusal asserts its stable code.
 */

const T = (offsetSeconds: number) => new Date(Date.parse('2030-06-01T12:00:00.000Z') + offsetSeconds * 1000);
let anchorKey: Ed25519SigningKey;
let anchor: TrustAnchor;
const k: Record<string, Ed25519SigningKey> = {};

type Log = Map<string, PrincipalEventLike[]>;
const pub = (key: Ed25519SigningKey) => key.publicJwk as PublicEd25519Jwk;

/** What ingress appends for an operator-signed registration (the JWS as its authorization). */
async function registerSigned(
  log: Log,
  id: string,
  roles: PrincipalRole[],
  key: Ed25519SigningKey,
  by: { id: string; key: Ed25519SigningKey },
  at: Date,
  options: { type?: PrincipalType; occurredAt?: Date; tamper?: (payload: Record<string, unknown>) => void } = {},
): Promise<void> {
  const { payload: signed, jws } = await signRequest(
    SIGNED_REQUESTS.principalRegistration,
    { principal_id: id, principal_type: options.type ?? 'user', display_name: id, roles, keys: [pub(key)] },
    { principalId: by.id, key: by.key, now: at },
  );
  const payload: Record<string, unknown> = { principal_id: id, principal_type: signed.principal_type, display_name: id, roles, keys: [pub(key)], registered_by: by.id, at: signed.registered_at, authorization: jws };
  options.tamper?.(payload);
  log.set(id, [...(log.get(id) ?? []), { event_type: 'principal.registered', payload, occurred_at: (options.occurredAt ?? at).toISOString() }]);
}

async function addKeySigned(log: Log, id: string, roles: PrincipalRole[], key: Ed25519SigningKey, by: { id: string; key: Ed25519SigningKey }, at: Date): Promise<void> {
  const { jws } = await signRequest(
    SIGNED_REQUESTS.principalRegistration,
    { principal_id: id, principal_type: 'user', display_name: id, roles, keys: [pub(key)] },
    { principalId: by.id, key: by.key, now: at },
  );
  log.get(id)?.push({ event_type: 'principal.key_added', payload: { key: pub(key), added_by: by.id, at: at.toISOString(), authorization: jws }, occurred_at: at.toISOString() });
}

function revoke(log: Log, id: string, kid: string, at: Date): void {
  log.get(id)?.push({ event_type: 'principal.key_revoked', payload: { kid, reason: 'compromised', revoked_by: 'operator', at: at.toISOString() }, occurred_at: at.toISOString() });
}

const authority = (log: Log, trust: TrustAnchor | undefined = anchor) => new RegistrationAuthority((id) => log.get(id), trust);
const registrationCode = async (log: Log, id: string, trust?: TrustAnchor) => {
  const verdict = (await authority(log, trust ?? anchor).check(id))?.registration;
  return verdict === undefined ? 'NONE' : verdict.ok ? 'OK' : verdict.code;
};
const keyCode = async (log: Log, id: string, kid: string) => (await authority(log).key(id, kid))?.code ?? 'OK';
const OPERATOR = () => ({ id: 'operator', key: anchorKey });

beforeAll(async () => {
  anchorKey = await generateEd25519Key({ kid: 'operator-k1' });
  anchor = { principal_id: 'operator', keys: [pub(anchorKey)] };
  for (const name of ['dir', 'dir2', 'op2', 'op2b', 'op3', 'obs', 'agent', 'svc', 'svc2', 'late']) k[name] = await generateEd25519Key({ kid: `${name}-k1` });
});

describe('RegistrationAuthority', () => {
  it('given a director registered by the trust anchor’s operator, then its registration and key are authorized', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, OPERATOR(), T(0));
    const checked = await authority(log).check('director-1');
    expect(checked?.registration).toMatchObject({ ok: true, via: 'anchor', signer: 'operator' });
    expect(checked?.keys.get('dir-k1')).toMatchObject({ ok: true });
  });

  it('given a chain of two operators (anchor → op-2 → director), then the director is authorized through op-2', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'op-2', ['operator'], k['op2'] as Ed25519SigningKey, OPERATOR(), T(0));
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, { id: 'op-2', key: k['op2'] as Ed25519SigningKey }, T(60));
    expect((await authority(log).check('director-1'))?.registration).toMatchObject({ ok: true, via: 'operator', signer: 'op-2' });
  });

  it('given a director appended with no authorization (a bus credential, not an operator), then REGISTRATION_UNSIGNED', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, OPERATOR(), T(0), { tamper: (payload) => delete payload['authorization'] });
    expect(await registrationCode(log, 'director-1')).toBe('REGISTRATION_UNSIGNED');
    expect(await keyCode(log, 'director-1', 'dir-k1')).toBe('REGISTRATION_UNSIGNED');
  });

  it('given an authorization signed by a key that is not the operator’s, then REGISTRATION_SIGNATURE_INVALID', async () => {
    const log: Log = new Map();
    // A forger claims to be the anchor's operator, signing with its own key.
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, { id: 'operator', key: k['late'] as Ed25519SigningKey }, T(0));
    expect(await registrationCode(log, 'director-1')).toBe('REGISTRATION_SIGNATURE_INVALID');
    // The same under a principal registered in the log: no key it ever held verifies it.
    await registerSigned(log, 'op-2', ['operator'], k['op2'] as Ed25519SigningKey, OPERATOR(), T(0));
    await registerSigned(log, 'director-2', ['director'], k['dir2'] as Ed25519SigningKey, { id: 'op-2', key: k['late'] as Ed25519SigningKey }, T(0));
    expect(await registrationCode(log, 'director-2')).toBe('REGISTRATION_SIGNATURE_INVALID');
  });

  it('given an authorization that is not a JWS, then REGISTRATION_SIGNATURE_INVALID', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, OPERATOR(), T(0), { tamper: (payload) => (payload['authorization'] = 'not.a.jws') });
    expect(await registrationCode(log, 'director-1')).toBe('REGISTRATION_SIGNATURE_INVALID');
  });

  it('given a director registered by an observer, or by an agent holding the operator role, then REGISTRATION_SIGNER_NOT_OPERATOR', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'observer-1', ['observer'], k['obs'] as Ed25519SigningKey, OPERATOR(), T(0));
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, { id: 'observer-1', key: k['obs'] as Ed25519SigningKey }, T(60));
    expect(await registrationCode(log, 'director-1')).toBe('REGISTRATION_SIGNER_NOT_OPERATOR');
    await registerSigned(log, 'agent-1', ['operator'], k['agent'] as Ed25519SigningKey, OPERATOR(), T(0), { type: 'agent' });
    await registerSigned(log, 'director-2', ['director'], k['dir2'] as Ed25519SigningKey, { id: 'agent-1', key: k['agent'] as Ed25519SigningKey }, T(60));
    expect(await registrationCode(log, 'director-2')).toBe('REGISTRATION_SIGNER_NOT_OPERATOR');
    // And a signer the log has never heard of.
    await registerSigned(log, 'director-3', ['director'], k['late'] as Ed25519SigningKey, { id: 'ghost', key: k['late'] as Ed25519SigningKey }, T(60));
    expect(await registrationCode(log, 'director-3')).toBe('REGISTRATION_SIGNER_NOT_OPERATOR');
  });

  it('given an operator whose key was revoked before it signed, then REGISTRATION_SIGNER_NOT_OPERATOR (what it signed before still holds)', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'op-2', ['operator'], k['op2'] as Ed25519SigningKey, OPERATOR(), T(0));
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, { id: 'op-2', key: k['op2'] as Ed25519SigningKey }, T(60));
    revoke(log, 'op-2', 'op2-k1', T(120));
    await registerSigned(log, 'director-2', ['director'], k['dir2'] as Ed25519SigningKey, { id: 'op-2', key: k['op2'] as Ed25519SigningKey }, T(180));
    const checked = authority(log);
    expect((await checked.check('director-1'))?.registration).toMatchObject({ ok: true });
    expect((await checked.check('director-2'))?.registration).toMatchObject({ ok: false, code: 'REGISTRATION_SIGNER_NOT_OPERATOR', details: { reason: 'key_not_valid_then' } });
  });

  it('given a key added to a director after its operator’s key was revoked, by that operator, then that key is refused and the earlier one stands', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'op-2', ['operator'], k['op2'] as Ed25519SigningKey, OPERATOR(), T(0));
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, { id: 'op-2', key: k['op2'] as Ed25519SigningKey }, T(60));
    revoke(log, 'op-2', 'op2-k1', T(120));
    await addKeySigned(log, 'director-1', ['director'], k['late'] as Ed25519SigningKey, { id: 'op-2', key: k['op2'] as Ed25519SigningKey }, T(180));
    expect(await keyCode(log, 'director-1', 'late-k1')).toBe('REGISTRATION_SIGNER_NOT_OPERATOR');
    expect(await keyCode(log, 'director-1', 'dir-k1')).toBe('OK');
  });

  it('given an operator whose own registration is unsigned, then what it signs is REGISTRATION_SIGNER_UNAUTHORIZED', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'op-2', ['operator'], k['op2'] as Ed25519SigningKey, OPERATOR(), T(0), { tamper: (payload) => delete payload['authorization'] });
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, { id: 'op-2', key: k['op2'] as Ed25519SigningKey }, T(60));
    const verdict = (await authority(log).check('director-1'))?.registration;
    expect(verdict).toMatchObject({ ok: false, code: 'REGISTRATION_SIGNER_UNAUTHORIZED', details: { cause: 'REGISTRATION_UNSIGNED' } });
  });

  it('given an operator who signed with a key added to it without authorization, then REGISTRATION_SIGNER_UNAUTHORIZED', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'op-2', ['operator'], k['op2'] as Ed25519SigningKey, OPERATOR(), T(0));
    log.get('op-2')?.push({ event_type: 'principal.key_added', payload: { key: pub(k['op2b'] as Ed25519SigningKey), added_by: 'op-2', at: T(30).toISOString() }, occurred_at: T(30).toISOString() });
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, { id: 'op-2', key: k['op2b'] as Ed25519SigningKey }, T(60));
    expect(await registrationCode(log, 'director-1')).toBe('REGISTRATION_SIGNER_UNAUTHORIZED');
  });

  it('given a signed registration that does not match the event (roles raised, another principal, another key), then REGISTRATION_MISMATCH', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'observer-1', ['observer'], k['obs'] as Ed25519SigningKey, OPERATOR(), T(0), { tamper: (payload) => (payload['roles'] = ['director']) });
    expect(await registrationCode(log, 'observer-1')).toBe('REGISTRATION_MISMATCH');
    // Another principal's genuine registration, copied onto a new one.
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, OPERATOR(), T(0));
    const copied = (log.get('director-1')?.[0]?.payload as { authorization: string }).authorization;
    await registerSigned(log, 'director-2', ['director'], k['dir'] as Ed25519SigningKey, OPERATOR(), T(0), { tamper: (payload) => (payload['authorization'] = copied) });
    expect(await registrationCode(log, 'director-2')).toBe('REGISTRATION_MISMATCH');
    // The director's genuine authorization, carrying another key.
    await registerSigned(log, 'director-3', ['director'], k['dir2'] as Ed25519SigningKey, OPERATOR(), T(0), { tamper: (payload) => (payload['keys'] = [pub(k['late'] as Ed25519SigningKey)]) });
    expect(await keyCode(log, 'director-3', 'late-k1')).toBe('REGISTRATION_MISMATCH');
  });

  it('given a signed registration appended long after it was signed (a replay), then REGISTRATION_MISMATCH', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, OPERATOR(), T(0), { occurredAt: T(3_600) });
    const verdict = (await authority(log).check('director-1'))?.registration;
    expect(verdict).toMatchObject({ ok: false, code: 'REGISTRATION_MISMATCH' });
    expect(verdict?.ok === false && verdict.message).toMatch(/replay/);
  });

  it('given no trust anchor, or operators that only register each other, then REGISTRATION_NOT_ANCHORED', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, OPERATOR(), T(0));
    expect((await new RegistrationAuthority((id) => log.get(id), undefined).check('director-1'))?.registration).toMatchObject({ ok: false, code: 'REGISTRATION_NOT_ANCHORED' });
    // op-2 registered by op-3 and op-3 by op-2: signed, operators both, and anchored nowhere.
    await registerSigned(log, 'op-2', ['operator'], k['op2'] as Ed25519SigningKey, { id: 'op-3', key: k['op3'] as Ed25519SigningKey }, T(0));
    await registerSigned(log, 'op-3', ['operator'], k['op3'] as Ed25519SigningKey, { id: 'op-2', key: k['op2'] as Ed25519SigningKey }, T(0));
    await registerSigned(log, 'director-2', ['director'], k['dir2'] as Ed25519SigningKey, { id: 'op-2', key: k['op2'] as Ed25519SigningKey }, T(60));
    expect(await registrationCode(log, 'director-2')).toBe('REGISTRATION_NOT_ANCHORED');
    expect(await registrationCode(log, 'op-3')).toBe('REGISTRATION_NOT_ANCHORED');
  });

  describe('service principals', () => {
    /** What RotatingServiceKey appends: its own registration and key rotations, with the enrollment as their authorization. */
    function serviceStream(id: string, enrollment: string | undefined, keys: Ed25519SigningKey[], at: Date, roles: PrincipalRole[] = []): PrincipalEventLike[] {
      const auth = enrollment === undefined ? {} : { authorization: enrollment };
      const [first, ...rest] = keys as [Ed25519SigningKey, ...Ed25519SigningKey[]];
      return [
        {
          event_type: 'principal.registered',
          payload: { principal_id: id, principal_type: 'service', display_name: id, roles, keys: [pub(first)], registered_by: id, at: at.toISOString(), ...auth },
          occurred_at: at.toISOString(),
        },
        ...rest.map((key, index) => ({
          event_type: 'principal.key_added',
          payload: { key: pub(key), added_by: id, at: T(86_400 * (index + 1)).toISOString(), ...auth },
          occurred_at: T(86_400 * (index + 1)).toISOString(),
        })),
      ];
    }

    it('given a service enrolled by the operator, then its registration and every rotated key are authorized (a rotation days later too)', async () => {
      const enrollment = await signServiceEnrollment('writ-approval', { principalId: 'operator', key: anchorKey, now: T(-60) });
      const log: Log = new Map([['writ-approval', serviceStream('writ-approval', enrollment, [k['svc'] as Ed25519SigningKey, k['svc2'] as Ed25519SigningKey], T(0))]]);
      expect(await keyCode(log, 'writ-approval', 'svc-k1')).toBe('OK');
      expect(await keyCode(log, 'writ-approval', 'svc2-k1')).toBe('OK');
      expect((await authority(log).check('writ-approval'))?.registration).toMatchObject({ ok: true, via: 'enrollment' });
    });

    it('given a key the service "registered" without an enrollment (or after its valid one), then REGISTRATION_UNSIGNED for that key', async () => {
      const enrollment = await signServiceEnrollment('writ-approval', { principalId: 'operator', key: anchorKey, now: T(-60) });
      const stream = serviceStream('writ-approval', enrollment, [k['svc'] as Ed25519SigningKey], T(0));
      stream.push({ event_type: 'principal.key_added', payload: { key: pub(k['late'] as Ed25519SigningKey), added_by: 'writ-approval', at: T(60).toISOString() }, occurred_at: T(60).toISOString() });
      const log: Log = new Map([['writ-approval', stream]]);
      expect(await keyCode(log, 'writ-approval', 'svc-k1')).toBe('OK');
      expect(await keyCode(log, 'writ-approval', 'late-k1')).toBe('REGISTRATION_UNSIGNED');
    });

    it('given another service’s enrollment, roles it was not enrolled for, or an enrollment by a non-operator, then refused with the code', async () => {
      const receipt = await signServiceEnrollment('writ-receipt', { principalId: 'operator', key: anchorKey, now: T(-60) });
      const approval = await signServiceEnrollment('writ-approval', { principalId: 'operator', key: anchorKey, now: T(-60) });
      const log: Log = new Map([
        ['writ-approval', serviceStream('writ-approval', receipt, [k['svc'] as Ed25519SigningKey], T(0))],
        ['writ-policy', serviceStream('writ-policy', await signServiceEnrollment('writ-policy', { principalId: 'operator', key: anchorKey, now: T(-60) }), [k['svc2'] as Ed25519SigningKey], T(0), ['director'])],
      ]);
      expect(await keyCode(log, 'writ-approval', 'svc-k1')).toBe('REGISTRATION_MISMATCH');
      expect(await registrationCode(log, 'writ-policy')).toBe('REGISTRATION_MISMATCH');
      await registerSigned(log, 'observer-1', ['observer'], k['obs'] as Ed25519SigningKey, OPERATOR(), T(-120));
      const byObserver = await signServiceEnrollment('writ-executor', { principalId: 'observer-1', key: k['obs'] as Ed25519SigningKey, now: T(-60) });
      log.set('writ-executor', serviceStream('writ-executor', byObserver, [k['late'] as Ed25519SigningKey], T(0)));
      expect(await keyCode(log, 'writ-executor', 'late-k1')).toBe('REGISTRATION_SIGNER_NOT_OPERATOR');
      // An enrollment is for a service: a user principal carrying one is not authorized by it.
      log.set('user-1', [{ event_type: 'principal.registered', payload: { principal_id: 'user-1', principal_type: 'user', display_name: 'u', roles: ['director'], keys: [pub(k['dir'] as Ed25519SigningKey)], registered_by: 'user-1', at: T(0).toISOString(), authorization: approval } }]);
      expect(await registrationCode(log, 'user-1')).toBe('REGISTRATION_MISMATCH');
    });

    it('given an enrollment JWS tampered with, then REGISTRATION_SIGNATURE_INVALID', async () => {
      const enrollment = await signServiceEnrollment('writ-approval', { principalId: 'operator', key: anchorKey, now: T(-60) });
      const [head, , sig] = enrollment.split('.');
      const payload = Buffer.from(JSON.stringify({ principal_id: 'writ-approval', roles: ['director'], enrolled_by: 'operator', enrolled_at: T(-60).toISOString() })).toString('base64url');
      const forged = `${head}.${payload}.${sig}`;
      const log: Log = new Map([['writ-approval', serviceStream('writ-approval', forged, [k['svc'] as Ed25519SigningKey], T(0), ['director'])]]);
      expect(await keyCode(log, 'writ-approval', 'svc-k1')).toBe('REGISTRATION_SIGNATURE_INVALID');
      // And a raw JWS signed by the anchor over something else entirely is no registration.
      const other = await signJws('{"hello":"world"}', anchorKey);
      log.set('writ-receipt', serviceStream('writ-receipt', other, [k['svc2'] as Ed25519SigningKey], T(0)));
      expect(await keyCode(log, 'writ-receipt', 'svc2-k1')).toBe('REGISTRATION_SIGNATURE_INVALID');
    });
  });

  it('as the RegistrationCheck of resolution-authority.ts, then it names the code of what is unauthorized, or nothing', async () => {
    const log: Log = new Map();
    await registerSigned(log, 'director-1', ['director'], k['dir'] as Ed25519SigningKey, OPERATOR(), T(0));
    await registerSigned(log, 'director-2', ['director'], k['dir2'] as Ed25519SigningKey, OPERATOR(), T(0), { tamper: (payload) => delete payload['authorization'] });
    const check = authority(log).registrationCheck();
    const history = (id: string) => principalHistory(id, log.get(id) ?? []) as PrincipalHistory;
    expect(await check(history('director-1'), history('director-1').keys[0])).toBeUndefined();
    expect(await check(history('director-2'), history('director-2').keys[0])).toMatch(/^REGISTRATION_UNSIGNED: /);
  });
});
