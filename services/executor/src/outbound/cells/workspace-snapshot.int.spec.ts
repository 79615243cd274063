import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sha256Hex } from '@writ/crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { snapshotDirectory } from './workspace-snapshot.js';

/** The walker against a real directory tree on the host file system. */
describe('snapshotDirectory', () => {
  let root: string;
  let outside: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'writ-snapshot-'));
    outside = await mkdtemp(path.join(tmpdir(), 'writ-outside-'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('given files, nested dirs and modes, when snapshotted, then each file is recorded by relative path with hash, size and mode', async () => {
    await writeFile(path.join(root, 'a.txt'), 'hello\n');
    await mkdir(path.join(root, 'd/e'), { recursive: true });
    await writeFile(path.join(root, 'd/e/run.sh'), '#!/bin/sh\n');
    await chmod(path.join(root, 'd/e/run.sh'), 0o755);
    await mkdir(path.join(root, 'empty'));
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    await writeFile(path.join(root, 'big.bin'), big);

    const snapshot = await snapshotDirectory(root);

    expect([...snapshot.entries.keys()]).toEqual(['a.txt', 'big.bin', 'd/e/run.sh']);
    expect(snapshot.entries.get('a.txt')).toEqual({ kind: 'file', sha256: sha256Hex('hello\n'), size: 6, mode: 0o644 & ~process.umask() });
    expect(snapshot.entries.get('d/e/run.sh')).toMatchObject({ kind: 'file', mode: 0o755 });
    expect(snapshot.entries.get('big.bin')).toMatchObject({ sha256: sha256Hex(big), size: big.length });
  });

  it('given symlinks to a file and a directory outside, when snapshotted, then they are recorded as links and not followed', async () => {
    await writeFile(path.join(outside, 'secret.txt'), 'outside');
    await symlink(outside, path.join(root, 'to-dir'));
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'to-file'));

    const snapshot = await snapshotDirectory(root);

    expect([...snapshot.entries.keys()]).toEqual(['to-dir', 'to-file']);
    expect(snapshot.entries.get('to-dir')).toMatchObject({ kind: 'symlink', target: outside, sha256: sha256Hex(outside) });
    expect(snapshot.entries.get('to-file')).toMatchObject({ kind: 'symlink', target: path.join(outside, 'secret.txt') });
  });

  it('given a FIFO, when snapshotted, then it is skipped and listed as such', async () => {
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    await writeFile(path.join(root, 'f'), '');
    const snapshot = await snapshotDirectory(root);
    expect([...snapshot.entries.keys()]).toEqual(['f']);
    expect(snapshot.skipped).toEqual(['pipe']);
  });

  it('given a missing root, when snapshotted, then CELL_NOT_FOUND; given a symlinked root, then CELL_PATH_ESCAPE', async () => {
    await expect(snapshotDirectory(path.join(root, 'nope'))).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });
    await symlink(outside, path.join(root, 'link'));
    await expect(snapshotDirectory(path.join(root, 'link'))).rejects.toMatchObject({ code: 'CELL_PATH_ESCAPE' });
  });
});
