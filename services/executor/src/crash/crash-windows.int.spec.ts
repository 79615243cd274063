import 'reflect-metadata';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ExecutionCompleted, type EventEnvelope, type RunAction } from '@writ/contracts';
import { waitFor } from '@writ/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutorApp } from '../bootstrap.js';
import { DEFAULT_CELL_LIFECYCLE } from '../config.js';
import { claimDraft, startedDraft, useIdFor, type DraftContext } from '../application/event-drafts.js';
import { EventStoreTaskLog } from '../outbound/event-log.js';
import { cellHostPaths, prepareUseRecord, useRecordDir } from '../outbound/cells/index.js';
import { deriveHostId } from '../outbound/host-identity.js';
import { FileUseJournal } from '../outbound/use-journal.js';
import { ExecutorRig, newIds, request, runAction, type Ids } from '../../test/executor-rig.js';

/**
 * The crash windows of one use (issue 13), each left behind exactly as a SIGKILL of the
 * executor leaves it — the host journal entry, the claim in the log, the cell, the exec's
 * record, `execution.started` — then the executor is started again with the same id on the
 * same host paths, and its RunAction is delivered again (the bus redelivers an unacked one):
 * (a) claimed, no cell yet; (b) cell and exec, not started; (c) started and exited, completion
 * not recorded; (d) the redelivery arrives while the restarted process is still settling the use.
 * A use proven never started is `not_run` (released: the next run takes a new use and runs the
 * action once); a use that ran is recorded from its record; nothing is acked before it is recorded.
 * Real NATS, Docker and host paths; test-unique streams, subjects and cells root.
 */

const EXECUTOR = 'executor-windows-a';
const rig = new ExecutorRig();
let log: EventStoreTaskLog;
let context: DraftContext;
/** This host's id as the executor derives it (Docker engine id and cells root): the one its claims name. */
let hostId: string;

beforeAll(async () => {
  await rig.open('crash-windows', {
    cellsRoots: ['writ-windows-'],
    // A use window far longer than any test here: a use settled by waiting for its deadline fails the test's wait.
    env: { WRIT_ACTION_TIMEOUT_MS: '300000', WRIT_CLAIM_GRACE_MS: '1000', WRIT_CLAIM_POLL_MS: '100', WRIT_CELL_POOL_SIZE: '0', WRIT_EXECUTOR_ID: EXECUTOR },
  });
  await rig.openLog({ kid: 'approval-windows', displayName: 'approval (crash windows)' });
  log = new EventStoreTaskLog(rig.store);
  hostId = await deriveHostId(rig.config.cells.socketPath, rig.cellsRoot);
  context = { actorId: rig.config.principalId, occurredAt: new Date().toISOString() };
  // The streams, the durable and its consumer exist once one executor has started.
  await rig.stopExecutor(await rig.startExecutor({ executorId: EXECUTOR }));
}, 300_000);

afterAll(() => rig.close(), 120_000);

/** Executors a test started: stopped after it, passed or failed, so none takes the next test's deliveries. */
const apps = new Set<ExecutorApp>();
afterEach(async () => {
  for (const app of apps) await rig.stopExecutor(app);
  apps.clear();
}, 120_000);

async function start(overrides: Parameters<ExecutorRig['startExecutor']>[0] = {}): Promise<ExecutorApp> {
  const app = await rig.startExecutor({ executorId: EXECUTOR, ...overrides });
  apps.add(app);
  return app;
}

async function stop(app: ExecutorApp): Promise<void> {
  apps.delete(app);
  await rig.stopExecutor(app);
}

const completionOf = (useId: string) => (event: EventEnvelope) => event.event_type === 'execution.completed' && event.event_id === `${useId}-completed`;

/** A command appending one line to `markers/<name>` in the task's workspace. */
async function markerCommand(ids: Ids, name: string, extra: Partial<RunAction> = {}): Promise<RunAction> {
  const grant = await rig.mint({ ids });
  const actionRequest = request(ids, { target_resources: ['markers'], params: { argv: ['sh', '-c', `mkdir -p markers && echo x >> markers/${name}`] } });
  return { ...runAction(ids, grant, actionRequest), ...extra };
}

async function markerLines(taskId: string, name: string): Promise<number> {
  const text = await readFile(rig.hostFile(taskId, `markers/${name}`), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '').length;
}

/** What a killed executor left in the log and on the host after claiming `command`'s use. */
async function leftClaimed(command: RunAction, claimedBy: string | undefined = EXECUTOR, claimedOn: string = hostId): Promise<string> {
  const useId = useIdFor(command);
  await new FileUseJournal(rig.cellsRoot, EXECUTOR).write(useId, command);
  const at = new Date().toISOString();
  const data = {
    use_id: useId,
    use_no: 1,
    task_id: command.task_id,
    attempt_id: command.attempt_id,
    action_class: command.action_request.action_class,
    ...(claimedBy === undefined ? {} : { executor_id: claimedBy, host_id: claimedOn }),
    at,
  };
  const head = (await log.read(command.task_id)).at(-1)?.task_seq ?? 0;
  await log.append(command.task_id, [claimDraft(command, useId, data, { ...context, occurredAt: at })], head);
  return useId;
}

