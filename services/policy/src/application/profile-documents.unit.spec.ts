import { hasErrorCode } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { BUILTIN_POLICY_DOCUMENTS } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { recordOf, teamDocument } from '../../test/profiles.js';
import { claimedApplication } from './apply-profile.handler.js';
import { loadRecord, profileVersion, validateDocument, type ProfileIssue } from './profile-documents.js';

const doc = teamDocument;

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
