import { randomBytes } from 'node:crypto';
import { lstat, stat } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '@writ/crypto';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CellRuntime, type CellExecOptions } from './cell-runtime.js';
import { ensureCellImage, removeTestCells, tempDir } from '../../../test/test-cells.js';

/**
 * The cell runtime against the real Docker Engine: no mocks. Every container this
 * file makes carries `writ.test=<run id>` and is removed by that label afterwards;
 * every workspace lives under one temporary cells root, removed afterwards too.
 * Tests wait for results of awaited calls, never on sleeps, and assert no timings.
 */

const RUN_ID = randomBytes(5).toString('hex');
const docker = new Docker();
let cellsRoot: string;
let runtime: CellRuntime;
let taskCounter = 0;

function newTaskId(label: string): string {
  taskCounter += 1;
  return `t-${RUN_ID}-${label}-${taskCounter}`;
}

async function labelledContainers(...labels: string[]): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: ['writ.cell=1', ...labels] } });
}

function sh(taskId: string, script: string, options: Partial<CellExecOptions> = {}) {
  return runtime.exec(taskId, { argv: ['sh', '-c', script], timeoutMs: 15_000, maxOutputBytes: 64 * 1024, ...options });
}

async function shText(taskId: string, script: string): Promise<{ exit: number; out: string; err: string }> {
  const result = await sh(taskId, script);
  return { exit: result.exit_code, out: result.stdout.toString('utf8'), err: result.stderr.toString('utf8') };
}

beforeAll(async () => {
  await ensureCellImage(docker);
  cellsRoot = await tempDir('writ-cells-');
  runtime = new CellRuntime({ cellsRoot, labels: { 'writ.test': RUN_ID } });
}, 300_000);

afterAll(async () => {
  await removeTestCells(RUN_ID, [cellsRoot], docker);
});

describe('an action in a cell', () => {
  let taskId: string;

  beforeAll(async () => {
    taskId = newTaskId('action');
    await runtime.openCell(taskId);
  });

  it('given an open cell, when `echo hello > out.txt` runs as an action, then it exits 0 and the diff shows out.txt added', async () => {
    const { result, diff } = await runtime.runAction(taskId, { argv: ['sh', '-c', 'echo hello > out.txt'], timeoutMs: 15_000, maxOutputBytes: 1024 });

    expect(result).toMatchObject({ exit_code: 0, timed_out: false, stdout_truncated: false, stderr_truncated: false });
    expect(diff.added).toEqual([
      expect.objectContaining({ path: 'out.txt', before_sha256: null, after_sha256: sha256Hex('hello\n'), after: expect.objectContaining({ kind: 'file', size: 6 }) }),
    ]);
    expect(diff.modified).toEqual([]);
    expect(diff.deleted).toEqual([]);
  });

  it('given out.txt, when an action edits it and adds then removes others, then the diff shows modified and deleted with both hashes', async () => {
    await sh(taskId, 'echo temp > gone.txt && mkdir -p d && ln -s out.txt d/link');
    const { result, diff } = await runtime.runAction(taskId, {
      argv: ['sh', '-c', 'echo bye > out.txt && rm gone.txt && ln -sfn ../gone.txt d/link'],
      timeoutMs: 15_000,
      maxOutputBytes: 1024,
    });

    expect(result.exit_code).toBe(0);
    expect(diff.added).toEqual([]);
    expect(diff.modified.map((c) => [c.path, c.before_sha256, c.after_sha256])).toEqual([
      ['d/link', sha256Hex('out.txt'), sha256Hex('../gone.txt')],
      ['out.txt', sha256Hex('hello\n'), sha256Hex('bye\n')],
    ]);
    expect(diff.deleted.map((c) => [c.path, c.before_sha256])).toEqual([['gone.txt', sha256Hex('temp\n')]]);
  });

  it('given output on both streams and an exit status, when run, then they come back apart', async () => {
    const result = await sh(taskId, 'echo out; echo err >&2; exit 3');
    expect([result.exit_code, result.stdout.toString(), result.stderr.toString(), result.timed_out]).toEqual([3, 'out\n', 'err\n', false]);
  });

  it('given stdin, when the action reads it, then it receives exactly those bytes', async () => {
    const result = await runtime.exec(taskId, { argv: ['sh', '-c', 'cat; echo "<end>"'], stdin: 'line 1\nline 2', timeoutMs: 15_000, maxOutputBytes: 1024 });
    expect(result.stdout.toString()).toBe('line 1\nline 2<end>\n');
  });

  it('given argv with shell metacharacters, when run, then they arrive as plain arguments', async () => {
    const result = await runtime.exec(taskId, { argv: ['echo', 'a; rm -rf /workspace/*', '$(id)'], timeoutMs: 15_000, maxOutputBytes: 1024 });
    expect(result.stdout.toString()).toBe('a; rm -rf /workspace/* $(id)\n');
  });

  it('given a cwd inside the workspace, when run, then the action starts there', async () => {
    await sh(taskId, 'mkdir -p sub/dir');
    const result = await runtime.exec(taskId, { argv: ['pwd'], cwd: 'sub/dir', timeoutMs: 15_000, maxOutputBytes: 1024 });
    expect(result.stdout.toString()).toBe('/workspace/sub/dir\n');
  });

  it('given a program that does not exist, when run, then the exit code says so (127)', async () => {
    const result = await runtime.exec(taskId, { argv: ['no-such-program'], timeoutMs: 15_000, maxOutputBytes: 1024 });
    expect(result.exit_code).toBe(127);
  });
});

