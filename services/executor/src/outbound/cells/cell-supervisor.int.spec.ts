import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCellImage, removeTestCells, tempDir } from '../../../test/test-cells.js';
import { CellRuntime, type CellExecOptions } from './cell-runtime.js';
import { useRecordDir } from './use-record.js';

/**
 * The in-cell supervisor (cell-supervisor.ts) against the real Docker Engine: recorded
 * actions without stdin or environment run through one long-lived exec per cell and
 * user, and must behave exactly as a Docker exec of the same action would.
 */

const RUN_ID = randomBytes(5).toString('hex');
const docker = new Docker();
let cellsRoot: string;
let supervised: CellRuntime;
let plain: CellRuntime;
let counter = 0;

const next = (label: string) => {
  counter += 1;
  return { taskId: `t-${RUN_ID}-${label}-${counter}`, useId: `use-${randomBytes(20).toString('hex')}` };
};

interface Ran {
  readonly exit: number;
  readonly out: string;
  readonly timedOut: boolean;
  readonly execId: string;
}

async function recorded(runtime: CellRuntime, taskId: string, argv: readonly string[], options: Partial<CellExecOptions> = {}): Promise<Ran> {
  const { useId } = next('use');
  let execId = '';
  const result = await runtime.exec(taskId, {
    argv,
    timeoutMs: 15_000,
    maxOutputBytes: 64 * 1024,
    ...options,
    record: {
      useId,
      onCreated: async (exec) => {
        execId = exec.exec_id;
      },
    },
  });
  return { exit: result.exit_code, out: result.stdout.toString('utf8'), timedOut: result.timed_out, execId };
}

beforeAll(async () => {
  await ensureCellImage(docker);
  cellsRoot = await tempDir('writ-supervisor-');
  supervised = new CellRuntime({ cellsRoot, useRecords: true, labels: { 'writ.test': RUN_ID } });
  plain = new CellRuntime({ cellsRoot, useRecords: true, supervisor: false, labels: { 'writ.test': RUN_ID } });
}, 300_000);

afterAll(async () => {
  await removeTestCells(RUN_ID, [cellsRoot], docker);
});

