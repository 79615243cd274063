import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hasErrorCode } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactBytes, redactText } from './redact.js';
import { DirectorySecretSource, secretEnvName, type ResolvedSecret } from './secret-source.js';

const secret = (handle: string, value: string): ResolvedSecret => ({ handle, env: secretEnvName(handle), value });

describe('redaction of secret values', () => {
  const token = secret('deploy_token', 's3cr3t-VALUE-42');
  it('given output holding a value, then every occurrence becomes [redacted:<handle>]', () => {
    expect(redactBytes(Buffer.from('a s3cr3t-VALUE-42 b s3cr3t-VALUE-42'), [token]).toString()).toBe('a [redacted:deploy_token] b [redacted:deploy_token]');
  });
  it('given a capture cut in the middle of a value, then its visible start is redacted too', () => {
    expect(redactBytes(Buffer.from('token=s3cr3t-VA'), [token], true).toString()).toBe('token=[redacted:deploy_token]');
    expect(redactBytes(Buffer.from('token=s3cr3t-VA'), [token], false).toString()).toBe('token=s3cr3t-VA');
  });
  it('given a value inside another, then the longer one is removed whole', () => {
    const inner = secret('inner', 'abcd');
    const outer = secret('outer', 'xxabcdxx');
    expect(redactText('1 xxabcdxx 2 abcd', [inner, outer])).toBe('1 [redacted:outer] 2 [redacted:inner]');
  });
});

describe('DirectorySecretSource (WRIT_SECRETS_DIR)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'writ-secrets-'));
    await writeFile(path.join(dir, 'deploy_token'), 'value-1\n', { mode: 0o600 });
    await writeFile(path.join(dir, 'loose'), 'value-2', { mode: 0o644 });
    await chmod(path.join(dir, 'loose'), 0o644);
    await symlink(path.join(dir, 'deploy_token'), path.join(dir, 'linked'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('given a 0600 file, then the handle resolves to its value (trailing newline dropped) and WRIT_SECRET_<HANDLE>', async () => {
    expect(await new DirectorySecretSource(dir).resolve(['deploy_token'])).toEqual([{ handle: 'deploy_token', env: 'WRIT_SECRET_DEPLOY_TOKEN', value: 'value-1' }]);
  });

  it.each([
    ['a missing file', 'absent'],
    ['a group/world-readable file', 'loose'],
    ['a symlink', 'linked'],
    ['a path-like handle', '../etc/passwd'],
  ])('given %s, then EXECUTOR_SECRET_UNAVAILABLE without the value', async (_note, handle) => {
    const error = await new DirectorySecretSource(dir).resolve([handle]).catch((e: unknown) => e);
    expect(hasErrorCode(error, 'EXECUTOR_SECRET_UNAVAILABLE')).toBe(true);
    expect(String((error as Error).message)).not.toContain('value-');
  });

  it('given no secrets directory, then every handle is unavailable', async () => {
    const error = await new DirectorySecretSource(undefined).resolve(['deploy_token']).catch((e: unknown) => e);
    expect(hasErrorCode(error, 'EXECUTOR_SECRET_UNAVAILABLE')).toBe(true);
  });
});