/** `execution.started` of the use, as the killed executor appended it after creating the exec. */
async function leftStarted(command: RunAction, useId: string): Promise<void> {
  const now = new Date();
  const data = {
    use_id: useId,
    grant_id: command.grant_id,
    use_no: 1,
    executor_id: EXECUTOR,
    container_id: 'c'.repeat(64),
    exec_id: 'e'.repeat(64),
    started_at: now.toISOString(),
    deadline: new Date(now.getTime() + 300_000).toISOString(),
  };
  const head = (await log.read(command.task_id)).at(-1)?.task_seq ?? 0;
  await log.append(command.task_id, [startedDraft(command, useId, `${useId}-claimed`, data, context)], head);
}

/** Runs a first action of the task to its completion, so that its cell exists on this host. */
async function withCell(ids: Ids): Promise<void> {
  const first = await markerCommand(ids, 'first');
  await rig.publishRunAction(first, useIdFor(first));
  await rig.waitForTaskEvent(ids.task_id, 'the first action completed', completionOf(useIdFor(first)), { timeoutMs: 120_000 });
}

/**
 * The executor started again (same id, same cells root), and the use's RunAction delivered
 * again: resolves with the completion of the use, read right after the bus acked the delivery.
 */
async function restartAndRedeliver(command: RunAction): Promise<{ app: ExecutorApp; completion: ExecutionCompleted; log: EventEnvelope[] }> {
  const useId = useIdFor(command);
  // Published before the start: delivered while the start's journal reconciliation may still be settling it.
  const seq = await rig.publishRunAction(command, `${useId}-redelivered`);
  const app = await start();
  await rig.waitSettled(seq, { timeoutMs: 120_000 });
  // Acked: by then the use is recorded (never acked on an in-flight answer).
  const events = await rig.events(command.task_id);
  const completed = events.find(completionOf(useId));
  expect(completed, 'execution.completed of the use when its delivery was acked').toBeDefined();
  return { app, completion: ExecutionCompleted.parse(completed?.payload), log: events };
}

/** What the orchestrator sends after a `not_run`: run 2 of the same grant, a new use; it runs the action once. */
async function secondRunRunsOnce(command: RunAction, marker: string): Promise<void> {
  const again: RunAction = { ...command, run_no: 2 };
  await rig.publishRunAction(again, useIdFor(again));
  const done = await rig.waitForTaskEvent(command.task_id, 'run 2 completed', completionOf(useIdFor(again)), { timeoutMs: 120_000 });
  expect(ExecutionCompleted.parse(done.payload)).toMatchObject({ outcome: 'completed', exit_code: 0, use_no: 2 });
  expect(await markerLines(command.task_id, marker)).toBe(1);
}