describe('recorded actions through the in-cell supervisor', () => {
  it('given two actions in one cell, when both run, then one long-lived exec ran both; without the supervisor each is its own exec', async () => {
    const { taskId } = next('one-exec');
    await supervised.openCell(taskId);

    const first = await recorded(supervised, taskId, ['sh', '-c', 'echo one']);
    const second = await recorded(supervised, taskId, ['sh', '-c', 'echo two; exit 3']);
    const third = await recorded(plain, taskId, ['true']);
    const fourth = await recorded(plain, taskId, ['true']);

    expect(first).toMatchObject({ exit: 0, out: 'one\n' });
    expect(second).toMatchObject({ exit: 3, out: 'two\n' });
    expect(second.execId).toBe(first.execId);
    expect(new Set([first.execId, third.execId, fourth.execId]).size).toBe(3);
  });

  it('given arguments with quotes, newlines, substitutions, an empty one and non-ASCII, when run, then the action receives exactly them', async () => {
    const { taskId } = next('argv');
    await supervised.openCell(taskId);
    const args = ["it's", 'a "b"', 'line1\nline2\n', '$(touch /workspace/pwned)', '`id`', '', 'trailing\\', 'ünïcödé ✓', '--', '*'];

    const ran = await recorded(supervised, taskId, ['sh', '-c', 'for a in "$@"; do printf "[%s]" "$a"; done', 'argv0', ...args]);
    const listing = await recorded(supervised, taskId, ['ls', '/workspace']);

    expect(ran.exit).toBe(0);
    expect(ran.out).toBe(`${args.map((a) => `[${a}]`).join('')}`);
    expect(listing.out).not.toContain('pwned');
  });

  it('given a cwd, when run, then the action starts there; its environment is the one a plain exec gets', async () => {
    const { taskId } = next('env');
    await supervised.openCell(taskId);
    await mkdir(path.join(supervised.hostPaths(taskId).workspaceDir, 'sub'), { recursive: true });
    const listing = ['sh', '-c', 'pwd; env | cut -d= -f1 | sort | tr "\\n" " "'];

    const viaLoop = await recorded(supervised, taskId, listing, { cwd: 'sub' });
    const viaExec = await recorded(plain, taskId, listing, { cwd: 'sub' });

    expect(viaLoop.out.split('\n')[0]).toBe('/workspace/sub');
    expect(viaLoop.out).toBe(viaExec.out);
    expect(viaLoop.execId).not.toBe(viaExec.execId);
  });

  it('given `sleep 30` and a 1 s timeout, when run, then the in-cell timer kills it and the result says timed out', async () => {
    const { taskId } = next('timeout');
    await supervised.openCell(taskId);

    const ran = await recorded(supervised, taskId, ['sleep', '30'], { timeoutMs: 1_000 });

    expect(ran).toMatchObject({ exit: 137, timedOut: true });
  });

  it('given an action that kills its supervisor, when it ends, then its result still comes from its record and the next action gets a new supervisor', async () => {
    const { taskId } = next('killed');
    await supervised.openCell(taskId);
    const before = await recorded(supervised, taskId, ['true']);
    const killLoop = 'for p in /proc/[0-9]*; do if grep -q "writ-super""visor" "$p/cmdline" 2>/dev/null; then kill -9 "${p#/proc/}"; fi; done; echo survived';

    const killer = await recorded(supervised, taskId, ['sh', '-c', killLoop]);
    const after = await recorded(supervised, taskId, ['sh', '-c', 'echo again']);

    expect(killer).toMatchObject({ exit: 0, out: 'survived\n', execId: before.execId });
    expect(after).toMatchObject({ exit: 0, out: 'again\n' });
    expect(after.execId).not.toBe(before.execId);
  });

  it('given the cell was stopped and opened again, when an action runs, then it runs (in a new supervisor)', async () => {
    const { taskId } = next('restart');
    await supervised.openCell(taskId);
    const first = await recorded(supervised, taskId, ['true']);

    await supervised.stopCell(taskId);
    await supervised.openCell(taskId);
    const second = await recorded(supervised, taskId, ['sh', '-c', 'echo back']);

    expect(second).toMatchObject({ exit: 0, out: 'back\n' });
    expect(second.execId).not.toBe(first.execId);
  });

  it('given a use fenced by a reconciler before it started, when the loop is asked to run it, then CELL_USE_FENCED and nothing ran', async () => {
    const { taskId } = next('fenced');
    await supervised.openCell(taskId);
    const usesDir = supervised.hostPaths(taskId).usesDir;
    const { useId } = next('fence');

    const run = supervised.exec(taskId, {
      argv: ['sh', '-c', 'echo ran > /workspace/ran.txt'],
      timeoutMs: 15_000,
      maxOutputBytes: 1024,
      record: {
        useId,
        // What a reconciler does on the host (use-record.ts fenceUseRecord): the start mark first, then its own marker.
        onCreated: async () => {
          await mkdir(path.join(useRecordDir(usesDir, useId), 'run'));
          await writeFile(`${useRecordDir(usesDir, useId)}.fenced`, '');
        },
      },
    });

    await expect(run).rejects.toMatchObject({ code: 'CELL_USE_FENCED' });
    const ls = await recorded(supervised, taskId, ['ls', '/workspace']);
    expect(ls.out).not.toContain('ran.txt');
  });

  it('given a loop Docker refuses to start (an injected engine error), when an action runs, then it still runs, through a Docker exec of its own', async () => {
    // The real engine, with one fault: creating the supervisor's exec fails as a busy engine would.
    const faulty = new Proxy(docker, {
      get(target, name) {
        if (name !== 'getContainer') return Reflect.get(target, name, target);
        return (id: string) => {
          const container = target.getContainer(id);
          return new Proxy(container, {
            get(inner, prop) {
              const value = Reflect.get(inner, prop, inner);
              if (prop !== 'exec' || typeof value !== 'function') return typeof value === 'function' ? value.bind(inner) : value;
              return (options: Docker.ExecCreateOptions) =>
                options.Cmd?.[3] === 'writ-supervisor' ? Promise.reject(Object.assign(new Error('injected: engine busy'), { statusCode: 500 })) : value.call(inner, options);
            },
          });
        };
      },
    });
    const runtime = new CellRuntime({ cellsRoot, useRecords: true, docker: faulty, labels: { 'writ.test': RUN_ID } });
    const { taskId } = next('no-loop');
    await runtime.openCell(taskId);

    const first = await recorded(runtime, taskId, ['sh', '-c', 'echo fine']);
    const second = await recorded(runtime, taskId, ['sh', '-c', 'echo again']);

    expect(first).toMatchObject({ exit: 0, out: 'fine\n' });
    expect(second).toMatchObject({ exit: 0, out: 'again\n' });
    expect(second.execId).not.toBe(first.execId);
  });

  it('given stdin or per-exec environment, when run recorded, then it is a Docker exec of its own, never the loop', async () => {
    const { taskId } = next('stdin');
    await supervised.openCell(taskId);
    const loop = await recorded(supervised, taskId, ['true']);

    const withStdin = await recorded(supervised, taskId, ['cat'], { stdin: 'fed' });
    const withEnv = await recorded(supervised, taskId, ['sh', '-c', 'printf %s "$WRIT_SECRET_X"'], { env: { WRIT_SECRET_X: 'shh' } });

    expect(withStdin).toMatchObject({ exit: 0, out: 'fed' });
    expect(withEnv).toMatchObject({ exit: 0, out: 'shh' });
    expect(new Set([loop.execId, withStdin.execId, withEnv.execId]).size).toBe(3);
  });
});
