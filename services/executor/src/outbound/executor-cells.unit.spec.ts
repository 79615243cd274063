import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sha256Hex } from '@writ/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CellExecOptions, CellExecResult, CellRuntime } from './cells/index.js';
import { ExecutorCells } from './executor-cells.js';
import { secretEnvName, type ResolvedSecret, type SecretSource } from './secrets/index.js';

/**
 * The cell port's redaction across a task's execs (invariant 6): a secret resolved into a
 * cell once is redacted from every later output of that cell and keeps any file holding it
 * out of the artifacts, also after a restart (`holdSecrets`, from the log), never passed to
 * an exec that was not granted it.
 */

const TASK = 'task-1';
const SECRET = 'sk-unit-canary-5d9e0c1f2a3b4c5d6e7f';
let workspace: string;

beforeAll(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), 'writ-cells-secrets-'));
  await writeFile(path.join(workspace, 'canary.txt'), SECRET);
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** A store holding the canary under `canary` only; every other handle is unavailable. */
const store: SecretSource = {
  resolve: async (handles) =>
    handles.map((handle): ResolvedSecret => {
      if (handle !== 'canary') throw Object.assign(new Error(`no ${handle}`), { code: 'EXECUTOR_SECRET_UNAVAILABLE' });
      return { handle, env: secretEnvName(handle), value: SECRET };
    }),
};

/** A runtime whose every exec prints the file back (as `cat canary.txt` would) and records the options it got. */
function fakeRuntime(seen: CellExecOptions[]): CellRuntime {
  const printed = (text: string): CellExecResult => ({
    exit_code: 0,
    stdout: Buffer.from(text),
    stderr: Buffer.from(`echo ${text}\n`),
    stdout_truncated: false,
    stderr_truncated: false,
    stdout_bytes: text.length,
    stderr_bytes: text.length + 6,
    timed_out: false,
    duration_ms: 1,
  });
  return {
    exec: async (_taskId: string, options: CellExecOptions) => {
      seen.push(options);
      return printed(SECRET);
    },
    hostPaths: () => ({ workspaceDir: workspace }),
    closeCell: async () => ({ containers_removed: 0 }),
  } as unknown as CellRuntime;
}

const run = { argv: ['cat', 'canary.txt'], timeoutMs: 1_000, maxOutputBytes: 1_024 } as unknown as CellExecOptions;
const fileBack = (cells: ExecutorCells) => cells.readChangedFile(TASK, 'canary.txt', sha256Hex(SECRET), 1_024);

describe('ExecutorCells: the secrets a cell held stay redacted', () => {
  it('given an exec granted the canary, when a later exec of the same cell prints it without the handle, then it is redacted and the file holding it is no artifact', async () => {
    const seen: CellExecOptions[] = [];
    const granted = new ExecutorCells(fakeRuntime(seen), undefined, store);
    expect((await granted.exec(TASK, { ...run, secretHandles: ['canary'] })).stdout.toString()).toBe('[redacted:canary]');
    const later = await granted.exec(TASK, run);
    expect([later.stdout.toString(), later.stderr.toString()]).toEqual(['[redacted:canary]', 'echo [redacted:canary]\n']);
    expect(await fileBack(granted)).toBeUndefined();
    // the later exec got no secret in its environment
    expect(seen[0]?.env?.[secretEnvName('canary')]).toBe(SECRET);
    expect(seen[1]?.env?.[secretEnvName('canary')]).toBeUndefined();
  });

  it('given a restarted executor (nothing in memory), when it holds the handles the log says the cell held, then the later exec is redacted and the file is no artifact; without, the value would come back', async () => {
    const seen: CellExecOptions[] = [];
    const fresh = new ExecutorCells(fakeRuntime(seen), undefined, store);
    // without holding: what a restart without the log would capture
    expect((await fresh.exec(TASK, run)).stdout.toString()).toBe(SECRET);
    expect(Buffer.from((await fileBack(fresh)) ?? new Uint8Array()).toString()).toBe(SECRET);
    const restarted = new ExecutorCells(fakeRuntime(seen), undefined, store);
    await restarted.holdSecrets(TASK, ['canary']);
    expect((await restarted.exec(TASK, run)).stdout.toString()).toBe('[redacted:canary]');
    expect(await fileBack(restarted)).toBeUndefined();
    expect(seen.every((options) => options.env?.[secretEnvName('canary')] === undefined)).toBe(true);
  });

  it('given a handle the store no longer resolves among those held, then it is skipped and the others are held', async () => {
    const cells = new ExecutorCells(fakeRuntime([]), undefined, store);
    await cells.holdSecrets(TASK, ['gone', 'canary']);
    expect((await cells.exec(TASK, run)).stdout.toString()).toBe('[redacted:canary]');
  });
});
