import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ExecutionCompleted, type RunAction } from '@writ/contracts';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useIdFor } from '../application/event-drafts.js';
import { ExecutorRig, newIds, request, runAction, type Ids } from '../../test/executor-rig.js';

/**
 * Crash safety with the real process (Hermit 19): the executor runs as a child process
 * (`node dist/main.js`, built by nx), is killed with SIGKILL in the middle of 100 actions,
 * and started again. Every action appends a line to a marker file named after it, so a
 * side effect run twice shows as two lines. Test-unique subject root, streams, bucket and
 * cells root; the cells (named after test-unique task ids) are removed afterwards.
 */

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const TASKS = 10;
const PER_TASK = 10;

const rig = new ExecutorRig();
const children: ChildProcess[] = [];
const taskIds: string[] = [];

function startExecutor(id: string): ChildProcess {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, ...rig.env, WRIT_EXECUTOR_ID: id, WRIT_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  await rig.open('executor-crash', {
    cellsRoots: ['writ-crash-'],
    env: { WRIT_ACTION_TIMEOUT_MS: '8000', WRIT_EXECUTOR_CONCURRENCY: '8', WRIT_CLAIM_GRACE_MS: '1000', WRIT_CLAIM_POLL_MS: '200' },
    cellImage: false,
  });
  await rig.openLog({ kid: 'approval-crash', displayName: 'approval (crash test)' });
}, 120_000);

afterAll(async () => {
  await Promise.all(children.map((child) => killHard(child)));
  for (const taskId of taskIds) await rig.docker.getContainer(`writ-cell-${taskId}`).remove({ force: true, v: true }).catch(() => undefined);
  // The killed process cannot remove its warm pool; its pooled cells carry this test's cells root.
  for (const root of rig.cellsRoots) {
    const pooled = await rig.docker.listContainers({ all: true, filters: { label: [`writ.cell.pool.root=${root}`] } });
    for (const cell of pooled) await rig.docker.getContainer(cell.Id).remove({ force: true, v: true }).catch(() => undefined);
  }
  await rig.close();
}, 120_000);

interface Sent {
  readonly ids: Ids;
  readonly command: RunAction;
  readonly marker: string;
}

async function completions(sent: readonly Sent[]): Promise<Map<string, ExecutionCompleted[]>> {
  const byUse = new Map<string, ExecutionCompleted[]>();
  for (const taskId of new Set(sent.map((s) => s.ids.task_id))) {
    for (const event of await rig.events(taskId)) {
      if (event.event_type !== 'execution.completed') continue;
      const payload = ExecutionCompleted.parse(event.payload);
      byUse.set(payload.grant_id, [...(byUse.get(payload.grant_id) ?? []), payload]);
    }
  }
  return byUse;
}

async function markerLines(s: Sent): Promise<number> {
  const text = await readFile(rig.hostFile(s.ids.task_id, `markers/${s.marker}`), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '').length;
}

describe('an executor killed with SIGKILL in the middle of 100 actions', () => {
  it('given 100 granted actions running, when the process is killed -9 and started again, then every use ends exactly once and no side effect ran twice', async () => {
    // given: one executor process working through 100 actions in 10 task cells
    let executor = startExecutor('executor-crash-a');
    const sent: Sent[] = [];
    for (let t = 0; t < TASKS; t += 1) {
      const taskId = uniqueName('task-crash');
      taskIds.push(taskId);
      for (let n = 0; n < PER_TASK; n += 1) {
        const ids = newIds('crash', taskId);
        const marker = `m${t}-${n}`;
        const actionRequest = request(ids, {
          target_resources: ['markers'],
          params: { argv: ['sh', '-c', `sleep 0.$(( RANDOM % 4 + 1 )); mkdir -p markers; echo x >> markers/${marker}`] },
        });
        const grant = await rig.mint({ ids });
        const command = runAction(ids, grant, actionRequest);
        sent.push({ ids, command, marker });
      }
    }
    await waitFor(
      async () => {
        const consumers = await rig.jsm.consumers.info(rig.config.streams.commands, rig.config.durable).catch(() => undefined);
        return consumers === undefined ? undefined : true;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the executor bound its durable' },
    );
    for (const s of sent) await rig.publishRunAction(s.command, useIdFor(s.command));

    // when: about half are claimed, the process is killed without a chance to clean up
    await waitFor(
      async () => {
        let claimed = 0;
        for (const taskId of taskIds) claimed += (await rig.events(taskId)).filter((e) => e.event_type === 'grant.use_claimed').length;
        return claimed >= 50 ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 100, what: 'half of the uses claimed' },
    );
    await killHard(executor);
    executor = startExecutor('executor-crash-a');

    // then: every use ends, exactly once
    await waitFor(async () => ((await completions(sent)).size === sent.length ? true : undefined), { timeoutMs: 300_000, intervalMs: 500, what: 'every use completed' });
    const byGrant = await completions(sent);
    const outcomes = { completed: 0, errored: 0, unknown: 0, not_run: 0 };
    for (const s of sent) {
      const ended = byGrant.get(s.command.grant_id) ?? [];
      expect(ended, `execution.completed of ${s.marker}`).toHaveLength(1);
      const [completion] = ended as [ExecutionCompleted];
      expect(['completed', 'errored', 'unknown', 'not_run']).toContain(completion.outcome);
      outcomes[completion.outcome] += 1;
      const lines = await markerLines(s);
      // No side effect ran twice; an action recorded as having run to exit 0 ran exactly once.
      expect(lines, `marker of ${s.marker}`).toBeLessThanOrEqual(1);
      if (completion.outcome === 'completed' && completion.exit_code === 0) expect(lines, `marker of ${s.marker}`).toBe(1);
      // Proven never started (fenced, or claimed and no cell yet): it never ran, and the receipt must not say it did.
      if (completion.outcome === 'not_run') expect(lines).toBe(0);
    }
    expect(outcomes.completed).toBeGreaterThanOrEqual(50);
    await killHard(executor);
  }, 600_000);
});
