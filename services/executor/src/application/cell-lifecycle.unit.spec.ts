import { CellPolicy } from '@writ/kernel';
import { sha256Hex } from '@writ/crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryCellHost, MemoryCellLog, MemoryCheckpointStore } from '../../test/memory-cells.js';
import { MemoryTaskLog } from '../../test/memory-log.js';
import { CELL_GID, CELL_SEAT_UID_BASE } from '../outbound/cells/cell-config.js';
import { CellLifecycle } from './cell-lifecycle.js';
import { ExecutorError } from './executor-errors.js';
import { TaskSerializer } from './task-serializer.js';

/**
 * The cell lifecycle's decisions against in-memory ports (log with the event store's
 * append guard, a host that records its calls), with a clock the test moves. The real
 * adapters (NATS, Docker) are exercised by src/cells.int.spec.ts.
 */

const T0 = Date.parse('2030-01-01T00:00:00Z');
const MIN = 60_000;
const CELL = 'task-1';

let log: MemoryCellLog;
let tasks: MemoryTaskLog;
let store: MemoryCheckpointStore;
let offset: number;

function lifecycle(host: MemoryCellHost, options: { substitutes?: boolean; executorId?: string; hostId?: string; sleep?: (ms: number) => Promise<void> } = {}): CellLifecycle {
  return new CellLifecycle(
    { log, host, store, tasks, serializer: new TaskSerializer(), clock: () => new Date(T0 + offset), ...(options.sleep === undefined ? {} : { sleep: options.sleep }) },
    {
      executorId: options.executorId ?? 'executor-a',
      principalId: 'writ-executor',
      policy: CellPolicy.parse({ allow_substitute: options.substitutes === true }),
      checkpointIntervalMs: 0,
      ...(options.hostId === undefined ? {} : { hostId: options.hostId }),
    },
  );
}

/** The task stream says who the task's principal is, as the ingress records it. */
function taskCreatedBy(owner: string): void {
  tasks.push(CELL, {
    event_id: 'evt-task-created',
    schema_version: 1,
    event_type: 'task.created',
    entity_type: 'task',
    entity_id: CELL,
    occurred_at: new Date(T0).toISOString(),
    actor_type: 'service',
    actor_id: 'writ-ingress',
    payload: { task_id: CELL, owner_principal_id: owner },
    causation_id: null,
    correlation_id: CELL,
  });
}

/** The user of the seat at `ordinal` in the cell's participant list (director first): a working seat, so the cell group. */
const seatUid = (ordinal: number) => ({ uid: CELL_SEAT_UID_BASE + ordinal, gid: CELL_GID });

const payloadOf = (type: string) => log.streams.get(CELL)?.find((event) => event.event_type === type)?.payload;

beforeEach(() => {
  log = new MemoryCellLog();
  tasks = new MemoryTaskLog();
  store = new MemoryCheckpointStore();
  offset = 0;
});