describe('hardening, observed from inside the cell', () => {
  const canary = `canary-${randomBytes(8).toString('hex')}`;
  let taskId: string;

  beforeAll(async () => {
    // A secret in the executor's own environment before the cell exists.
    process.env.WRIT_CANARY_SECRET = canary;
    taskId = newTaskId('hardening');
    await runtime.openCell(taskId);
  });

  afterAll(() => {
    delete process.env.WRIT_CANARY_SECRET;
  });

  it('given a cell, when asked who it is, then it runs as uid and gid 10001', async () => {
    expect((await shText(taskId, 'id -u; id -g')).out).toBe('10001\n10001\n');
  });

  it('given a cell, when it writes to the root file system, then it fails (read-only rootfs)', async () => {
    // /home/cell belongs to the cell user in the image: only the read-only mount stops this one.
    for (const target of ['/etc/x', '/x', '/home/cell/x', '/etc/hosts', '/bin/busybox']) {
      const result = await shText(taskId, `echo x >> ${target}`);
      expect(result.exit, target).not.toBe(0);
    }
    expect((await shText(taskId, 'test -e /etc/x || test -e /x || test -e /home/cell/x')).exit).toBe(1);
    const rootMount = await shText(taskId, `awk '$5 == "/" { print $6 }' /proc/self/mountinfo`);
    expect(rootMount.out.split(',')[0]).toBe('ro');
  });

  it('given a cell, when it reads its process status, then it has no capabilities, no-new-privs and seccomp on', async () => {
    const { out } = await shText(taskId, 'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status');
    const status = Object.fromEntries(out.trim().split('\n').map((line) => line.split(/:\s+/) as [string, string]));
    expect(status).toEqual({
      CapInh: '0000000000000000',
      CapPrm: '0000000000000000',
      CapEff: '0000000000000000',
      CapBnd: '0000000000000000',
      CapAmb: '0000000000000000',
      NoNewPrivs: '1',
      // 2 = filter mode: Docker's default seccomp profile is applied.
      Seccomp: '2',
    });
  });

  it('given a cell, when it looks for a network, then only lo exists and outside addresses are unreachable', async () => {
    const { out } = await shText(taskId, 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "');
    expect(out.trim().split('\n')).toEqual(['lo']);
    expect((await shText(taskId, 'wget -q -T 3 -O /dev/null http://1.1.1.1/')).exit).not.toBe(0);
    expect((await shText(taskId, 'nc -w 3 8.8.8.8 53 </dev/null')).exit).not.toBe(0);
  });

  it('given a cell, when it writes into its workspace, then that works and the file is the cell user’s on the host', async () => {
    expect((await shText(taskId, 'echo data > /workspace/written.txt && cat /workspace/written.txt')).out).toBe('data\n');
    const onHost = await stat(path.join(runtime.hostPaths(taskId).workspaceDir, 'written.txt'));
    expect([onHost.uid, onHost.gid]).toEqual([10001, 10001]);
  });

  it('given a secret in the executor’s environment, when the cell lists its environment, then the secret is not there', async () => {
    const { out } = await shText(taskId, 'env; cat /proc/1/environ | tr "\\0" "\\n"');
    expect(out).not.toContain(canary);
    expect(out).not.toContain('WRIT_CANARY_SECRET');
    const names = new Set(out.trim().split('\n').map((line) => line.slice(0, line.indexOf('='))));
    // The allowlist, plus what Docker (HOSTNAME) and the shell (PWD, SHLVL) add themselves.
    expect([...names].filter((name) => !['PATH', 'HOME', 'LANG', 'HOSTNAME', 'PWD', 'SHLVL'].includes(name))).toEqual([]);
  });

  it('given a cell, when it looks for the Docker socket, then there is none and no host path but the workspace is mounted', async () => {
    expect((await shText(taskId, 'test -e /var/run/docker.sock || test -e /run/docker.sock')).exit).toBe(1);
    const { out } = await shText(taskId, 'cut -d" " -f5 /proc/self/mountinfo');
    expect(out).not.toContain('docker.sock');
    expect(out.split('\n')).toContain('/workspace');
  });

  it('given a fork loop, when it hits the pids limit, then forks fail, the loop is stopped and the cell survives', async () => {
    expect((await shText(taskId, 'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max')).out.trim()).toBe('128');

    const bomb = await shText(taskId, 'i=0; while [ $i -lt 1000 ]; do sleep 600 & i=$((i+1)); done; echo "spawned all $i"');

    expect(bomb.exit).not.toBe(0);
    expect(bomb.out).not.toContain('spawned all');
    expect(bomb.err).toContain("can't fork");
    const after = await shText(taskId, 'echo alive; ps -o args | grep -c "^sleep 600" || true');
    expect(after.out).toBe('alive\n0\n');
  });

  it('given /tmp, when a program is written there and run, then writing works but executing is refused (noexec)', async () => {
    const result = await shText(taskId, 'printf "#!/bin/sh\\necho ran\\n" > /tmp/p && chmod +x /tmp/p && echo written && /tmp/p');
    expect(result.out).toBe('written\n');
    expect(result.exit).toBe(126);
  });

  it('given a cell, when its environment is read back from Docker, then it attests the applied hardening', async () => {
    const environment = await runtime.environment(taskId);
    expect(environment).toMatchObject({
      running: true,
      image: 'writ/cell:latest',
      network_mode: 'none',
      readonly_rootfs: true,
      privileged: false,
      cap_drop: ['ALL'],
      cap_add: [],
      security_opt: ['no-new-privileges'],
      user: '10001:10001',
      memory: 256 * 1024 * 1024,
      memory_swap: 256 * 1024 * 1024,
      pids_limit: 128,
      nano_cpus: 1_000_000_000,
      ipc_mode: 'private',
      tmpfs: { '/tmp': 'rw,noexec,nosuid,nodev,size=16m' },
      env_names: ['PATH', 'HOME', 'LANG'],
    });
    expect(environment.image_id).toBe((await runtime.ensureImage()).image_id);
    expect(environment.mounts).toEqual([
      { type: 'bind', source: runtime.hostPaths(taskId).workspaceDir, destination: '/workspace', rw: true, propagation: 'rprivate' },
    ]);
  });
});

describe('limits of one exec', () => {
  let taskId: string;

  beforeAll(async () => {
    taskId = newTaskId('limits');
    await runtime.openCell(taskId);
  });

  it('given `sleep 30` and a 1 s timeout, when run, then it is killed and reported as timed out', async () => {
    const result = await runtime.exec(taskId, { argv: ['sleep', '30'], timeoutMs: 1_000, maxOutputBytes: 1024 });
    expect([result.timed_out, result.exit_code]).toEqual([true, 137]);
  });

  it('given background children, when the timeout fires, then the whole process group is gone', async () => {
    const result = await sh(taskId, 'sleep 31 & sleep 32 & echo started; wait', { timeoutMs: 2_000 });
    expect([result.timed_out, result.stdout.toString()]).toEqual([true, 'started\n']);
    expect((await shText(taskId, 'ps -o args | grep -c "^sleep 3[12]" || true')).out).toBe('0\n');
  });

  it('given a background child left running, when the action ends in time, then the child is killed too', async () => {
    const result = await sh(taskId, 'sleep 33 & echo done');
    expect([result.exit_code, result.timed_out]).toEqual([0, false]);
    expect((await shText(taskId, 'ps -o args | grep -c "^sleep 33" || true')).out).toBe('0\n');
  });

  it('given 5 MB on stdout and 3 MB on stderr with a 1 KiB cap, when run, then both are truncated at the cap and the action still completes', async () => {
    const result = await sh(taskId, 'yes | head -c 5000000; yes e | head -c 3000000 >&2; echo finished >&2', { maxOutputBytes: 1024 });
    expect(result.exit_code).toBe(0);
    expect([result.stdout.length, result.stdout_truncated, result.stdout_bytes]).toEqual([1024, true, 5_000_000]);
    expect([result.stderr.length, result.stderr_truncated, result.stderr_bytes]).toEqual([1024, true, 3_000_009]);
    expect(result.stdout.toString()).toBe('y\n'.repeat(512));
  });

  it('given a process that escapes the action’s group and holds stdout, when the host deadline passes, then CELL_EXEC_TIMEOUT and the cell is restarted clean', async () => {
    const strict = new CellRuntime({ cellsRoot, labels: { 'writ.test': RUN_ID }, hostGraceMs: 1_000 });
    const before = await strict.environment(taskId);

    await expect(
      strict.exec(taskId, {
        // The action ends only once the child is in its own session (it writes the marker after setsid).
        argv: ['sh', '-c', 'setsid sh -c "touch /tmp/escaped; exec sleep 300" & until [ -e /tmp/escaped ]; do sleep 0.01; done; echo escaped'],
        timeoutMs: 500,
        maxOutputBytes: 1024,
      }),
    ).rejects.toMatchObject({ code: 'CELL_EXEC_TIMEOUT', details: expect.objectContaining({ cell_restarted: true }) });

    const after = await strict.environment(taskId);
    expect([after.container_id, after.running]).toEqual([before.container_id, true]);
    expect((await shText(taskId, 'ps -o args | grep -c "^sleep 300" || true')).out).toBe('0\n');
  });
});

describe('cwd stays inside the workspace', () => {
  let taskId: string;

  beforeAll(async () => {
    taskId = newTaskId('cwd');
    await runtime.openCell(taskId);
    await sh(taskId, 'mkdir real && ln -s /etc link && touch plain');
  });

  it.each(['../..', '..', '/etc', '/', '/workspace/../etc', 'real/../../etc'])('given cwd %j, when exec is asked, then CELL_PATH_ESCAPE', async (cwd) => {
    await expect(runtime.exec(taskId, { argv: ['pwd'], cwd, timeoutMs: 5_000, maxOutputBytes: 1024 })).rejects.toMatchObject({ code: 'CELL_PATH_ESCAPE' });
  });

  it('given a symlink in the workspace pointing to /etc, when used as cwd, then CELL_PATH_ESCAPE', async () => {
    await expect(runtime.exec(taskId, { argv: ['pwd'], cwd: 'link', timeoutMs: 5_000, maxOutputBytes: 1024 })).rejects.toMatchObject({ code: 'CELL_PATH_ESCAPE' });
  });

  it.each(['missing', 'plain'])('given cwd %j that is not a directory, when exec is asked, then CELL_CWD_INVALID', async (cwd) => {
    await expect(runtime.exec(taskId, { argv: ['pwd'], cwd, timeoutMs: 5_000, maxOutputBytes: 1024 })).rejects.toMatchObject({ code: 'CELL_CWD_INVALID' });
  });
});

describe('cells of different tasks', () => {
  it('given two tasks, when both open cells, then they get two containers that cannot see each other’s workspace', async () => {
    const a = newTaskId('iso-a');
    const b = newTaskId('iso-b');
    const [cellA, cellB] = await Promise.all([runtime.openCell(a), runtime.openCell(b)]);
    expect(cellA.container_id).not.toBe(cellB.container_id);

    await sh(a, 'echo only-a > secret-of-a.txt');

    // b's cell home holds only its own (empty) layout
    expect((await shText(b, 'ls -A /workspace')).out).toBe('.lazarus\nhome\nshared\n');
    const hostPathOfA = path.join(runtime.hostPaths(a).workspaceDir, 'secret-of-a.txt');
    expect((await shText(b, `cat ${hostPathOfA}`)).exit).not.toBe(0);
    expect((await shText(b, 'find / -path /proc -prune -o -path /sys -prune -o -name secret-of-a.txt -print')).out).toBe('');
    expect((await shText(a, 'cat secret-of-a.txt')).out).toBe('only-a\n');
  });
});

describe('cell lifecycle', () => {
  it('given a running cell, when the same task opens it again, then the running container is reused', async () => {
    const taskId = newTaskId('warm');
    const first = await runtime.openCell(taskId);
    await sh(taskId, 'echo warm > /tmp/marker');

    const second = await runtime.openCell(taskId);

    expect([second.reused, second.container_id]).toEqual([true, first.container_id]);
    expect((await shText(taskId, 'cat /tmp/marker')).out).toBe('warm\n');
    expect(await labelledContainers(`writ.task_id=${taskId}`)).toHaveLength(1);
  });

  it('given a stopped cell, when the task opens it again, then the same container is started again', async () => {
    const taskId = newTaskId('stopped');
    const first = await runtime.openCell(taskId);
    await docker.getContainer(first.container_id).stop({ t: 0 });
    await expect(sh(taskId, 'true')).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });

    const second = await runtime.openCell(taskId);

    expect([second.reused, second.container_id]).toEqual([true, first.container_id]);
    expect((await shText(taskId, 'echo up')).out).toBe('up\n');
  });

  it('given a cell with files, when closed without scrub, then the container is gone and the workspace stays', async () => {
    const taskId = newTaskId('close');
    await runtime.openCell(taskId);
    await sh(taskId, 'echo keep > kept.txt');

    expect(await runtime.closeCell(taskId)).toEqual({ containers_removed: 1, workspace_scrubbed: false });

    expect(await labelledContainers(`writ.task_id=${taskId}`)).toEqual([]);
    expect((await stat(path.join(runtime.hostPaths(taskId).workspaceDir, 'kept.txt'))).isFile()).toBe(true);
    await expect(sh(taskId, 'true')).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });
  });

  it('given a cell with files, when closed with scrub, then nothing of the task is left: no container, no workspace', async () => {
    const taskId = newTaskId('scrub');
    const cell = await runtime.openCell(taskId);
    await sh(taskId, 'mkdir -p deep/er && echo x > deep/er/f && echo y > /tmp/t');

    expect(await runtime.closeCell(taskId, { scrub: true })).toEqual({ containers_removed: 1, workspace_scrubbed: true });

    expect(await labelledContainers(`writ.task_id=${taskId}`)).toEqual([]);
    await expect(docker.getContainer(cell.container_id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await expect(lstat(runtime.hostPaths(taskId).taskDir)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(runtime.environment(taskId)).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });
    // Closing again is not an error.
    expect(await runtime.closeCell(taskId, { scrub: true })).toEqual({ containers_removed: 0, workspace_scrubbed: true });
  });

  it('given a task without a cell, when exec is asked, then CELL_NOT_FOUND', async () => {
    await expect(sh(newTaskId('none'), 'true')).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });
  });

  it('given a task id that could escape, when a cell is opened, then CELL_TASK_ID_INVALID', async () => {
    await expect(runtime.openCell('../etc')).rejects.toMatchObject({ code: 'CELL_TASK_ID_INVALID' });
  });
});

