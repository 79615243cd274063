import { hasErrorCode } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { recordOf } from '../../test/profiles.js';
import { claimedApplication } from './apply-profile.handler.js';
import { ProfileCatalog } from './profile-catalog.js';
import { loadRecord, profileVersion, validateDocument, type ProfileIssue } from './profile-documents.js';

const doc = (overrides: Record<string, unknown> = {}) => ({
  id: 'team_profile',
  description: 'Commands in the workspace.',
  action_classes: { read_local: { outcome: 'allow' }, execute_command: { outcome: 'allow' } },
  destructive_commands: 'require_approval',
  ...overrides,
});

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('validateDocument', () => {
  it('given a valid document, then its version is sha256 of the canonical JSON of the parsed document', () => {
    const { document, version } = validateDocument(doc());
    expect(version).toBe(`sha256:${sha256Hex(canonicalJson(document))}`);
    expect(version).toBe(profileVersion(document));
  });

  it('given the same content in another key order, or with defaults spelled out, then the version is the same', () => {
    const reordered = Object.fromEntries(Object.entries(doc()).reverse());
    expect(validateDocument(reordered).version).toBe(validateDocument(doc()).version);
    expect(validateDocument(doc({ files_owned: 'enforce' })).version).toBe(validateDocument(doc()).version);
  });

  it('given a different content, then the version differs', () => {
    expect(validateDocument(doc({ destructive_commands: 'deny' })).version).not.toBe(validateDocument(doc()).version);
  });

  it('given several problems, then POLICY_PROFILE_INVALID lists every one of them', () => {
    const error = thrown(() =>
      validateDocument({ id: 'Not A Name', description: '', action_classes: { teleport: { outcome: 'allow' } }, destructive_commands: 'sometimes', version: '7' }),
    );
    expect(hasErrorCode(error, 'POLICY_PROFILE_INVALID')).toBe(true);
    const paths = ((error as { details: { issues: ProfileIssue[] } }).details.issues).map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['id', 'description', 'destructive_commands', 'version']));
    expect(paths.some((path) => path.startsWith('action_classes'))).toBe(true);
  });

  it('given an id with a dot, then it is refused: the id names a subject token', () => {
    const error = thrown(() => validateDocument(doc({ id: 'team.profile' })));
    expect(hasErrorCode(error, 'POLICY_PROFILE_INVALID')).toBe(true);
    expect((error as { details: { issues: ProfileIssue[] } }).details.issues.map((issue) => issue.path)).toEqual(['id']);
  });

  it('accepts every built-in', () => {
    for (const builtin of Object.values(BUILTIN_POLICY_DOCUMENTS)) expect(() => validateDocument(builtin)).not.toThrow();
  });
});

describe('loadRecord', () => {
  const record = recordOf(doc());

  it('given a record stored under its id whose version is its content, then it loads prepared under that version', () => {
    const loaded = loadRecord('team_profile', record);
    expect(loaded.prepared.profile).toMatchObject({ id: 'team_profile', version: record.version });
  });

  it.each([
    ['not a record', 'team_profile', { hello: 'world' }],
    ['stored under another key', 'other_profile', record],
    ['a version that is not its content', 'team_profile', { ...record, document: doc({ destructive_commands: 'deny' }) }],
    ['an invalid document', 'team_profile', { ...record, document: { ...record.document, destructive_commands: 'sometimes' } }],
  ])('given %s, then it is POLICY_RECORD_INVALID', (_note, key, value) => {
    expect(hasErrorCode(thrown(() => loadRecord(key, value)), 'POLICY_RECORD_INVALID')).toBe(true);
  });
});

describe('ProfileCatalog', () => {
  const v1 = recordOf(doc());
  const v2 = recordOf(doc({ destructive_commands: 'deny' }), { previous_version: v1.version });

  it('given a valid record, then it is loaded; a newer one replaces it', () => {
    const catalog = new ProfileCatalog();
    expect(catalog.accept('team_profile', { operation: 'PUT', value: v1 })).toMatchObject({ status: 'loaded', version: v1.version, previous_version: null });
    expect(catalog.accept('team_profile', { operation: 'PUT', value: v2 })).toMatchObject({ status: 'loaded', version: v2.version, previous_version: v1.version });
    expect(catalog.get('team_profile')?.record.version).toBe(v2.version);
  });

  it('given a damaged record, or a value that is not JSON, then it is rejected and the previous version stays', () => {
    const catalog = new ProfileCatalog();
    catalog.accept('team_profile', { operation: 'PUT', value: v1 });
    expect(catalog.accept('team_profile', { operation: 'PUT', value: { ...v2, version: v1.version } })).toMatchObject({ status: 'rejected', kept_version: v1.version });
    expect(catalog.accept('team_profile', { operation: 'PUT', error: new SyntaxError('Unexpected token') })).toMatchObject({ status: 'rejected', kept_version: v1.version });
    expect(catalog.get('team_profile')?.record.version).toBe(v1.version);
  });

  it('given a damaged record of a profile never loaded, then the profile stays unknown', () => {
    const catalog = new ProfileCatalog();
    expect(catalog.accept('team_profile', { operation: 'PUT', value: { nope: true } })).toMatchObject({ status: 'rejected', kept_version: null });
    expect(catalog.get('team_profile')).toBeUndefined();
  });

  it('given a delete in the bucket, then the loaded version stays (the log still holds the profile)', () => {
    const catalog = new ProfileCatalog();
    catalog.accept('team_profile', { operation: 'PUT', value: v1 });
    expect(catalog.accept('team_profile', { operation: 'DEL' })).toMatchObject({ status: 'deleted', kept_version: v1.version });
    expect(catalog.get('team_profile')?.record.version).toBe(v1.version);
  });

  it('given a key named like an Object prototype member, then it is unknown, not inherited', () => {
    expect(new ProfileCatalog().get('constructor')).toBeUndefined();
  });
});

describe('claimedApplication', () => {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it.each([
    ['not three parts', 'abc.def'],
    ['no payload', 'abc..def'],
    ['a payload that is not JSON', `e30.${Buffer.from('{nope').toString('base64url')}.sig`],
  ])('given %s, then it is POLICY_APPLY_SIGNATURE_INVALID', (_note, jws) => {
    expect(hasErrorCode(thrown(() => claimedApplication(jws)), 'POLICY_APPLY_SIGNATURE_INVALID')).toBe(true);
  });

  it('given a payload that is not a PolicyProfileApplication, then it is CONTRACT_INVALID', () => {
    expect(hasErrorCode(thrown(() => claimedApplication(`e30.${b64({ applied_by: 'x' })}.sig`)), 'CONTRACT_INVALID')).toBe(true);
  });
});