describe('cell lifecycle: actions', () => {
  it("given a new task directed by director-1, when agent-1's first action is prepared, then the cell is created, prepared and activated (four events) with agent-1's home", async () => {
    taskCreatedBy('director-1');
    const host = new MemoryCellHost();
    const seat = await lifecycle(host).prepareForAction(CELL, 'agent-1');

    expect(seat).toEqual({ participant_id: 'agent-1', role: 'executor', user: seatUid(1) });
    expect(log.types(CELL)).toEqual(['cell.participant_invited', 'cell.invitation_accepted', 'cell.preparing', 'cell.activated']);
    expect(payloadOf('cell.participant_invited')).toMatchObject({
      participant: { participant_id: 'agent-1', principal_id: 'agent-1', role: 'executor' },
      invited_by: 'director-1',
      created: { director: { participant_id: 'director-1', role: 'director' }, policy: { active_ttl_ms: 4 * 60 * MIN, closed_grace_ms: 30 * MIN } },
    });
    expect(payloadOf('cell.preparing')).toMatchObject({ backend: 'docker', prepared_by: 'executor-a' });
    expect(log.streams.get(CELL)?.every((event) => event.entity_type === 'cell' && event.entity_id === CELL && event.actor_id === 'writ-executor')).toBe(true);
    expect(host.calls).toEqual([`open ${CELL}`, `home ${CELL}/agent-1`]);
    expect(host.homeOwners.get(`${CELL}/agent-1`)).toEqual(seatUid(1));
    expect(host.metadata.get(CELL)).toMatchObject({ cell_id: CELL, status: 'ACTIVE', spawn_seq: 4, director: 'director-1', backend: 'docker' });
    expect(host.spawnLog).toMatchObject([{ event: 'spawned', executor_id: 'executor-a' }]);
  });

  it('given no task.created (the principal itself owns its task), when its first action is prepared, then it directs the cell and works under <principal>-exec', async () => {
    const seat = await lifecycle(new MemoryCellHost()).prepareForAction(CELL, 'agent-1');
    expect(seat).toEqual({ participant_id: 'agent-1-exec', role: 'executor', user: seatUid(1) });
    expect(payloadOf('cell.participant_invited')).toMatchObject({ invited_by: 'agent-1', participant: { participant_id: 'agent-1-exec', principal_id: 'agent-1' } });
  });

  it('given an ACTIVE cell, when the same principal acts again and again, then nothing more is appended (cell events are per cell, not per action)', async () => {
    const cells = lifecycle(new MemoryCellHost());
    await cells.prepareForAction(CELL, 'agent-1');
    for (let i = 0; i < 5; i += 1) await cells.prepareForAction(CELL, 'agent-1');
    expect(log.types(CELL)).toHaveLength(4);
  });

  it('given an ACTIVE cell, when a second principal acts, then it is invited and accepted (two events) and its joining is in the spawn log', async () => {
    taskCreatedBy('director-1');
    const host = new MemoryCellHost();
    const cells = lifecycle(host);
    await cells.prepareForAction(CELL, 'agent-1');
    // a seat of its own: the next ordinal, so another uid than agent-1's
    expect(await cells.prepareForAction(CELL, 'agent-2')).toEqual({ participant_id: 'agent-2', role: 'executor', user: seatUid(2) });
    expect(host.homeOwners.get(`${CELL}/agent-2`)).toEqual(seatUid(2));
    expect(log.types(CELL).slice(4)).toEqual(['cell.participant_invited', 'cell.invitation_accepted']);
    expect(host.spawnLog.at(-1)).toMatchObject({ event: 'joined', participant_id: 'agent-2' });
  });

  it('given another executor is spawning the cell, when a second action arrives here, then this executor waits for its activation and never opens a second container', async () => {
    const hostA = new MemoryCellHost();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const open = hostA.open.bind(hostA);
    hostA.open = async (cellId) => {
      await gate;
      await open(cellId);
    };
    const spawning = lifecycle(hostA).prepareForAction(CELL, 'agent-1');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(log.types(CELL)).toEqual(['cell.participant_invited', 'cell.invitation_accepted', 'cell.preparing']);

    const hostB = new MemoryCellHost();
    const waits: number[] = [];
    const seat = await lifecycle(hostB, {
      executorId: 'executor-b',
      sleep: async (ms) => {
        waits.push(ms);
        release();
        await spawning;
      },
    }).prepareForAction(CELL, 'agent-1');
    expect(seat).toEqual({ participant_id: 'agent-1-exec', role: 'executor', user: seatUid(1) });
    expect(waits.length).toBeGreaterThan(0);
    expect(hostB.calls.filter((call) => call.startsWith('open'))).toEqual([]);
    expect(log.types(CELL).filter((type) => type === 'cell.activated')).toHaveLength(1);
  });

  it('given a cell another executor of this host reserved while routing (then lost the claim), when an action is prepared here, then it is spawned here at once, without waiting', async () => {
    const host = new MemoryCellHost();
    await lifecycle(host, { executorId: 'executor-a', hostId: 'host-1' }).reserve(CELL, 'agent-1');
    expect(log.types(CELL)).toEqual(['cell.participant_invited', 'cell.invitation_accepted', 'cell.preparing']);

    const waits: number[] = [];
    const seat = await lifecycle(host, { executorId: 'executor-b', hostId: 'host-1', sleep: async (ms) => void waits.push(ms) }).prepareForAction(CELL, 'agent-1');

    expect(seat).toMatchObject({ participant_id: 'agent-1-exec', role: 'executor' });
    expect(waits).toEqual([]);
    expect(payloadOf('cell.activated')).toMatchObject({ spawned_by: 'executor-b', host_id: 'host-1' });
  });

  it('given a cell left PREPARING by an executor that died mid-spawn, when an action arrives past the wait, then this executor spawns and activates it', async () => {
    const hostA = new MemoryCellHost();
    hostA.open = () => new Promise<void>(() => undefined);
    void lifecycle(hostA).prepareForAction(CELL, 'agent-1');
    await new Promise((resolve) => setTimeout(resolve, 0));
    offset = 31_000;
    const hostB = new MemoryCellHost();
    await lifecycle(hostB, { executorId: 'executor-b' }).prepareForAction(CELL, 'agent-1');
    expect(hostB.calls[0]).toBe(`open ${CELL}`);
    expect(payloadOf('cell.activated')).toMatchObject({ spawned_by: 'executor-b' });
  });

  it('given a closed cell, when an action is prepared, then EXECUTOR_CELL_CLOSED and nothing is appended', async () => {
    const cells = lifecycle(new MemoryCellHost());
    await cells.prepareForAction(CELL, 'agent-1');
    await cells.close(CELL, 'task.completed');
    const head = log.types(CELL).length;
    await expect(cells.prepareForAction(CELL, 'agent-1')).rejects.toMatchObject({ code: 'EXECUTOR_CELL_CLOSED' });
    expect(log.types(CELL)).toHaveLength(head);
  });
});

