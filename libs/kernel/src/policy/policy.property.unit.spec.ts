import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { destructiveArgv } from '../../test/destructive-variants.js';
import { command, request } from '../../test/samples.js';
import { isDestructiveCommand } from './destructive-commands.js';
import { evaluatePolicy } from './evaluate-policy.js';
import { BUILTIN_POLICY_PROFILES, type PolicyProfile } from './policy-profile.js';

const DIRS = ['src', 'src/app', 'tests', 'lib'];
const filesOwned = fc.uniqueArray(fc.constantFrom(...DIRS), { maxLength: 3 });
const segment = fc.constantFrom('src', 'app', 'lib', 'tests', 'a.ts', '..', '.', '', 'src2', '...');
const rawPath = fc.tuple(fc.constantFrom('', '', '', '/', '/work/main/', '/work/mainframe/', '~/'), fc.array(segment, { minLength: 1, maxLength: 5 })).map(([lead, parts]) => `${lead}${parts.join('/')}`);

/** Independent oracle: node's posix.normalize plus a segment-wise prefix test. */
function insideOwned(raw: string, owned: readonly string[]): boolean {
  if (raw === '' || raw.startsWith('~')) return false;
  let normalized: string;
  if (raw.startsWith('/')) {
    const absolute = posix.normalize(raw).replace(/\/$/, '');
    if (!absolute.startsWith('/work/main/')) return false;
    normalized = absolute.slice('/work/main/'.length);
  } else {
    normalized = posix.normalize(raw).replace(/\/$/, '');
    if (normalized === '..' || normalized.startsWith('../')) return false;
  }
  return owned.some((dir) => normalized === dir || normalized.startsWith(`${dir}/`));
}

const permissive: PolicyProfile = {
  ...BUILTIN_POLICY_PROFILES.local_edit_allowed,
  id: 'everything_allowed',
  action_classes: Object.fromEntries(
    ['read_local', 'write_local', 'delete_local', 'execute_command', 'network_read', 'network_write', 'vcs_mutation', 'rollback'].map((c) => [c, { outcome: 'allow' }]),
  ),
  sacred_paths: [],
  secret_paths: [],
};
const profiles = fc.constantFrom<PolicyProfile>(BUILTIN_POLICY_PROFILES.local_edit_allowed, BUILTIN_POLICY_PROFILES.destructive_denied, BUILTIN_POLICY_PROFILES.readonly_analysis, permissive);

describe('policy properties', () => {
  it('property: no write_local / delete_local outside files_owned is ever allowed, under any profile', () => {
    fc.assert(
      fc.property(profiles, filesOwned, rawPath, fc.constantFrom('write_local', 'delete_local'), (profile, owned, path, cls) => {
        const req = request({ action_class: cls as 'write_local', target_resources: [path], params: cls === 'write_local' ? { path, content: 'x' } : { path } });
        const result = evaluatePolicy(req, profile, { files_owned: owned.map((d) => `${d}/**`), workspace_root: '/work/main' });
        if (!insideOwned(path, owned)) expect(result.outcome, `${cls} ${path} with files_owned ${owned.join(',')}`).not.toBe('allow');
        else if (profile.id === 'everything_allowed') expect(result.outcome, `${cls} ${path} with files_owned ${owned.join(',')}`).toBe('allow');
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: no command writing outside files_owned is ever allowed, under any profile', () => {
    const writer = fc.constantFrom<(p: string) => string[]>(
      (p) => ['touch', p],
      (p) => ['cp', 'src/a.ts', p],
      (p) => ['mv', p, 'src/b.ts'],
      (p) => ['mkdir', '-p', p],
      (p) => ['tee', '-a', p],
      (p) => ['sh', '-c', `echo x > '${p}'`],
      (p) => ['bash', '-c', `cat src/a >> "${p}"`],
      (p) => ['sed', '-i', 's/a/b/', p],
      (p) => ['env', 'truncate', '-s', '0', p],
    );
    fc.assert(
      fc.property(profiles, filesOwned, rawPath.filter((p) => p !== ''), writer, (profile, owned, path, build) => {
        const result = evaluatePolicy(command(build(path)), profile, { files_owned: owned.map((d) => `${d}/**`), workspace_root: '/work/main' });
        if (!insideOwned(path, owned)) expect(result.outcome, `${build(path).join(' ')} with files_owned ${owned.join(',')}`).not.toBe('allow');
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: destructive commands are detected in every disguise', () => {
    fc.assert(
      fc.property(destructiveArgv, (argv) => {
        expect(isDestructiveCommand(argv), JSON.stringify(argv)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: destructive commands are never allowed under local_edit_allowed or destructive_denied', () => {
    fc.assert(
      fc.property(fc.constantFrom(BUILTIN_POLICY_PROFILES.local_edit_allowed, BUILTIN_POLICY_PROFILES.destructive_denied), destructiveArgv, filesOwned, (profile, argv, owned) => {
        const result = evaluatePolicy(command(argv), profile, { files_owned: ['**', ...owned.map((d) => `${d}/**`)], workspace_root: '/work/main' });
        expect(result.outcome, `${profile.id}: ${JSON.stringify(argv)}`).not.toBe('allow');
        if (profile.id === 'destructive_denied') expect(result.outcome).toBe('deny');
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: evaluation is deterministic and never throws for valid requests', () => {
    fc.assert(
      fc.property(profiles, rawPath, fc.constantFrom('read_local', 'write_local', 'delete_local'), (profile, path, cls) => {
        const req = request({ action_class: cls as 'read_local', target_resources: [path], params: { path } });
        const facts = { files_owned: ['src/**'], workspace_root: '/work/main' };
        expect(evaluatePolicy(req, profile, facts)).toEqual(evaluatePolicy(req, profile, facts));
      }),
    );
  });
});