describe('what the cell needs from the host', () => {
  it('given an image tag that does not exist, when a cell is opened, then CELL_IMAGE_MISSING and nothing is created', async () => {
    const missing = new CellRuntime({ cellsRoot, image: `writ/cell:missing-${RUN_ID}`, labels: { 'writ.test': RUN_ID } });
    const taskId = newTaskId('noimage');

    await expect(missing.ensureImage()).rejects.toMatchObject({ code: 'CELL_IMAGE_MISSING' });
    await expect(missing.openCell(taskId)).rejects.toMatchObject({ code: 'CELL_IMAGE_MISSING' });

    expect(await labelledContainers(`writ.task_id=${taskId}`)).toEqual([]);
    await expect(lstat(missing.hostPaths(taskId).taskDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('given a Docker socket that is not there, when the image is checked, then CELL_DOCKER_UNAVAILABLE', async () => {
    const unreachable = new CellRuntime({ cellsRoot, socketPath: path.join(cellsRoot, 'no-docker.sock') });
    await expect(unreachable.ensureImage()).rejects.toMatchObject({ code: 'CELL_DOCKER_UNAVAILABLE' });
  });

  it('given the built image, when ensured, then its id is content-addressed', async () => {
    const image = await runtime.ensureImage();
    expect(image.image_id).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
