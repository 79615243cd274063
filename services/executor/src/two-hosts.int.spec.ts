import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ExecutionCompleted, hasErrorCode, type RunAction, type WorkspaceObserved } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { createLogger } from '@writ/telemetry';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CellRouter } from './application/cell-routing.js';
import { CloseCellHandler } from './application/close-cell.handler.js';
import { useIdFor } from './application/event-drafts.js';
import { ObserveWorkspaceHandler } from './application/observe-workspace.handler.js';
import type { ExecutorApp } from './bootstrap.js';
import { hostRoutes } from './config.js';
import { ExecutorRig, newIds, request, runAction, type Ids } from '../test/executor-rig.js';

/**
 * Several executors on several Docker hosts (issue 5): a task's actions, its close and its
 * state-witness observations reach the executor that holds its cell. Two in-process executors
 * on the same NATS, streams and durables, with distinct host ids and cells roots (two hosts;
 * one Docker engine, which is enough: a cell's files are under its host's cells root). Work is
 * handed to a chosen executor (its handler, as its listener would), and what is forwarded
 * travels over the real JetStream to the holder's own durable.
 *
 * The sweep timers are off and the cell heartbeat timeout is an hour, so a holder never looks
 * gone unless a test moves B's clock past it. Nothing waits on a sleep.
 */

const rig = new ExecutorRig();
const HOUR = 3_600_000;

let rootA: string;
let rootB: string;
let a: ExecutorApp | undefined;
let b: ExecutorApp;
/** Executor B's clock runs this far ahead of the wall clock (moved to see host A as gone). */
let offsetB = 0;
/** B's warnings, as JSON lines. */
const warningsB: Record<string, unknown>[] = [];

const HOST_A = `host-a-${rig.run}`;
const HOST_B = `host-b-${rig.run}`;

const startA = (): Promise<ExecutorApp> => rig.startExecutor({ executorId: 'routing-a', hostId: HOST_A });

beforeAll(async () => {
  await rig.open('executor-two-hosts', {
    cellsRoots: ['writ-host-a-', 'writ-host-b-'],
    env: {
      WRIT_CELL_POOL_SIZE: '0',
      WRIT_CELL_SWEEP_INTERVAL_MS: '0',
      WRIT_CELL_HEARTBEAT_TIMEOUT_MS: String(HOUR),
      WRIT_EXECUTOR_CONCURRENCY: '4',
      // a delivery B cannot place is retried once, then dead-lettered: the error shows without a long backoff
      WRIT_BUS_MAX_DELIVER: '2',
    },
  });
  [rootA, rootB] = rig.cellsRoots as [string, string];
  a = await startA();
  const warnings = createLogger('routing-b', { level: 'warn', destination: { write: (line: string) => void warningsB.push(JSON.parse(line) as Record<string, unknown>) } });
  b = await rig.startExecutor({ executorId: 'routing-b', hostId: HOST_B, cells: { ...rig.config.cells, cellsRoot: rootB } }, { clock: () => new Date(Date.now() + offsetB), logger: warnings });
  await rig.openLog({ kid: 'approval-two-hosts', displayName: 'approval (two hosts test)' });
}, 300_000);

afterAll(() => rig.close(), 120_000);

// ---- fixtures -------------------------------------------------------------------------------

const marker = (root: string, taskId: string, n: number) => rig.hostFile(taskId, `markers/${n}`, root);

/** One use of a fresh attempt and grant: appends a line to marker `n`. `at` is the clock the grant must be valid on. */
async function use(ids: Ids, n: number, at = new Date()): Promise<RunAction> {
  const attempt = { ...ids, step_id: uniqueName('step'), attempt_id: uniqueName('attempt') };
  const grant = await rig.mint({ ids: attempt, issuedAt: at, expiresAt: new Date(at.getTime() + 10 * 60_000) });
  return runAction(attempt, grant, request(attempt, { proposed_by: 'agent-1', proposed_at: at.toISOString(), params: { argv: ['sh', '-c', `mkdir -p markers && echo x >> markers/${n}`] }, target_resources: [`markers/${n}`] }));
}

async function completionOf(command: RunAction): Promise<ExecutionCompleted[]> {
  const useId = useIdFor(command);
  return (await rig.events(command.task_id)).filter((event) => event.event_id === `${useId}-completed`).map((event) => ExecutionCompleted.parse(event.payload));
}

/** Waits for the use's completion and returns every completion of it (there must be exactly one). */
async function completed(command: RunAction): Promise<ExecutionCompleted[]> {
  await waitFor(async () => ((await completionOf(command)).length > 0 ? true : undefined), { what: `execution.completed of ${useIdFor(command)}`, timeoutMs: 120_000, intervalMs: 100 });
  return completionOf(command);
}

