import { lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CELL_GID, CELL_UID } from './cell-config.js';
import { fenceUseRecord, prepareUseRecord, readUseRecord, removeUseRecord, useRecordDir } from './use-record.js';

// The per-use record as the host reads it, on a temporary directory standing in for
// `<cellsRoot>/<taskId>/uses/` (the tests write what the in-cell wrapper would).

const USE = `use-${'a'.repeat(40)}`;
const CAP = 1024;
let base: string;
let usesDir: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'writ-use-record-'));
  usesDir = path.join(base, 'uses');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Writes the record files the wrapper leaves behind. */
async function wrapperWrote(files: Record<string, string>, options: { run?: boolean } = {}): Promise<string> {
  const dir = useRecordDir(usesDir, USE);
  await mkdir(dir, { recursive: true });
  if (options.run !== false) await mkdir(path.join(dir, 'run'), { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(dir, name), content);
  return dir;
}

describe('use records', () => {
  it('given a name that is not a use id (a traversal, a bare name), then it is refused before any path is built', () => {
    expect(() => useRecordDir(usesDir, '../../etc')).toThrow();
    expect(() => useRecordDir(usesDir, 'use-xyz')).toThrow();
    expect(useRecordDir(usesDir, USE)).toBe(path.join(usesDir, USE));
  });

  it('given a use about to run, then uses/ is root-owned and not listable by the cell, and its directory belongs to the cell user only', async () => {
    await prepareUseRecord(usesDir, USE);
    const parent = await stat(usesDir);
    expect(parent.mode & 0o777).toBe(0o711);
    const dir = await stat(useRecordDir(usesDir, USE));
    expect(dir.mode & 0o777).toBe(0o700);
    expect([dir.uid, dir.gid]).toEqual([CELL_UID, CELL_GID]);
  });

  it('given a use of a seat, then its directory belongs to that seat\'s uid and group (no other seat reads or forges it)', async () => {
    await prepareUseRecord(usesDir, USE, { uid: 20_003, gid: CELL_GID });
    const dir = await stat(useRecordDir(usesDir, USE));
    expect({ uid: dir.uid, gid: dir.gid, mode: dir.mode & 0o777 }).toEqual({ uid: 20_003, gid: CELL_GID, mode: 0o700 });
  });

  it('given no record directory, then there is no record (undefined), not an empty one', async () => {
    expect(await readUseRecord(usesDir, USE, CAP)).toBeUndefined();
  });

  it('given a prepared directory the wrapper never entered, then the record says not started', async () => {
    await prepareUseRecord(usesDir, USE);
    expect(await readUseRecord(usesDir, USE, CAP)).toMatchObject({ started: false, fenced: false, exit_code: undefined });
  });

  it('given a finished action, then its exit status, timeout mark, process group and output are read back', async () => {
    await wrapperWrote({ exit: '3\n', timed_out: '', pgid: '77', stdout: 'out', stderr: 'err', 'stdout.rest': '12' });
    expect(await readUseRecord(usesDir, USE, CAP)).toMatchObject({
      started: true,
      fenced: false,
      exit_code: 3,
      timed_out: true,
      pgid: 77,
      stdout: Buffer.from('out'),
      stderr: Buffer.from('err'),
      stdout_rest: 12,
      stderr_rest: undefined,
    });
  });

  it('given a started action with no exit file, or a garbled one, then the exit status is unknown', async () => {
    await wrapperWrote({ pgid: '77' });
    expect(await readUseRecord(usesDir, USE, CAP)).toMatchObject({ started: true, exit_code: undefined });
    await wrapperWrote({ exit: 'zero' });
    expect((await readUseRecord(usesDir, USE, CAP))?.exit_code).toBeUndefined();
  });

  it('given output past the cap, then only the first bytes are read', async () => {
    await wrapperWrote({ exit: '0', stdout: 'x'.repeat(CAP * 3) });
    expect((await readUseRecord(usesDir, USE, CAP))?.stdout.length).toBe(CAP);
  });

  it('given the action planted links in its record (adversarial), then they are never followed: a linked file reads as absent', async () => {
    const dir = await wrapperWrote({});
    const hostSecret = path.join(base, 'host-secret');
    await writeFile(hostSecret, 'host-only');
    await symlink(hostSecret, path.join(dir, 'stdout'));
    await symlink(path.join(base, 'exit-source'), path.join(dir, 'exit'));
    await writeFile(path.join(base, 'exit-source'), '0');
    const record = await readUseRecord(usesDir, USE, CAP);
    expect(record?.stdout.length).toBe(0);
    expect(record?.exit_code).toBeUndefined();
  });

  it('given a use nobody began, when it is fenced, then true (it can never run) and a second fence is false', async () => {
    await prepareUseRecord(usesDir, USE);
    expect(await fenceUseRecord(usesDir, USE)).toBe(true);
    expect((await lstat(path.join(useRecordDir(usesDir, USE), 'run'))).isDirectory()).toBe(true);
    expect(await fenceUseRecord(usesDir, USE)).toBe(false);
  });

  it('given the wrapper made run/ first (it started), when fenced, then false: the fence lost and the action may run', async () => {
    await wrapperWrote({ pgid: '5' });
    expect(await fenceUseRecord(usesDir, USE)).toBe(false);
  });

  it('given no directory at all, when fenced, then it is made and fenced (a later wrapper finds run/ and refuses), and the fence is read back', async () => {
    await mkdir(usesDir, { mode: 0o711 });
    expect(await fenceUseRecord(usesDir, USE)).toBe(true);
    expect(await readUseRecord(usesDir, USE, CAP)).toMatchObject({ started: true, fenced: true, exit_code: undefined });
  });

  it('given the action planted `fenced` in its own record (adversarial), then the record is not fenced: only the host marker beside it counts', async () => {
    await wrapperWrote({ fenced: '', exit: '125' });
    expect(await readUseRecord(usesDir, USE, CAP)).toMatchObject({ started: true, fenced: false, exit_code: 125 });
  });

  it('given a fenced use, when its record is removed, then the fence marker goes too', async () => {
    await mkdir(usesDir, { mode: 0o711 });
    await fenceUseRecord(usesDir, USE);
    await removeUseRecord(usesDir, USE);
    expect(await readUseRecord(usesDir, USE, CAP)).toBeUndefined();
    await expect(lstat(`${useRecordDir(usesDir, USE)}.fenced`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('given a recorded use, when removed (twice), then its directory is gone and the second removal is a no-op', async () => {
    const dir = await wrapperWrote({ exit: '0' });
    await removeUseRecord(usesDir, USE);
    await removeUseRecord(usesDir, USE);
    await expect(readFile(path.join(dir, 'exit'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
