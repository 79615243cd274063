import { POLICY_APPLICATION_JWS_TYPE, hasErrorCode, type PolicyProfileRecord, type PrincipalRole, type PrincipalType } from '@writ/contracts';
import { generateEd25519Key, signJws, type Ed25519SigningKey } from '@writ/crypto';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { keyWindows, type PrincipalRecord } from '@writ/runtime';
import { beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIVE, recordOf, teamDocument } from '../../test/profiles.js';
import { ProfileAuthority } from './profile-authority.js';

const REGISTERED = '2030-01-01T00:00:00.000Z';
const APPLIED = '2030-01-02T00:00:00.000Z';
const ROTATED = '2030-01-03T00:00:00.000Z';

const doc = teamDocument;

interface Signer {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

const principals = new Map<string, PrincipalRecord>();
const keyEvents = new Map<string, { event_type: string; payload: unknown }[]>();
let director: Signer;
let retiredDirectorKey: Ed25519SigningKey;
let lateDirector: Signer;
let observer: Signer;
let agent: Signer;

async function register(id: string, type: PrincipalType, roles: PrincipalRole[], at = REGISTERED): Promise<Signer> {
  const key = await generateEd25519Key({ kid: `${id}-k1` });
  principals.set(id, { principal_id: id, principal_type: type, display_name: id, roles, keys: new Map([[key.kid, key.publicJwk]]), revoked_kids: new Set() } as PrincipalRecord);
  keyEvents.set(id, [{ event_type: 'principal.registered', payload: { principal_id: id, principal_type: type, display_name: id, roles, keys: [key.publicJwk], registered_by: 'operator', at } }]);
  return { id, key };
}

const authority = () =>
  new ProfileAuthority({
    principals: { lookup: async (id) => principals.get(id) },
    keys: { windows: async (id) => keyWindows(keyEvents.get(id) ?? []) },
    skewSeconds: 300,
  });

async function application(signer: { id: string; key: Ed25519SigningKey }, document: unknown, options: { appliedAt?: string; appliedBy?: string; typ?: string } = {}): Promise<string> {
  const payload = { document, applied_by: options.appliedBy ?? signer.id, applied_at: options.appliedAt ?? APPLIED };
  return signJws(JSON.stringify(payload), signer.key, { typ: options.typ ?? POLICY_APPLICATION_JWS_TYPE });
}

/** The record the apply handler makes of an application (the signed document's content, the JWS kept). */
const recordFor = (jws: string, input: unknown = doc(), overrides: Partial<PolicyProfileRecord> = {}): PolicyProfileRecord =>
  recordOf(input, { applied_by: director.id, applied_at: APPLIED, application_jws: jws, ...overrides });

beforeAll(async () => {
  director = await register('director-1', 'user', ['director']);
  // the director rotated: a first key, revoked at ROTATED, then the one registered above
  retiredDirectorKey = await generateEd25519Key({ kid: 'director-1-k0' });
  keyEvents.get(director.id)!.unshift({ event_type: 'principal.registered', payload: { principal_id: director.id, principal_type: 'user', display_name: director.id, roles: ['director'], keys: [retiredDirectorKey.publicJwk], registered_by: 'operator', at: '2029-01-01T00:00:00.000Z' } });
  keyEvents.get(director.id)![1] = { event_type: 'principal.key_added', payload: { key: director.key.publicJwk, added_by: director.id, at: REGISTERED } };
  keyEvents.get(director.id)!.push({ event_type: 'principal.key_revoked', payload: { kid: retiredDirectorKey.kid, reason: 'rotated', revoked_by: director.id, at: ROTATED } });
  lateDirector = await register('director-2', 'user', ['director'], '2030-01-02T00:10:00.000Z');
  observer = await register('observer-1', 'user', ['observer']);
  agent = await register('agent-1', 'agent', ['director']);
});

describe('ProfileAuthority', () => {
  it("given a director's signed application of exactly the record's content, then the record is trusted ('signed')", async () => {
    expect(await authority().verify(recordFor(await application(director, doc())))).toBe('signed');
  });

  it("given a built-in shipped in code with no signed application, then it is trusted ('builtin')", async () => {
    expect(await authority().verify(recordOf(BUILTIN_POLICY_DOCUMENTS.local_edit_allowed))).toBe('builtin');
  });

  it('given a key retired by a rotation after the application, then what it signed while it was valid stays trusted', async () => {
    expect(await authority().verify(recordFor(await application({ id: director.id, key: retiredDirectorKey }, doc())))).toBe('signed');
  });

  it('given a key added a little after applied_at (the signer’s clock behind, within the freshness window), then it is trusted', async () => {
    const jws = await application(lateDirector, doc(), { appliedAt: '2030-01-02T00:06:00.000Z' });
    expect(await authority().verify(recordFor(jws, doc(), { applied_by: lateDirector.id, applied_at: '2030-01-02T00:06:00.000Z' }))).toBe('signed');
  });

  type Case = { note: string; want: string; record: () => Promise<PolicyProfileRecord> };
  const cases: Case[] = [
    { note: 'a permissive record written straight into the bucket, unsigned', want: 'POLICY_RECORD_UNSIGNED', record: async () => recordOf(doc(PERMISSIVE), { applied_by: director.id }) },
    {
      note: 'a built-in id whose content is not the shipped built-in, unsigned',
      want: 'POLICY_RECORD_UNSIGNED',
      record: async () => recordOf({ ...BUILTIN_POLICY_DOCUMENTS.readonly_analysis, ...PERMISSIVE }),
    },
    { note: "a director's application with the record's document swapped for a permissive one", want: 'POLICY_RECORD_MISMATCH', record: async () => recordFor(await application(director, doc()), doc(PERMISSIVE)) },
    { note: 'an application of another profile', want: 'POLICY_RECORD_MISMATCH', record: async () => recordFor(await application(director, doc({ id: 'other_profile' }))) },
    { note: 'a record that names another time than its application', want: 'POLICY_RECORD_MISMATCH', record: async () => recordFor(await application(director, doc()), doc(), { applied_at: ROTATED }) },
    { note: 'a record that names another signer than its application', want: 'POLICY_RECORD_MISMATCH', record: async () => recordFor(await application(director, doc()), doc(), { applied_by: lateDirector.id }) },
    {
      note: 'a signed payload that is not an application',
      want: 'POLICY_RECORD_MISMATCH',
      record: async () => recordFor(await signJws(JSON.stringify({ applied_by: director.id, applied_at: APPLIED, what: 'else' }), director.key, { typ: POLICY_APPLICATION_JWS_TYPE })),
    },
    { note: 'an observer', want: 'POLICY_RECORD_SIGNER_NOT_ALLOWED', record: async () => recordFor(await application(observer, doc()), doc(), { applied_by: observer.id }) },
    { note: 'an agent (even with the director role)', want: 'POLICY_RECORD_SIGNER_NOT_ALLOWED', record: async () => recordFor(await application(agent, doc()), doc(), { applied_by: agent.id }) },
    {
      note: 'a principal nobody registered',
      want: 'POLICY_RECORD_SIGNER_NOT_ALLOWED',
      record: async () => recordFor(await application({ id: 'nobody', key: await generateEd25519Key({ kid: 'nobody-k1' }) }, doc()), doc(), { applied_by: 'nobody' }),
    },
    {
      note: "another key under the director's kid (forged)",
      want: 'POLICY_RECORD_SIGNATURE_INVALID',
      record: async () => recordFor(await application({ id: director.id, key: await generateEd25519Key({ kid: director.key.kid }) }, doc())),
    },
    { note: 'a director-signed JWS of another type', want: 'POLICY_RECORD_SIGNATURE_INVALID', record: async () => recordFor(await application(director, doc(), { typ: 'writ-grant+jwt' })) },
    {
      note: 'a key revoked before applied_at (a stolen retired key, backdating nothing)',
      want: 'POLICY_RECORD_SIGNATURE_INVALID',
      record: async () => recordFor(await application({ id: director.id, key: retiredDirectorKey }, doc(), { appliedAt: ROTATED }), doc(), { applied_at: ROTATED }),
    },
    {
      note: 'a key added long after applied_at (beyond the freshness window)',
      want: 'POLICY_RECORD_SIGNATURE_INVALID',
      record: async () => recordFor(await application(lateDirector, doc()), doc(), { applied_by: lateDirector.id }),
    },
    { note: 'something that is not a compact JWS', want: 'POLICY_RECORD_SIGNATURE_INVALID', record: async () => recordFor('not.a-jws') },
  ];

  it.each(cases)('given $note, then it is refused $want', async ({ record, want }) => {
    const error = await authority().verify(await record()).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(hasErrorCode(error, want)).toBe(true);
  });
});
