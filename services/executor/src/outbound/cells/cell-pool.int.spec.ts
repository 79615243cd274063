import { randomBytes } from 'node:crypto';
import { lstat, readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CELL_POOL_LABELS } from './cell-hardening.js';
import { CellPool } from './cell-pool.js';
import { CELL_POOL_DIR, CellRuntime, type CellEnvironment } from './cell-runtime.js';
import { ensureCellImage, removeTestCells, tempDir } from '../../../test/test-cells.js';

/**
 * The warm pool against the real Docker Engine: no mocks. Every container carries
 * `writ.test=<run id>` and is removed by that label afterwards; every pool has its own
 * owner and every workspace lives under one temporary cells root, removed afterwards.
 * Nothing waits on time: `pool.settled()` resolves when the background refill is over.
 */

const RUN_ID = randomBytes(5).toString('hex');
const docker = new Docker();
let cellsRoot: string;
let counter = 0;

function unique(label: string): string {
  counter += 1;
  return `${label}-${RUN_ID}-${counter}`;
}

function newRuntime(extra: { hostGraceMs?: number } = {}): CellRuntime {
  return new CellRuntime({ cellsRoot, labels: { 'writ.test': RUN_ID }, ...extra });
}

/** Unclaimed pooled cells of an owner, as Docker lists them (claimed ones carry a task's name). */
async function pooledContainers(owner: string): Promise<Docker.ContainerInfo[]> {
  const listed = await docker.listContainers({ all: true, filters: { label: [`writ.test=${RUN_ID}`, `${CELL_POOL_LABELS.owner}=${owner}`] } });
  return listed.filter((container) => container.Names.some((name) => name.startsWith('/writ-cell-pool.')));
}

async function exists(target: string): Promise<boolean> {
  return lstat(target).then(
    () => true,
    () => false,
  );
}

async function sh(runtime: CellRuntime, taskId: string, script: string): Promise<{ exit: number; out: string }> {
  const result = await runtime.exec(taskId, { argv: ['sh', '-c', script], timeoutMs: 15_000, maxOutputBytes: 64 * 1024 });
  return { exit: result.exit_code, out: result.stdout.toString('utf8') };
}

/** The hardening of a cell, without what names or places it (task, name, mount source, spec hash). */
function hardening(env: CellEnvironment): unknown {
  const { task_id: _task, container_id: _id, spec_sha256: _spec, mounts, ...rest } = env;
  return { ...rest, mounts: mounts.map(({ source: _source, ...mount }) => mount) };
}

function hostConfigWithoutSources(info: Docker.ContainerInspectInfo): unknown {
  const host = info.HostConfig as Docker.HostConfig & { Mounts?: { Source?: string }[] };
  return {
    ...host,
    Mounts: (host.Mounts ?? []).map(({ Source: _source, ...mount }) => mount),
    // Docker records the container's own cgroup parent / log path here; neither is hardening.
    LogConfig: host.LogConfig,
  };
}

beforeAll(async () => {
  await ensureCellImage(docker);
  cellsRoot = await tempDir('writ-pool-');
}, 300_000);

afterAll(async () => {
  await removeTestCells(RUN_ID, [cellsRoot], docker);
});

