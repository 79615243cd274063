import type { PolicyProfileRecord } from '@writ/contracts';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { PERMISSIVE, builtinCatalog, builtinVersion, recordOf, teamDocument } from '../../test/profiles.js';
import { PolicyServiceError } from './policy-service.errors.js';
import { ProfileCatalog, type ProfileTrust } from './profile-catalog.js';

const doc = teamDocument;

/** Trust for these tests: a record "signed" by `director` (its application_jws names who signed), or nothing. */
const SIGNED_BY_DIRECTOR = 'signed-by-director';
const trust: ProfileTrust = {
  verify: async (record) => {
    if (record.application_jws !== SIGNED_BY_DIRECTOR) throw new PolicyServiceError('POLICY_RECORD_SIGNATURE_INVALID', `${record.profile_id} is not signed by a director`);
  },
};
const signed = (input: unknown, appliedAt: string, overrides: Partial<PolicyProfileRecord> = {}) =>
  recordOf(input, { applied_by: 'director-1', applied_at: appliedAt, application_jws: SIGNED_BY_DIRECTOR, ...overrides });
const put = (value: unknown) => ({ operation: 'PUT' as const, value });
/** What a squatter on the bucket would write: every class allowed. */

const T1 = '2030-01-02T00:00:00.000Z';
const T2 = '2030-01-03T00:00:00.000Z';

describe('ProfileCatalog', () => {
  const v1 = signed(doc(), T1);
  const v2 = signed(doc({ destructive_commands: 'deny' }), T2, { previous_version: v1.version });

  it('given a trusted record, then it is loaded; a later one replaces it', async () => {
    const catalog = new ProfileCatalog({ trust });
    expect(await catalog.accept('team_profile', put(v1))).toMatchObject({ status: 'loaded', version: v1.version, previous_version: null });
    expect(await catalog.accept('team_profile', put(v2))).toMatchObject({ status: 'loaded', version: v2.version, previous_version: v1.version });
    expect(catalog.get('team_profile')?.record.version).toBe(v2.version);
    expect(catalog.refusals()).toEqual([]);
  });

  it('given a permissive record written straight into the bucket (no signed application), then it is refused with its code, the last good version stays in force, and the refusal is reported until a good record arrives', async () => {
    const catalog = new ProfileCatalog({ trust });
    await catalog.accept('team_profile', put(v1));
    const permissive = recordOf(doc(PERMISSIVE), { applied_by: 'director-1', applied_at: T2 });

    expect(await catalog.accept('team_profile', put(permissive))).toMatchObject({ status: 'rejected', code: 'POLICY_RECORD_SIGNATURE_INVALID', kept_version: v1.version });
    expect(catalog.get('team_profile')?.record.version).toBe(v1.version);
    expect(catalog.refusals()).toEqual(['team_profile: POLICY_RECORD_SIGNATURE_INVALID']);

    await catalog.accept('team_profile', put(v2));
    expect(catalog.refusals()).toEqual([]);
  });

  it('given a refused record of a built-in, then the built-in shipped in code stays in force', async () => {
    const catalog = new ProfileCatalog({ trust, builtins: [recordOf(BUILTIN_POLICY_DOCUMENTS.readonly_analysis)] });
    const permissive = recordOf({ ...BUILTIN_POLICY_DOCUMENTS.readonly_analysis, ...PERMISSIVE });
    expect(await catalog.accept('readonly_analysis', put(permissive))).toMatchObject({ status: 'rejected', kept_version: builtinVersion('readonly_analysis') });
    expect(catalog.get('readonly_analysis')?.record.version).toBe(builtinVersion('readonly_analysis'));
  });

  it.each([
    { note: 'an older signed version replayed over a later one', replay: () => signed(doc(PERMISSIVE), T1) },
    { note: 'another version signed at the very same instant', replay: () => signed(doc(PERMISSIVE), T2) },
    { note: "a built-in record after a director's version", replay: () => recordOf(doc(PERMISSIVE)) },
  ])('given $note, then it is refused POLICY_RECORD_STALE and the version in force stays', async ({ replay }) => {
    const lenient: ProfileTrust = { verify: async () => undefined };
    const catalog = new ProfileCatalog({ trust: lenient });
    await catalog.accept('team_profile', put(v2));
    expect(await catalog.accept('team_profile', put(replay()))).toMatchObject({ status: 'rejected', code: 'POLICY_RECORD_STALE', kept_version: v2.version });
    expect(catalog.get('team_profile')?.record.version).toBe(v2.version);
  });

  it('given the same content again, then it is unchanged (whatever its time)', async () => {
    const catalog = new ProfileCatalog({ trust });
    await catalog.accept('team_profile', put(v2));
    expect(await catalog.accept('team_profile', put({ ...v2, applied_at: T1 }))).toMatchObject({ status: 'unchanged', version: v2.version });
  });

  it('given a damaged record, or a value that is not JSON, then it is POLICY_RECORD_INVALID and the previous version stays', async () => {
    const catalog = new ProfileCatalog({ trust });
    await catalog.accept('team_profile', put(v1));
    expect(await catalog.accept('team_profile', put({ ...v2, version: v1.version }))).toMatchObject({ status: 'rejected', code: 'POLICY_RECORD_INVALID', kept_version: v1.version });
    expect(await catalog.accept('team_profile', { operation: 'PUT', error: new SyntaxError('Unexpected token') })).toMatchObject({ status: 'rejected', code: 'POLICY_RECORD_INVALID', kept_version: v1.version });
    expect(catalog.get('team_profile')?.record.version).toBe(v1.version);
  });

  it('given a refused record of a profile never loaded, then the profile stays unknown (evaluation denies: never fail open)', async () => {
    const catalog = new ProfileCatalog({ trust });
    expect(await catalog.accept('team_profile', put(recordOf(doc())))).toMatchObject({ status: 'rejected', kept_version: null });
    expect(catalog.get('team_profile')).toBeUndefined();
  });

  it('given a delete in the bucket, then the loaded version stays (the log still holds the profile)', async () => {
    const catalog = new ProfileCatalog({ trust });
    await catalog.accept('team_profile', put(v1));
    expect(await catalog.accept('team_profile', { operation: 'DEL' })).toMatchObject({ status: 'deleted', kept_version: v1.version });
    expect(catalog.get('team_profile')?.record.version).toBe(v1.version);
  });

  it('given a key named like an Object prototype member, then it is unknown, not inherited; the built-ins catalog holds every built-in', () => {
    expect(new ProfileCatalog({ trust }).get('constructor')).toBeUndefined();
    expect(Object.keys(builtinCatalog().versions()).sort()).toEqual(Object.keys(BUILTIN_POLICY_DOCUMENTS).sort());
  });
});