describe('cell lifecycle: close, graveyard, resurrect, archive', () => {
  it('given an ACTIVE cell it holds, when close-cell arrives, then a final checkpoint (tarball stored under its hash) closes it, and the container is stopped, not removed', async () => {
    const host = new MemoryCellHost();
    const cells = lifecycle(host);
    await cells.prepareForAction(CELL, 'agent-1');
    expect(await cells.close(CELL, 'task.completed')).toBe('closed');

    expect(log.types(CELL).slice(4)).toEqual(['cell.checkpoint_started', 'cell.checkpoint_completed', 'cell.closed']);
    const sha256 = sha256Hex(host.tarball);
    expect(payloadOf('cell.checkpoint_completed')).toMatchObject({ checkpoint_id: 'ckpt-1', sha256, artifact_ref: `nats-obj://TEST/sha256-${sha256}`, final: true });
    expect(payloadOf('cell.closed')).toMatchObject({ reason: 'explicit', closed_by: 'agent-1', grace_ends_at: new Date(T0 + 30 * MIN).toISOString().replace('.000Z', 'Z') });
    expect(store.objects.get(sha256)).toEqual(host.tarball);
    expect(host.records).toMatchObject([{ checkpoint_id: 'ckpt-1', sha256, final: true }]);
    expect(host.calls.slice(-2)).toEqual([`capture ${CELL}`, `stop ${CELL}`]);
    // a second close finds it closed
    expect(await cells.close(CELL, 'task.completed')).toBe('already');
    expect(log.types(CELL)).toHaveLength(7);
  });

  it('given the final checkpoint cannot be taken (tar fails in the cell), when close-cell arrives, then the cell closes as failed, naming only the code, and still goes to the graveyard', async () => {
    const host = new MemoryCellHost();
    host.captureCheckpoint = async () => Promise.reject(new ExecutorError('EXECUTOR_CHECKPOINT_FAILED', 'tar: secret-named-file: Permission denied'));
    const cells = lifecycle(host);
    await cells.prepareForAction(CELL, 'agent-1');
    expect(await cells.close(CELL, 'task.failed')).toBe('closed');
    expect(log.types(CELL).slice(4)).toEqual(['cell.closed']);
    expect(payloadOf('cell.closed')).toEqual(expect.objectContaining({ reason: 'failed', note: 'task ended: task.failed; final checkpoint not taken: EXECUTOR_CHECKPOINT_FAILED' }));
    expect(host.calls.at(-1)).toBe(`stop ${CELL}`);
  });

  it('given a closed cell in its graveyard, when a director resurrects it within the grace, then cell.resurrected names the director as its actor and the graveyard is started again', async () => {
    const host = new MemoryCellHost();
    const cells = lifecycle(host);
    await cells.prepareForAction(CELL, 'agent-1');
    await cells.close(CELL, 'task.completed');
    offset = 10 * MIN;
    const result = await cells.resurrect(CELL, { id: 'alice', type: 'user' }, 'crs-1');

    expect(result).toMatchObject({ restored_from: 'graveyard', checkpoint_id: null });
    const resurrected = log.streams.get(CELL)?.at(-1);
    expect(resurrected).toMatchObject({ event_type: 'cell.resurrected', actor_type: 'user', actor_id: 'alice', causation_id: 'crs-1', event_id: result.event_id });
    expect(host.calls.at(-2)).toBe(`open ${CELL}`);
    expect(host.decisions.at(-1)).toMatchObject({ decision: 'resurrect', by: 'alice' });
    // and it takes actions again, without new events
    await cells.prepareForAction(CELL, 'agent-1');
    expect(log.types(CELL).at(-1)).toBe('cell.resurrected');
  });

  it('given a closed cell this host does not hold, when it is resurrected, then its last checkpoint is restored (homes included) into a new cell', async () => {
    const first = new MemoryCellHost();
    await lifecycle(first).prepareForAction(CELL, 'agent-1');
    await lifecycle(first).close(CELL, 'task.completed');
    const other = new MemoryCellHost();
    const result = await lifecycle(other, { executorId: 'executor-b' }).resurrect(CELL, { id: 'alice', type: 'user' }, 'crs-1');
    expect(result).toMatchObject({ restored_from: 'checkpoint', checkpoint_id: 'ckpt-1' });
    expect(other.restores).toEqual([{ cellId: CELL, sha256: sha256Hex(first.tarball), options: { homes: true, owners: { 'agent-1-exec': seatUid(1) } } }]);
  });

  it('given a closed cell past its grace, when a director resurrects it, then CELL_GRACE_EXPIRED and nothing happens on the host', async () => {
    const host = new MemoryCellHost();
    const cells = lifecycle(host);
    await cells.prepareForAction(CELL, 'agent-1');
    await cells.close(CELL, 'task.completed');
    const calls = host.calls.length;
    offset = 31 * MIN;
    await expect(cells.resurrect(CELL, { id: 'alice', type: 'user' }, 'crs-1')).rejects.toMatchObject({ code: 'CELL_GRACE_EXPIRED' });
    expect(host.calls).toHaveLength(calls);
  });

  it('given a closed cell past its grace, when the holding host sweeps, then its files are scrubbed first and cell.archived follows, listing the final checkpoint; a host not holding it archives nothing', async () => {
    const host = new MemoryCellHost();
    const cells = lifecycle(host);
    await cells.prepareForAction(CELL, 'agent-1');
    await cells.close(CELL, 'task.completed');
    offset = 31 * MIN;

    await lifecycle(new MemoryCellHost(), { executorId: 'executor-b' }).sweep();
    expect(log.types(CELL).at(-1)).toBe('cell.closed');

    const report = await cells.sweep();
    expect(report.transitions).toEqual([{ cell_id: CELL, kind: 'grace_over' }]);
    expect(log.types(CELL).at(-1)).toBe('cell.archived');
    expect(payloadOf('cell.archived')).toMatchObject({ checkpoint_ids: ['ckpt-1'], filesystem_scrubbed: true, archived_by: 'writ-executor' });
    expect(host.calls.slice(-3)).toEqual([`mark-scrubbing ${CELL}`, `scrub ${CELL}`, `clear-scrubbing ${CELL}`]);
    // the archive manifest is stored, and cell.archived points at it
    const ref = String(payloadOf('cell.archived')?.['archive_ref']);
    const manifest = JSON.parse(new TextDecoder().decode(store.objects.get(ref.slice(ref.lastIndexOf('sha256-') + 7)) ?? new Uint8Array())) as Record<string, unknown>;
    expect(manifest).toMatchObject({ cell_id: CELL, checkpoints: [{ checkpoint_id: 'ckpt-1', final: true }] });
  });
});