describe('a warm pool', () => {
  const owner = unique('owner');
  let runtime: CellRuntime;
  let pool: CellPool;
  let claimedTask: string;
  let claimedId: string;

  beforeAll(async () => {
    runtime = newRuntime();
    pool = new CellPool(runtime, { size: 2, owner });
    await pool.start();
    await pool.settled();
  });

  it('given size 2, when started, then two hardened cells run, each on its own cell home holding only the empty Lazarus layout', async () => {
    const listed = await pooledContainers(owner);

    expect(listed).toHaveLength(2);
    expect(listed.every((container) => container.State === 'running')).toBe(true);
    const sources = listed.map((container) => container.Mounts.find((mount) => mount.Destination === '/workspace')?.Source ?? '');
    expect(new Set(sources).size).toBe(2);
    for (const source of sources) {
      expect(source.startsWith(path.join(cellsRoot, CELL_POOL_DIR, owner))).toBe(true);
      expect((await readdir(source)).sort()).toEqual(['.lazarus', 'home', 'shared']);
      expect(await readdir(path.join(source, 'home'))).toEqual([]);
    }
    expect(pool.stats()).toMatchObject({ ready: 2, creating: 0, failures: 0 });
  });

  it('given a ready pool, when a new task opens its cell, then it gets a pooled container under the task’s name, workspace and binding', async () => {
    const before = new Set((await pooledContainers(owner)).map((container) => container.Id));
    claimedTask = unique('t');

    const handle = await runtime.openCell(claimedTask);
    claimedId = handle.container_id;

    expect(handle).toMatchObject({ pooled: true, reused: false, container_name: `writ-cell-${claimedTask}`, workspace_dir: path.join(cellsRoot, claimedTask, 'workspace') });
    expect(before.has(handle.container_id)).toBe(true);
    expect((await docker.getContainer(`writ-cell-${claimedTask}`).inspect()).Id).toBe(handle.container_id);
    expect(await sh(runtime, claimedTask, 'echo from-pool > made.txt && id -u')).toEqual({ exit: 0, out: '10001\n' });
    expect(await readFile(path.join(cellsRoot, claimedTask, 'workspace', 'made.txt'), 'utf8')).toBe('from-pool\n');
    const binding = JSON.parse(await readFile(path.join(cellsRoot, claimedTask, 'cell.json'), 'utf8')) as Record<string, unknown>;
    expect(binding).toMatchObject({ task_id: claimedTask, container_id: handle.container_id, spec_sha256: handle.spec_sha256 });
  });

  it('given a claim, when the refill is over, then the pool is full again and never held more than its size', async () => {
    await pool.settled();

    const listed = await pooledContainers(owner);
    expect(listed).toHaveLength(2);
    expect(listed.some((container) => container.Id === claimedId)).toBe(false);
    expect(pool.stats()).toMatchObject({ ready: 2, claimed: 1, failures: 0 });
    expect(pool.stats().high_water).toBeLessThanOrEqual(2);
  });

  it('given a claimed cell, when the task’s second action opens it, then the same container is reused', async () => {
    const again = await runtime.openCell(claimedTask);

    expect(again).toMatchObject({ container_id: claimedId, reused: true, pooled: true });
    expect((await sh(runtime, claimedTask, 'cat made.txt')).out).toBe('from-pool\n');
  });

  it('given a claimed cell and a cold one, when Docker is asked what it applied, then the hardening is identical', async () => {
    const cold = newRuntime();
    const coldTask = unique('cold');
    const coldHandle = await cold.openCell(coldTask);
    expect(coldHandle.pooled).toBe(false);

    const [pooledEnv, coldEnv] = await Promise.all([runtime.environment(claimedTask), cold.environment(coldTask)]);
    expect(hardening(pooledEnv)).toEqual(hardening(coldEnv));
    const [pooledInfo, coldInfo] = await Promise.all([docker.getContainer(claimedId).inspect(), docker.getContainer(coldHandle.container_id).inspect()]);
    expect(hostConfigWithoutSources(pooledInfo)).toEqual(hostConfigWithoutSources(coldInfo));
    const pooledConfig = pooledInfo.Config as unknown as Record<string, unknown>;
    const coldConfig = coldInfo.Config as unknown as Record<string, unknown>;
    for (const key of ['User', 'Env', 'Cmd', 'Entrypoint', 'WorkingDir', 'Hostname', 'Image', 'Tty', 'OpenStdin', 'NetworkDisabled']) {
      expect([key, pooledConfig[key]]).toEqual([key, coldConfig[key]]);
    }
    expect(pooledInfo.Image).toBe(coldInfo.Image);
  });

  it('given a claimed cell, when the executor restarts (a new runtime, no pool), then it finds the task’s cell through the binding', async () => {
    const restarted = newRuntime();

    const handle = await restarted.openCell(claimedTask);

    expect(handle).toMatchObject({ container_id: claimedId, reused: true, pooled: true });
    expect((await sh(restarted, claimedTask, 'cat made.txt')).out).toBe('from-pool\n');
  });

  it('given a pooled container under a task’s name but no binding (a claim cut short), when opened, then it is replaced by a cold cell on the same workspace', async () => {
    const task = unique('cut');
    const first = await runtime.openCell(task);
    expect(first.pooled).toBe(true);
    await sh(runtime, task, 'echo kept > kept.txt');
    await rm(path.join(cellsRoot, task, 'cell.json'));

    const second = await runtime.openCell(task);

    expect(second).toMatchObject({ pooled: false, reused: false });
    expect(second.container_id).not.toBe(first.container_id);
    await expect(docker.getContainer(first.container_id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await sh(runtime, task, 'cat kept.txt')).out).toBe('kept\n');
  });

  it('given a claimed cell with files, when closed, then its container and binding are gone, the workspace stays, and a reopen is cold', async () => {
    const task = unique('close');
    const opened = await runtime.openCell(task);
    expect(opened.pooled).toBe(true);
    await sh(runtime, task, 'echo stay > stay.txt');

    const closed = await runtime.closeCell(task);

    expect(closed.containers_removed).toBe(1);
    expect(await exists(path.join(cellsRoot, task, 'cell.json'))).toBe(false);
    const reopened = await runtime.openCell(task);
    expect(reopened).toMatchObject({ pooled: false, reused: false });
    expect((await sh(runtime, task, 'cat stay.txt')).out).toBe('stay\n');
  });

  it('given a claimed cell and a process that escapes its action, when the host deadline passes, then CELL_EXEC_TIMEOUT and the task has a running clean cell on the same workspace', async () => {
    const strict = newRuntime({ hostGraceMs: 1_000 });
    strict.attachPool(pool);
    const task = unique('escape');
    const opened = await strict.openCell(task);
    expect(opened.pooled).toBe(true);
    await sh(strict, task, 'echo intact > intact.txt');

    await expect(
      strict.exec(task, {
        argv: ['sh', '-c', 'setsid sh -c "touch /tmp/escaped; exec sleep 300" & until [ -e /tmp/escaped ]; do sleep 0.01; done; echo escaped'],
        timeoutMs: 500,
        maxOutputBytes: 1024,
      }),
    ).rejects.toMatchObject({ code: 'CELL_EXEC_TIMEOUT', details: expect.objectContaining({ cell_restarted: true }) });

    const after = await strict.environment(task);
    expect(after.running).toBe(true);
    expect((await sh(strict, task, 'cat intact.txt; ps -o args | grep -c "^sleep 300" || true')).out).toBe('intact\n0\n');
    strict.detachPool(pool);
  });
});

