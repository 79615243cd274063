import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { hasErrorCode } from '@writ/contracts';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorEnv } from '../../config.js';
import { CellPool } from './cell-pool.js';
import { CellRuntime } from './cell-runtime.js';
import { ensureCellImage, removeTestCells, tempDir } from '../../../test/test-cells.js';

/**
 * Issue 5's "fill the disk past the quota" escape attempt, against the real Docker Engine
 * and real loop mounts (as root): with `diskQuotaBytes` every workspace is its own ext4
 * image, so a cell that writes past it meets ENOSPC and the host loses at most the image.
 * Every container carries `writ.test=<run>`; everything lives under one temporary cells
 * root, unmounted and removed afterwards.
 */

const RUN_ID = randomBytes(5).toString('hex');
const MiB = 1024 ** 2;
const QUOTA = 32 * MiB;
const docker = new Docker();
let cellsRoot: string;

async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((target) => target === dir || target.startsWith(`${dir}/`));
}

async function exists(target: string): Promise<boolean> {
  return lstat(target).then(
    () => true,
    () => false,
  );
}

async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return stats.bavail * stats.bsize;
}

async function sh(runtime: CellRuntime, taskId: string, script: string): Promise<{ exit: number; out: string; err: string }> {
  const result = await runtime.exec(taskId, { argv: ['sh', '-c', script], timeoutMs: 30_000, maxOutputBytes: 64 * 1024 });
  return { exit: result.exit_code, out: result.stdout.toString('utf8'), err: result.stderr.toString('utf8') };
}

/** The escape attempt: 64 MiB into a 32 MiB workspace. */
async function fillPastQuota(runtime: CellRuntime, taskId: string): Promise<void> {
  const { workspaceDir } = runtime.hostPaths(taskId);
  const image = path.join(path.dirname(workspaceDir), 'workspace.img');
  const freeBefore = await freeBytes(cellsRoot);

  const fill = await sh(runtime, taskId, 'dd if=/dev/zero of=big bs=1M count=64');

  expect(fill.exit).not.toBe(0);
  expect(fill.err).toMatch(/No space left on device/);
  // The image never takes more of the host than its size (it is sparse: less).
  const imageStat = await lstat(image);
  expect(imageStat.size).toBe(QUOTA);
  expect(imageStat.blocks * 512).toBeLessThanOrEqual(QUOTA);
  // Other processes share the host's disk: the bound is the image plus a margin well below the 32 MiB refused.
  expect(freeBefore - (await freeBytes(cellsRoot))).toBeLessThan(QUOTA + 16 * MiB);
  // The cell still works: the next action runs (and can free its own space).
  const next = await sh(runtime, taskId, 'rm big && echo still-here > note && cat note');
  expect(next).toMatchObject({ exit: 0, out: 'still-here\n' });
  expect(await readFile(path.join(workspaceDir, 'note'), 'utf8')).toBe('still-here\n');
}

beforeAll(async () => {
  await ensureCellImage(docker);
  cellsRoot = await tempDir('writ-quota-');
}, 300_000);

afterAll(async () => {
  await removeTestCells(RUN_ID, [], docker);
  if (cellsRoot) {
    for (const target of (await mountsUnder(cellsRoot)).sort((a, b) => b.length - a.length)) execFileSync('umount', [target]);
    await rm(cellsRoot, { recursive: true, force: true });
  }
});