describe('cell lifecycle: archive retention and purge', () => {
  const DAY = 24 * 60 * MIN;

  /** A cell of `cellId` closed with a final checkpoint (`tarball`), then archived by its host past the grace. */
  async function archivedCell(host: MemoryCellHost, tarball: string, cellId = CELL): Promise<{ tarballSha: string; manifestSha: string }> {
    host.tarball = new TextEncoder().encode(tarball);
    const cells = lifecycle(host);
    await cells.prepareForAction(cellId, 'agent-1');
    await cells.close(cellId, 'task.completed');
    offset = 31 * MIN;
    await cells.sweep();
    const archived = log.streams.get(cellId)?.find((event) => event.event_type === 'cell.archived')?.payload;
    const ref = String(archived?.['archive_ref']);
    return { tarballSha: sha256Hex(host.tarball), manifestSha: ref.slice(ref.lastIndexOf('sha256-') + 7) };
  }

  it('given an archived cell past its archive retention, when any executor sweeps, then its checkpoint and manifest are deleted from the store, cell.archive_purged names them once, and a second sweep does nothing', async () => {
    const { tarballSha, manifestSha } = await archivedCell(new MemoryCellHost(), 'tarball-purge');
    expect(store.owners.get(tarballSha)).toBe(`cell:${CELL}`);
    offset = 31 * MIN + 30 * DAY;

    const report = await lifecycle(new MemoryCellHost(), { executorId: 'executor-b' }).sweep();
    expect(report.transitions).toEqual([{ cell_id: CELL, kind: 'retention_over' }]);
    expect(store.objects.has(tarballSha)).toBe(false);
    expect(store.objects.has(manifestSha)).toBe(false);
    expect(log.types(CELL).at(-1)).toBe('cell.archive_purged');
    expect(payloadOf('cell.archive_purged')).toEqual({ purged_by: 'writ-executor', deleted_sha256: [tarballSha, manifestSha], kept_sha256: [], at: new Date(T0 + offset).toISOString() });

    const head = log.types(CELL).length;
    const deletes = store.deletes.length;
    const again = await lifecycle(new MemoryCellHost(), { executorId: 'executor-c' }).sweep();
    expect(again.transitions).toEqual([]);
    expect(log.types(CELL)).toHaveLength(head);
    expect(store.deletes).toHaveLength(deletes);
  });

  it('given an archived cell within its retention, when swept, then nothing is deleted and nothing appended; the sweep does not read it again before the retention ends', async () => {
    const host = new MemoryCellHost();
    const { tarballSha } = await archivedCell(host, 'tarball-kept');
    const head = log.types(CELL).length;
    offset = 31 * MIN + 30 * DAY - 1_000;
    const cells = lifecycle(host);
    expect((await cells.sweep()).transitions).toEqual([]);
    expect(store.objects.has(tarballSha)).toBe(true);
    expect(store.deletes).toEqual([]);
    expect(log.types(CELL)).toHaveLength(head);
    // parked until the retention ends: the next pass skips it
    expect((await cells.sweep()).cells).toBe(0);
    offset = 31 * MIN + 30 * DAY;
    expect((await cells.sweep()).transitions).toEqual([{ cell_id: CELL, kind: 'retention_over' }]);
  });

  it('given checkpoint content another party stored first, or another live cell also checkpointed, when the archive is purged, then that object is kept (listed as kept) and only the cell\'s own is deleted', async () => {
    // Another party (a task artifact) stored these bytes before the cell did: no owner note of this cell.
    await store.put(new TextEncoder().encode('tarball-shared'));
    const { tarballSha, manifestSha } = await archivedCell(new MemoryCellHost(), 'tarball-shared');
    expect(store.owners.get(tarballSha)).toBeUndefined();
    offset = 31 * MIN + 30 * DAY;
    await lifecycle(new MemoryCellHost(), { executorId: 'executor-b' }).sweep();
    expect(payloadOf('cell.archive_purged')).toMatchObject({ deleted_sha256: [manifestSha], kept_sha256: [tarballSha] });
    expect(store.objects.has(tarballSha)).toBe(true);
    expect(store.objects.has(manifestSha)).toBe(false);
  });

  it('given two cells whose checkpoints hold the same bytes, when the first one is purged while the other still lists them, then the object stays', async () => {
    const { tarballSha } = await archivedCell(new MemoryCellHost(), 'tarball-twice', 'task-1');
    offset = 0;
    const other = new MemoryCellHost();
    other.tarball = new TextEncoder().encode('tarball-twice');
    const cells = lifecycle(other);
    await cells.prepareForAction('task-2', 'agent-1');
    await cells.close('task-2', 'task.completed');
    expect((log.streams.get('task-2') ?? []).find((event) => event.event_type === 'cell.checkpoint_completed')?.payload).toMatchObject({ sha256: tarballSha });
    offset = 31 * MIN + 30 * DAY;
    await lifecycle(new MemoryCellHost(), { executorId: 'executor-b' }).sweep();
    expect(log.streams.get('task-1')?.at(-1)).toMatchObject({ event_type: 'cell.archive_purged', payload: { kept_sha256: [tarballSha] } });
    expect(store.objects.has(tarballSha)).toBe(true);
  });
});