describe('the bound of a pool', () => {
  it('given size 2, when six new tasks open cells at once, then two are pooled, four are cold, all run, and the pool never exceeds 2', async () => {
    const owner = unique('bound');
    const runtime = newRuntime();
    const pool = new CellPool(runtime, { size: 2, owner });
    await pool.start();
    await pool.settled();
    const tasks = Array.from({ length: 6 }, () => unique('c'));

    const handles = await Promise.all(tasks.map((task) => runtime.openCell(task)));

    expect(handles.filter((handle) => handle.pooled === true)).toHaveLength(2);
    expect(new Set(handles.map((handle) => handle.container_id)).size).toBe(6);
    expect(pool.stats().high_water).toBeLessThanOrEqual(2);
    await pool.settled();
    expect(await pooledContainers(owner)).toHaveLength(2);
    expect(pool.stats().high_water).toBeLessThanOrEqual(2);
    await pool.stop();
  });

  it('given size 0, when started and a task opens its cell, then nothing is pooled and the cell is cold', async () => {
    const owner = unique('zero');
    const runtime = newRuntime();
    const pool = new CellPool(runtime, { size: 0, owner });
    await pool.start();

    const handle = await runtime.openCell(unique('z'));

    expect(handle.pooled).toBe(false);
    expect(await pooledContainers(owner)).toHaveLength(0);
  });

  it('given a size past the bound or a bad owner, when a pool is made, then CELL_ARGUMENT_INVALID', () => {
    const runtime = newRuntime();
    expect(() => new CellPool(runtime, { size: 33, owner: 'o' })).toThrow(expect.objectContaining({ code: 'CELL_ARGUMENT_INVALID' }));
    expect(() => new CellPool(runtime, { size: -1, owner: 'o' })).toThrow(expect.objectContaining({ code: 'CELL_ARGUMENT_INVALID' }));
    expect(() => new CellPool(runtime, { size: 2, owner: '../x' })).toThrow(expect.objectContaining({ code: 'CELL_ARGUMENT_INVALID' }));
  });
});

describe('reaping and shutdown', () => {
  it('given a process that died with a full pool and a claimed cell, when the same owner starts again, then the orphans are reaped, the task’s cell stays, and stop removes the new pool', async () => {
    const owner = unique('crash');
    const crashedRuntime = newRuntime();
    const dead = new CellPool(crashedRuntime, { size: 2, owner });
    await dead.start();
    await dead.settled();
    const task = unique('kept');
    const claimed = await crashedRuntime.openCell(task);
    await dead.settled();
    const orphans = (await pooledContainers(owner)).map((container) => container.Id);
    expect(orphans).toHaveLength(2);
    // `dead` is abandoned here as a killed process would be: never stopped.

    const runtime = newRuntime();
    const pool = new CellPool(runtime, { size: 2, owner });
    await pool.start();
    await pool.settled();

    const now = (await pooledContainers(owner)).map((container) => container.Id);
    expect(now).toHaveLength(2);
    expect(now.some((id) => orphans.includes(id))).toBe(false);
    for (const id of orphans) await expect(docker.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await docker.getContainer(claimed.container_id).inspect()).State.Running).toBe(true);
    expect((await runtime.openCell(task)).container_id).toBe(claimed.container_id);

    await pool.stop();

    expect(await pooledContainers(owner)).toHaveLength(0);
    expect(await exists(path.join(cellsRoot, CELL_POOL_DIR, owner))).toBe(false);
    expect((await docker.getContainer(claimed.container_id).inspect()).State.Running).toBe(true);
    expect((await runtime.openCell(unique('after-stop'))).pooled).toBe(false);
  });
});