/** The host ids the cell's placing events name, in order. */
async function hostsNamed(taskId: string): Promise<unknown[]> {
  return (await rig.cellEvents(taskId)).filter((event) => ['cell.preparing', 'cell.activated', 'cell.revived', 'cell.resurrected'].includes(event.event_type)).map((event) => event.payload['host_id']);
}

const running = () => {
  if (a === undefined) throw new Error('executor A is not running');
  return a;
};

// ---- tests ----------------------------------------------------------------------------------

describe('a task whose first action ran on host A', () => {
  const ids = newIds('hosts');

  it('given the first action ran on A, when the second RunAction is delivered to B, then B forwards it and it runs on A: the marker is in A’s workspace only, B opened no cell, one execution.completed', async () => {
    const first = await use(ids, 1);
    expect(await running().handler.handle(first)).toMatchObject({ status: 'executed', outcome: 'completed' });
    expect(await hostsNamed(ids.task_id)).toEqual([HOST_A, HOST_A]);

    const second = await use(ids, 2);
    // when: delivered to B (as its listener hands it over)
    expect(await b.handler.handle(second)).toEqual({ status: 'forwarded', host_id: HOST_A });

    const done = await completed(second);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ outcome: 'completed', exit_code: 0, executor_id: 'routing-a' });
    expect(await readFile(marker(rootA, ids.task_id, 2), 'utf8')).toBe('x\n');
    expect(existsSync(path.join(rootB, ids.task_id))).toBe(false);
    // one claim, by the holder; the cell was placed once, on A
    expect((await rig.events(ids.task_id)).filter((event) => event.event_type === 'grant.use_claimed')).toHaveLength(2);
    expect(await hostsNamed(ids.task_id)).toEqual([HOST_A, HOST_A]);
    // a redelivery of the same RunAction to B is forwarded again and settles on A as already done: nothing runs twice
    expect(await b.handler.handle(second)).toEqual({ status: 'already-done', reason: 'completed' });
    expect(await readFile(marker(rootA, ids.task_id, 2), 'utf8')).toBe('x\n');
  });

  it('given the cell on A, when B is asked to observe the task, then A’s files answer (B’s own workspace would say absent), over NATS whichever executor the queue group picks', async () => {
    const expected = `sha256:${sha256Hex(await readFile(marker(rootA, ids.task_id, 1)))}`;
    const request = { task_id: ids.task_id, resources: ['markers/1'] };
    const own = await b.app.get(ObserveWorkspaceHandler).observe(request);
    expect(own.fingerprints['markers/1']).toBe('absent');

    const viaB = await b.app.get(CellRouter).observe(request, (r) => b.app.get(ObserveWorkspaceHandler).observe(r));
    expect(viaB.fingerprints['markers/1']).toBe(expected);
    for (let i = 0; i < 6; i += 1) {
      const reply = await rig.client.request<WorkspaceObserved>(rig.config.subjects.observe, request, { timeoutMs: 15_000 });
      expect(reply.fingerprints['markers/1']).toBe(expected);
    }
  });

  it('given the cell on A, when close-cell is delivered to B, then A closes it with a final checkpoint (a non-holder could not take one)', async () => {
    expect(await b.app.get(CloseCellHandler).handle({ task_id: ids.task_id, reason: 'task.completed' })).toMatchObject({ cell: 'forwarded', forwarded_to: HOST_A });
    const closed = await waitFor(async () => (await rig.cellEvents(ids.task_id)).find((event) => event.event_type === 'cell.closed'), { what: 'cell.closed', timeoutMs: 60_000, intervalMs: 100 });
    const types = (await rig.cellEvents(ids.task_id)).map((event) => event.event_type);
    expect(types.slice(-3)).toEqual(['cell.checkpoint_started', 'cell.checkpoint_completed', 'cell.closed']);
    expect((await rig.cellEvents(ids.task_id)).at(-2)?.payload).toMatchObject({ final: true });
    // a close by a host without the cell would say so in its note, and take no checkpoint
    expect(closed.payload['note']).toBeUndefined();
    expect(existsSync(path.join(rootB, ids.task_id))).toBe(false);
  });
});