describe('cell lifecycle: heartbeats, DOWNED, substitutes', () => {
  it('given a cell its host holds, when the host sweeps, then a heartbeat is recorded only once half the timeout has passed', async () => {
    const host = new MemoryCellHost();
    const cells = lifecycle(host);
    await cells.prepareForAction(CELL, 'agent-1');
    offset = 10_000;
    expect((await cells.sweep()).heartbeats).toBe(0);
    offset = 50_000;
    expect((await cells.sweep()).heartbeats).toBe(1);
    expect(payloadOf('cell.heartbeat_recorded')).toMatchObject({ participant_id: 'agent-1-exec', gap_ms: 50_000 });
  });

  it('given a host that stopped beating, when two other executors sweep at once past the deadline, then the cell goes DOWNED exactly once (first writer wins)', async () => {
    await lifecycle(new MemoryCellHost()).prepareForAction(CELL, 'agent-1');
    offset = 5 * MIN;
    const [b, c] = [lifecycle(new MemoryCellHost(), { executorId: 'executor-b' }), lifecycle(new MemoryCellHost(), { executorId: 'executor-c' })];
    const reports = await Promise.all([b.sweep(), c.sweep()]);
    expect(log.types(CELL).filter((type) => type === 'cell.downed')).toHaveLength(1);
    expect(reports.flatMap((report) => report.transitions)).toEqual([{ cell_id: CELL, kind: 'heartbeat_missed' }]);
    expect(payloadOf('cell.downed')).toMatchObject({ participant_id: 'agent-1-exec' });
  });

  it('given a DOWNED cell, when its own principal acts again, then it is revived (one event) and the action runs', async () => {
    const cells = lifecycle(new MemoryCellHost());
    await cells.prepareForAction(CELL, 'agent-1');
    offset = 5 * MIN;
    await lifecycle(new MemoryCellHost(), { executorId: 'executor-b' }).sweep();
    expect(await cells.prepareForAction(CELL, 'agent-1')).toEqual({ participant_id: 'agent-1-exec', role: 'executor', user: seatUid(1) });
    expect(log.types(CELL).slice(-2)).toEqual(['cell.downed', 'cell.revived']);
  });

  it('given a DOWNED cell with a checkpoint and substitutes enabled, when another principal acts, then it takes over as a substitute: the checkpoint restored without homes, the predecessor home removed', async () => {
    taskCreatedBy('director-1');
    const host = new MemoryCellHost();
    const cells = lifecycle(host, { substitutes: true });
    await cells.prepareForAction(CELL, 'agent-1');
    await cells.checkpoint(CELL);
    offset = 5 * MIN;
    await lifecycle(new MemoryCellHost(), { executorId: 'executor-b', substitutes: true }).sweep();

    // a new seat, so a new uid: nothing of agent-1's is ever its
    expect(await cells.prepareForAction(CELL, 'agent-2')).toEqual({ participant_id: 'agent-2', role: 'substitute', user: seatUid(2) });
    expect(host.homeOwners.get(`${CELL}/agent-2`)).toEqual(seatUid(2));
    expect(log.types(CELL).slice(-4)).toEqual(['cell.downed', 'cell.substitute_invited', 'cell.invitation_accepted', 'cell.revived']);
    expect(payloadOf('cell.substitute_invited')).toMatchObject({ replaces: 'agent-1', inherits_checkpoint_id: 'ckpt-1', inherits_home: false, invited_by: 'director-1' });
    expect(payloadOf('cell.revived')).toMatchObject({ revived_by: 'agent-2', replaced: 'agent-1' });
    expect(host.calls).toContain(`remove-home ${CELL}/agent-1`);
    expect(host.restores).toEqual([{ cellId: CELL, sha256: sha256Hex(host.tarball), options: { homes: false, owners: { 'agent-1': seatUid(1), 'agent-2': seatUid(2) } } }]);
    expect(host.calls.indexOf(`remove-home ${CELL}/agent-1`)).toBeLessThan(host.calls.indexOf(`restore ${CELL}`));
  });

  it('given a DOWNED cell and substitutes off (the seed default), when another principal acts, then EXECUTOR_CELL_NOT_ACTIVE and nothing is appended', async () => {
    const cells = lifecycle(new MemoryCellHost());
    await cells.prepareForAction(CELL, 'agent-1');
    offset = 5 * MIN;
    await lifecycle(new MemoryCellHost(), { executorId: 'executor-b' }).sweep();
    const head = log.types(CELL).length;
    await expect(cells.prepareForAction(CELL, 'agent-2')).rejects.toMatchObject({ code: 'EXECUTOR_CELL_NOT_ACTIVE' });
    expect(log.types(CELL)).toHaveLength(head);
  });

  it('given a copy of the cell that another host has since resurrected, when the old host sweeps, then it stops its copy and records no heartbeat', async () => {
    const old = new MemoryCellHost();
    const cells = lifecycle(old);
    await cells.prepareForAction(CELL, 'agent-1');
    await cells.close(CELL, 'task.completed');
    await lifecycle(new MemoryCellHost(), { executorId: 'executor-b' }).resurrect(CELL, { id: 'alice', type: 'user' }, 'crs-1');
    offset = 50_000;
    const head = log.types(CELL).length;
    expect((await cells.sweep()).heartbeats).toBe(0);
    expect(log.types(CELL)).toHaveLength(head);
    expect(old.calls.at(-1)).toBe(`stop ${CELL}`);
  });
});