describe('crash windows of one use, settled by the executor started again (issue 13)', () => {
  it('(a) given a use claimed by this executor that died before the task cell existed, when it starts again and the RunAction is redelivered, then not_run with the use released (never "errored", never unknown), and run 2 runs the action once', async () => {
    // given: claimed and journaled, no cell for the task on this host
    const ids = newIds('win-a');
    const command = await markerCommand(ids, 'a');
    const useId = await leftClaimed(command);

    // when
    const { app, completion, log: events } = await restartAndRedeliver(command);

    // then: proven not run, released in the same append; nothing ran
    expect(completion).toMatchObject({ outcome: 'not_run', use_no: 1, error: { code: 'CELL_USE_FENCED' } });
    expect(events.filter((e) => e.event_type === 'grant.use_released')).toMatchObject([{ entity_id: command.grant_id, payload: { use_id: useId, use_no: 1 } }]);
    expect(await markerLines(ids.task_id, 'a')).toBe(0);
    await secondRunRunsOnce(command, 'a');
    await stop(app);
  }, 300_000);

  it('(b) given a use whose exec was created in the cell (record prepared, execution.started appended) and never started, when the executor starts again, then it is fenced: not_run, released, and run 2 runs the action once', async () => {
    // given: the task's cell, then the use left between exec creation and start
    const ids = newIds('win-b');
    const setup = await start();
    await withCell(ids);
    await stop(setup);
    const command = await markerCommand(ids, 'b');
    const useId = await leftClaimed(command);
    await prepareUseRecord(cellHostPaths(rig.cellsRoot, ids.task_id).usesDir, useId);
    await leftStarted(command, useId);

    // when
    const { app, completion, log: events } = await restartAndRedeliver(command);

    // then: fenced before the wrapper began; it never ran and never will
    expect(completion).toMatchObject({ outcome: 'not_run', error: { code: 'CELL_USE_FENCED' } });
    expect(events.some((e) => e.event_type === 'grant.use_released' && (e.payload as { use_id?: string }).use_id === useId)).toBe(true);
    expect(await markerLines(ids.task_id, 'b')).toBe(0);
    await secondRunRunsOnce(command, 'b');
    await stop(app);
  }, 300_000);

  it('(c) given a use that started and exited 0 with its completion never recorded, when the executor starts again, then completed from the record, nothing released, nothing run again', async () => {
    // given: the record as the wrapper leaves it after the action's exit, and the side effect it had
    const ids = newIds('win-c');
    const setup = await start();
    await withCell(ids);
    await stop(setup);
    const command = await markerCommand(ids, 'c');
    const useId = await leftClaimed(command);
    const usesDir = cellHostPaths(rig.cellsRoot, ids.task_id).usesDir;
    await prepareUseRecord(usesDir, useId);
    const record = useRecordDir(usesDir, useId);
    await mkdir(path.join(record, 'run'));
    await writeFile(path.join(record, 'exit'), '0\n');
    await writeFile(path.join(record, 'stdout'), 'ran once\n');
    await mkdir(rig.hostFile(ids.task_id, 'markers'), { recursive: true });
    await writeFile(rig.hostFile(ids.task_id, 'markers/c'), 'x\n');
    await leftStarted(command, useId);

    // when
    const { app, completion, log: events } = await restartAndRedeliver(command);

    // then: what the record shows, once
    expect(completion).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(events.some((e) => e.event_type === 'grant.use_released')).toBe(false);
    expect(events.filter((e) => e.event_type === 'grant.use_claimed')).toHaveLength(2);
    expect(await markerLines(ids.task_id, 'c')).toBe(1);
    await stop(app);
  }, 300_000);

  it('(a′) given a use claimed under this executor id on another host (a duplicated WRIT_EXECUTOR_ID), when this executor starts and the RunAction is redelivered, then nothing is proven: unknown at the claim window, never released, never run here', async () => {
    // given: the same executor id, another host's claim; journaled here too (this host tried the use and lost the claim)
    const ids = newIds('win-a2');
    const command = await markerCommand(ids, 'a2');
    const useId = await leftClaimed(command, EXECUTOR, 'host-elsewhere');
    const seq = await rig.publishRunAction(command, `${useId}-redelivered`);

    // when: a short use window, so the wait for it ends within the test
    await start({ actionTimeoutMs: 2_000 });
    await rig.waitSettled(seq, { timeoutMs: 120_000 });

    // then
    const events = await rig.events(ids.task_id);
    expect(ExecutionCompleted.parse(events.find(completionOf(useId))?.payload)).toMatchObject({ outcome: 'unknown' });
    expect(events.some((e) => e.event_type === 'grant.use_released')).toBe(false);
    expect(await markerLines(ids.task_id, 'a2')).toBe(0);
  }, 300_000);

  it('(e) given a running executor whose claimed use lost its delivery unsettled (nothing of it in flight), when its journal sweep runs, then the use is settled without a restart', async () => {
    // given: running, with a short sweep interval; then a use of its own left claimed, no delivery anywhere
    await start({ cellLifecycle: { ...(rig.config.cellLifecycle ?? DEFAULT_CELL_LIFECYCLE), sweepIntervalMs: 200 } });
    const ids = newIds('win-e');
    const command = await markerCommand(ids, 'e');
    const useId = await leftClaimed(command);

    // then: the sweep proves it never started here, and records so
    const done = await rig.waitForTaskEvent(ids.task_id, 'the use settled by the journal sweep', completionOf(useId), { timeoutMs: 30_000 });
    expect(ExecutionCompleted.parse(done.payload)).toMatchObject({ outcome: 'not_run' });
  }, 300_000);

  it('(d) given a use claimed by another executor (no cell here) and journaled by this one, when it starts again and the RunAction is redelivered while its reconciliation waits, then the delivery is acked only once the use is recorded', async () => {
    // given: the claimer is elsewhere: this host can only wait for the use's deadline (a short one here)
    const ids = newIds('win-d');
    const command = await markerCommand(ids, 'd');
    const useId = await leftClaimed(command, 'executor-elsewhere');
    const seq = await rig.publishRunAction(command, `${useId}-redelivered`);

    // when: started with a short use window; the journal reconciliation waits, the redelivery arrives meanwhile
    const app = await start({ actionTimeoutMs: 10_000 });
    await rig.waitSettled(seq, { timeoutMs: 120_000 });

    // then: the ack came after the use was recorded (unknown at its deadline: it may have run elsewhere)
    const completed = (await rig.events(ids.task_id)).find(completionOf(useId));
    expect(completed, 'execution.completed of the use when its delivery was acked').toBeDefined();
    expect(ExecutionCompleted.parse(completed?.payload)).toMatchObject({ outcome: 'unknown', error: { code: 'EXECUTOR_OUTCOME_UNKNOWN' } });
    await waitFor(async () => ((await new FileUseJournal(rig.cellsRoot, EXECUTOR).list()).some((entry) => entry.useId === useId) ? undefined : true), {
      what: 'the journal entry removed once settled',
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    await stop(app);
  }, 300_000);
});