describe('a new task whose first two actions reach A and B at once', () => {
  it('given no cell yet, when A and B each take a first action of it at the same time, then one of them holds the cell, the other forwards, and both actions run on the holder', async () => {
    const ids = newIds('race');
    const [one, two] = [await use(ids, 1), await use(ids, 2)];
    const outcomes = await Promise.all([running().handler.handle(one), b.handler.handle(two)]);

    const preparing = (await rig.cellEvents(ids.task_id)).filter((event) => event.event_type === 'cell.preparing');
    expect(preparing).toHaveLength(1);
    const holder = preparing[0]?.payload['host_id'];
    expect([HOST_A, HOST_B]).toContain(holder);
    const [holderRoot, otherRoot] = holder === HOST_A ? [rootA, rootB] : [rootB, rootA];
    // the loser forwarded (nothing claimed there); the winner ran its own
    expect(outcomes.filter((outcome) => outcome.status === 'forwarded')).toEqual([{ status: 'forwarded', host_id: holder }]);
    for (const command of [one, two]) expect(await completed(command)).toEqual([expect.objectContaining({ outcome: 'completed', exit_code: 0 })]);
    expect(await readFile(marker(holderRoot, ids.task_id, 1), 'utf8')).toBe('x\n');
    expect(await readFile(marker(holderRoot, ids.task_id, 2), 'utf8')).toBe('x\n');
    expect(existsSync(path.join(otherRoot, ids.task_id))).toBe(false);
    expect(await hostsNamed(ids.task_id)).toEqual([holder, holder]);
  });
});

describe('host A stopped (runs last)', () => {
  const ids = newIds('gone');
  let waiting: RunAction;

  it('given A stopped while its heartbeats are within the timeout, when B gets an action of A’s task, then it waits on A’s own durable: not run, not claimed, B opened no cell', async () => {
    const first = await use(ids, 1);
    expect(await running().handler.handle(first)).toMatchObject({ status: 'executed', outcome: 'completed' });
    await rig.stopExecutor(running());
    a = undefined;

    waiting = await use(ids, 2);
    expect(await b.handler.handle(waiting)).toEqual({ status: 'forwarded', host_id: HOST_A });
    const durable = hostRoutes(rig.config.subjects, rig.config.durable, HOST_A).runDurable;
    const info = await rig.jsm.consumers.info(rig.config.streams.commands, durable);
    expect(info.num_pending).toBe(1);
    expect((await rig.events(ids.task_id)).filter((event) => event.event_type === 'grant.use_claimed')).toHaveLength(1);
    expect(existsSync(path.join(rootB, ids.task_id))).toBe(false);
  });

  it('given A silent past the heartbeat timeout (B’s clock), when an action of its task reaches B, then B does not run it: EXECUTOR_CELL_HOST_UNAVAILABLE, a warning naming A, and after the retries a dead letter with that code', async () => {
    offsetB = HOUR + 60_000;
    const late = new Date(Date.now() + offsetB);
    const direct = await use(ids, 3, late);
    const error = await b.handler.handle(direct).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(hasErrorCode(error, 'EXECUTOR_CELL_HOST_UNAVAILABLE')).toBe(true);
    expect(warningsB).toContainEqual(expect.objectContaining({ code: 'EXECUTOR_CELL_HOST_UNAVAILABLE', host_id: HOST_A, task_id: ids.task_id }));

    // through the bus (A is down: B is the only consumer of the shared durable)
    const published = await use(ids, 4, late);
    await rig.publishRunAction(published, uniqueName('late'));
    const letter = await waitFor(
      async () => {
        const found = await rig.jsm.streams.getMessage(rig.config.streams.dlq, { last_by_subj: rig.config.subjects.runDeadLetter }).catch(() => null);
        return found !== null && found.json<{ attempt_id: string }>().attempt_id === published.attempt_id ? found : undefined;
      },
      { what: 'the dead letter of the RunAction B could not place', timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(letter.header.get('Writ-Dlq-Error-Code')).toBe('EXECUTOR_CELL_HOST_UNAVAILABLE');
    // nothing ran or was claimed for either, and B opened no cell
    const log = await rig.events(ids.task_id);
    for (const command of [direct, published]) expect(log.some((event) => event.event_id.startsWith(useIdFor(command)))).toBe(false);
    expect(existsSync(path.join(rootB, ids.task_id))).toBe(false);
    expect(await hostsNamed(ids.task_id)).toEqual([HOST_A, HOST_A]);
    offsetB = 0;
  });

  it('given the action waiting on A’s durable, when A starts again, then it runs there, once', async () => {
    a = await startA();
    const done = await completed(waiting);
    expect(done).toEqual([expect.objectContaining({ outcome: 'completed', exit_code: 0, executor_id: 'routing-a' })]);
    expect(await readFile(marker(rootA, ids.task_id, 2), 'utf8')).toBe('x\n');
    expect(existsSync(path.join(rootB, ids.task_id))).toBe(false);
  });
});