describe('disk quota per cell workspace', () => {
  it('given a 32 MiB quota, when a cold cell writes 64 MiB, then it fails with ENOSPC, the host keeps its space, the next action runs, and scrub leaves no mount nor image', async () => {
    const runtime = new CellRuntime({ cellsRoot, labels: { 'writ.test': RUN_ID }, diskQuotaBytes: QUOTA });
    const taskId = `quota-cold-${RUN_ID}`;
    const { taskDir, workspaceDir } = runtime.hostPaths(taskId);

    await runtime.openCell(taskId);
    expect(await mountsUnder(workspaceDir)).toEqual([workspaceDir]);
    const stat = await lstat(workspaceDir);
    // The mount's root is the cell home: root's, sticky, setgid and writable by the cell group (cell-home.ts), with the Lazarus layout and no lost+found.
    expect({ uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o7777 }).toEqual({ uid: 0, gid: 10001, mode: 0o3775 });
    expect((await sh(runtime, taskId, 'ls -A')).out).toBe('.lazarus\nhome\nshared\n');
    expect((await sh(runtime, taskId, 'grep " /workspace " /proc/mounts')).out).toMatch(/ext4 .*nosuid.*nodev/);

    await fillPastQuota(runtime, taskId);

    const closed = await runtime.closeCell(taskId, { scrub: true });
    expect(closed.workspace_scrubbed).toBe(true);
    expect(await mountsUnder(taskDir)).toEqual([]);
    expect(await exists(taskDir)).toBe(false);
  }, 120_000);

  it('given a 32 MiB quota and a warm pool, when a pooled cell is claimed and fills its workspace, then the claimed workspace is the mounted image and stop/scrub leave nothing mounted', async () => {
    const runtime = new CellRuntime({ cellsRoot, labels: { 'writ.test': RUN_ID }, diskQuotaBytes: QUOTA });
    const owner = `quota-${RUN_ID}`;
    const pool = new CellPool(runtime, { size: 1, owner });
    await pool.start();
    await pool.settled();
    const poolDir = path.join(cellsRoot, '.pool', owner);
    expect(await mountsUnder(poolDir)).toHaveLength(1);
    const taskId = `quota-pooled-${RUN_ID}`;
    const { taskDir, workspaceDir } = runtime.hostPaths(taskId);
    try {
      const handle = await runtime.openCell(taskId);
      expect(handle.pooled).toBe(true);
      expect(await mountsUnder(workspaceDir)).toEqual([workspaceDir]);
      // The host's view and the cell's are one file system after the claim.
      await writeFile(path.join(workspaceDir, 'from-host'), 'h');
      expect((await sh(runtime, taskId, 'cat from-host && ls -A')).out).toBe('h.lazarus\nfrom-host\nhome\nshared\n');

      await fillPastQuota(runtime, taskId);

      await runtime.closeCell(taskId, { scrub: true });
      expect(await mountsUnder(taskDir)).toEqual([]);
      expect(await exists(taskDir)).toBe(false);
    } finally {
      await pool.stop();
    }
    expect(await mountsUnder(poolDir)).toEqual([]);
    expect(await exists(poolDir)).toBe(false);
  }, 180_000);

  it('given a quota and no mkfs.ext4 on the PATH, when a cell is opened, then it fails CELL_QUOTA_UNAVAILABLE naming the tool and leaves no image', async () => {
    const runtime = new CellRuntime({ cellsRoot, labels: { 'writ.test': RUN_ID }, diskQuotaBytes: QUOTA });
    const taskId = `quota-notool-${RUN_ID}`;
    const { taskDir, workspaceDir } = runtime.hostPaths(taskId);
    const savedPath = process.env['PATH'];
    let failure: unknown;
    process.env['PATH'] = path.join(cellsRoot, 'no-tools');
    try {
      await runtime.openCell(taskId);
    } catch (error) {
      failure = error;
    } finally {
      process.env['PATH'] = savedPath;
    }
    expect(hasErrorCode(failure, 'CELL_QUOTA_UNAVAILABLE')).toBe(true);
    expect((failure as { details?: { tool?: string } }).details?.tool).toBe('mkfs.ext4');
    expect(await exists(path.join(taskDir, 'workspace.img'))).toBe(false);
    expect(await mountsUnder(workspaceDir)).toEqual([]);
    expect((await docker.listContainers({ all: true, filters: { name: [runtime.containerName(taskId)] } })).length).toBe(0);
    await runtime.closeCell(taskId, { scrub: true });
  });

  it('given WRIT_CELL_DISK_QUOTA_BYTES, when it is unset, 0, below 16 MiB or set, then the config is no quota, no quota, refused, or that quota', () => {
    expect(ExecutorEnv.parse({}).WRIT_CELL_DISK_QUOTA_BYTES).toBe(0);
    expect(ExecutorEnv.parse({ WRIT_CELL_DISK_QUOTA_BYTES: '0' }).WRIT_CELL_DISK_QUOTA_BYTES).toBe(0);
    expect(ExecutorEnv.safeParse({ WRIT_CELL_DISK_QUOTA_BYTES: String(MiB) }).success).toBe(false);
    expect(ExecutorEnv.parse({ WRIT_CELL_DISK_QUOTA_BYTES: String(QUOTA) }).WRIT_CELL_DISK_QUOTA_BYTES).toBe(QUOTA);
    let code: unknown;
    try {
      new CellRuntime({ cellsRoot, diskQuotaBytes: MiB });
    } catch (error) {
      code = hasErrorCode(error, 'CELL_ARGUMENT_INVALID');
    }
    expect(code).toBe(true);
  });
});
