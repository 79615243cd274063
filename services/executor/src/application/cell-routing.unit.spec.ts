import { hasErrorCode, WritError, type CloseCell, type ObserveWorkspace, type RunAction, type WorkspaceObserved } from '@writ/contracts';
import { CellPolicy, cellDecider, type CellCommand, type CellState } from '@writ/kernel';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryCellHost, MemoryCellLog, MemoryCheckpointStore } from '../../test/memory-cells.js';
import { MemoryTaskLog } from '../../test/memory-log.js';
import { CellLifecycle, SPAWN_WAIT_MS, type CellView } from './cell-lifecycle.js';
import { CellRouter, hopsOf, routeCell, type CellRoute, type CommandForwarder, type ObserveRelay } from './cell-routing.js';
import { TaskSerializer } from './task-serializer.js';

/**
 * Routing of a task's work to the host holding its cell (issue 5), against in-memory ports: the
 * table of `routeCell` (pure), the router's forwards and relays, and two lifecycles on two hosts
 * sharing one log (the append guard of the event store) reserving one new task's cell at once.
 */

const T0 = Date.parse('2030-01-01T00:00:00Z');
const SEC = 1_000;
const HEARTBEAT_MS = 90 * SEC;
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const meta = (ms: number) => ({ now: iso(ms) });

/** A cell's commands at `ms` after T0: invite, accept, prepare on `host`, activate on `host`. */
const placed = (host: string): CellCommand[] => [
  { type: 'invite-participant', data: { cell_id: 'task-1', invited_by: 'director-1', participant_id: 'agent-1', role: 'executor' }, metadata: meta(0) },
  { type: 'accept-invitation', data: { participant_id: 'agent-1' }, metadata: meta(0) },
  { type: 'prepare-cell', data: { backend: 'docker', prepared_by: `executor-${host}`, host_id: host }, metadata: meta(0) },
];
const activate = (host: string, ms = 0): CellCommand => ({ type: 'activate-cell', data: { spawned_by: `executor-${host}`, host_id: host }, metadata: meta(ms) });

function fold(commands: readonly CellCommand[]): CellState {
  let state = cellDecider.initialState();
  for (const command of commands) for (const event of cellDecider.decide(command, state)) state = cellDecider.evolve(state, event);
  return state;
}

const view = (commands: readonly CellCommand[], preparedAtMs: number | null = 0): Pick<CellView, 'state' | 'preparing'> => ({
  state: fold(commands),
  preparing: preparedAtMs === null ? null : { by: 'executor-x', at: iso(preparedAtMs) },
});
const at = (ms: number) => new Date(T0 + ms);

describe('routeCell: where work on a task goes', () => {
  const cases: { note: string; cell: Pick<CellView, 'state' | 'preparing'>; now: number; work: 'run' | 'close' | 'observe'; want: CellRoute }[] = [
    { note: 'no cell yet: any executor takes it', cell: view([], null), now: 0, work: 'run', want: { kind: 'here', reason: 'no-cell' } },
    { note: 'held here', cell: view([...placed('host-a'), activate('host-a')]), now: 0, work: 'run', want: { kind: 'here', reason: 'held-here' } },
    { note: 'ACTIVE on a host that beats', cell: view([...placed('host-b'), activate('host-b')]), now: 10 * SEC, work: 'run', want: { kind: 'forward', host_id: 'host-b' } },
    { note: 'close-cell of an ACTIVE cell on a host that beats', cell: view([...placed('host-b'), activate('host-b')]), now: 10 * SEC, work: 'close', want: { kind: 'forward', host_id: 'host-b' } },
    {
      note: 'ACTIVE on a host past its heartbeat deadline',
      cell: view([...placed('host-b'), activate('host-b')]),
      now: HEARTBEAT_MS,
      work: 'run',
      want: { kind: 'unavailable', host_id: 'host-b', since: iso(0) },
    },
    { note: 'observe relays to the holder whatever its heartbeats', cell: view([...placed('host-b'), activate('host-b')]), now: HEARTBEAT_MS, work: 'observe', want: { kind: 'forward', host_id: 'host-b' } },
    { note: 'PREPARING on another host, recently', cell: view(placed('host-b'), 0), now: SPAWN_WAIT_MS - 1, work: 'run', want: { kind: 'forward', host_id: 'host-b' } },
    { note: 'PREPARING on another host past the spawn wait: taken over here', cell: view(placed('host-b'), 0), now: SPAWN_WAIT_MS, work: 'run', want: { kind: 'here', reason: 'spawn-overdue' } },
    {
      note: 'DOWNED: the kernel recovery decides, here',
      cell: view([...placed('host-b'), activate('host-b'), { type: 'mark-downed', data: { participant_id: 'agent-1' }, metadata: meta(HEARTBEAT_MS) }]),
      now: HEARTBEAT_MS,
      work: 'run',
      want: { kind: 'here', reason: 'recovery' },
    },
    {
      note: 'CLOSED: nothing runs, a close is done, anywhere',
      cell: view([...placed('host-b'), activate('host-b'), { type: 'close-cell', data: { reason: 'explicit', closed_by: 'director-1' }, metadata: meta(SEC) }]),
      now: SEC,
      work: 'close',
      want: { kind: 'here', reason: 'settled' },
    },
    {
      note: 'CLOSED: an observation reads the graveyard on its host',
      cell: view([...placed('host-b'), activate('host-b'), { type: 'close-cell', data: { reason: 'explicit', closed_by: 'director-1' }, metadata: meta(SEC) }]),
      now: SEC,
      work: 'observe',
      want: { kind: 'forward', host_id: 'host-b' },
    },
    {
      note: 'events naming no host (recorded before hosts were): here, as before',
      cell: view([...placed('host-b').slice(0, 2), { type: 'prepare-cell', data: { backend: 'docker', prepared_by: 'executor-old' }, metadata: meta(0) }, { type: 'activate-cell', data: { spawned_by: 'executor-old' }, metadata: meta(0) }]),
      now: 0,
      work: 'run',
      want: { kind: 'here', reason: 'holder-unknown' },
    },
  ];
  for (const c of cases) {
    it(`given ${c.note}, when ${c.work} reaches host-a, then ${c.want.kind}`, () => {
      expect(routeCell(c.cell, 'host-a', at(c.now), c.work), c.note).toEqual(c.want);
    });
  }
});

describe('hopsOf', () => {
  it('given the hops header, then a small whole number, anything else 0', () => {
    expect([hopsOf(undefined), hopsOf('2'), hopsOf('-1'), hopsOf('x'), hopsOf('9999')]).toEqual([0, 2, 0, 0, 0]);
  });
});

// ---- the router with two lifecycles on two hosts sharing one log ------------------------------

let log: MemoryCellLog;
let tasks: MemoryTaskLog;
let offset: number;

function lifecycle(hostId: string): CellLifecycle {
  return new CellLifecycle(
    { log, host: new MemoryCellHost(), store: new MemoryCheckpointStore(), tasks, serializer: new TaskSerializer(), clock: () => at(offset) },
    { executorId: `executor-${hostId}`, hostId, principalId: 'writ-executor', policy: CellPolicy.parse({}), checkpointIntervalMs: 0 },
  );
}

class RecordingForwarder implements CommandForwarder, ObserveRelay {
  readonly forwards: { work: string; hostId: string; task_id: string; msgId: string; hops: number }[] = [];
  readonly observed: string[] = [];
  reply: WorkspaceObserved | Error = { fingerprints: { 'a.txt': 'absent' }, observed_at: iso(0) };
  async forward(work: 'run' | 'close-cell', hostId: string, payload: RunAction | CloseCell, options: { msgId: string; hops: number }): Promise<void> {
    this.forwards.push({ work, hostId, task_id: payload.task_id, msgId: options.msgId, hops: options.hops });
  }
  async observe(hostId: string, _request: ObserveWorkspace): Promise<WorkspaceObserved> {
    this.observed.push(hostId);
    if (this.reply instanceof Error) throw this.reply;
    return this.reply;
  }
}

function router(cells: CellLifecycle, hostId: string, forwarder: RecordingForwarder): CellRouter {
  return new CellRouter({ cells, forwarder, relay: forwarder, clock: () => at(offset) }, { hostId, maxHops: 4 });
}

const runOf = (taskId: string, proposer = 'agent-1'): RunAction =>
  ({ task_id: taskId, step_id: 'step-1', attempt_id: 'attempt-1', grant_id: 'grant-1', grant_jws: 'x.y.z', action_request: { proposed_by: proposer } }) as unknown as RunAction;

async function codeOf(pending: Promise<unknown>): Promise<string | undefined> {
  try {
    await pending;
    return undefined;
  } catch (error) {
    return hasErrorCode(error) ? error.code : String(error);
  }
}

beforeEach(() => {
  log = new MemoryCellLog();
  tasks = new MemoryTaskLog();
  offset = 0;
});

describe('CellRouter', () => {
  it('given a new task, when its first two actions are placed on host-a and host-b at once, then one append wins: one holder, the other host forwards to it', async () => {
    const forwarder = new RecordingForwarder();
    const [a, b] = [router(lifecycle('host-a'), 'host-a', forwarder), router(lifecycle('host-b'), 'host-b', forwarder)];
    const placements = await Promise.all([a.placeRun(runOf('task-1'), 'use-1', 0), b.placeRun(runOf('task-1'), 'use-2', 0)]);

    const holder = (log.streams.get('task-1') ?? []).find((event) => event.event_type === 'cell.preparing')?.payload['host_id'];
    expect(log.types('task-1')).toEqual(['cell.participant_invited', 'cell.invitation_accepted', 'cell.preparing']);
    const here = placements.filter((p) => p.kind === 'here');
    const forwarded = placements.filter((p) => p.kind === 'forwarded');
    expect(here).toHaveLength(1);
    expect(forwarded).toEqual([{ kind: 'forwarded', host_id: holder }]);
    expect(forwarder.forwards).toEqual([{ work: 'run', hostId: holder, task_id: 'task-1', msgId: expect.stringMatching(new RegExp(`^fwd-use-[12]-${String(holder)}-1$`)), hops: 1 }]);
  });

  it('given a cell held by host-b that stopped beating, when an action reaches host-a, then EXECUTOR_CELL_HOST_UNAVAILABLE and nothing is forwarded', async () => {
    const forwarder = new RecordingForwarder();
    await lifecycle('host-b').prepareForAction('task-1', 'agent-1');
    offset = HEARTBEAT_MS + SEC;
    expect(await codeOf(router(lifecycle('host-a'), 'host-a', forwarder).placeRun(runOf('task-1'), 'use-1', 0))).toBe('EXECUTOR_CELL_HOST_UNAVAILABLE');
    expect(forwarder.forwards).toEqual([]);
  });

  it('given a cell held by host-b that stopped beating, when close-cell reaches host-a, then it is closed here (not forwarded into silence)', async () => {
    const forwarder = new RecordingForwarder();
    await lifecycle('host-b').prepareForAction('task-1', 'agent-1');
    offset = HEARTBEAT_MS + SEC;
    expect(await router(lifecycle('host-a'), 'host-a', forwarder).placeClose({ task_id: 'task-1', reason: 'task.completed' }, 0)).toEqual({ kind: 'here' });
    expect(forwarder.forwards).toEqual([]);
  });

  it('given a command forwarded as often as the bound allows, when its holder moved again, then EXECUTOR_CELL_ROUTE_LOOP', async () => {
    const forwarder = new RecordingForwarder();
    await lifecycle('host-b').prepareForAction('task-1', 'agent-1');
    const a = router(lifecycle('host-a'), 'host-a', forwarder);
    expect(await a.placeClose({ task_id: 'task-1', reason: 'task.completed' }, 3)).toEqual({ kind: 'forwarded', host_id: 'host-b' });
    expect(forwarder.forwards.at(-1)).toMatchObject({ work: 'close-cell', hops: 4, msgId: 'fwd-close-task-1-task.completed-host-b-4' });
    expect(await codeOf(a.placeClose({ task_id: 'task-1', reason: 'task.completed' }, 4))).toBe('EXECUTOR_CELL_ROUTE_LOOP');
  });

  it('given a cell held by host-b, when an observation reaches host-a, then host-b answers it; host-a never answers from its own files', async () => {
    const forwarder = new RecordingForwarder();
    await lifecycle('host-b').prepareForAction('task-1', 'agent-1');
    const local = async (): Promise<WorkspaceObserved> => {
      throw new Error('host-a must not observe its own (empty) workspace');
    };
    const a = router(lifecycle('host-a'), 'host-a', forwarder);
    expect(await a.observe({ task_id: 'task-1', resources: ['a.txt'] }, local)).toEqual(forwarder.reply);
    expect(forwarder.observed).toEqual(['host-b']);

    forwarder.reply = new WritError('BUS_NO_RESPONDERS', 'no responders');
    expect(await codeOf(a.observe({ task_id: 'task-1', resources: ['a.txt'] }, local))).toBe('EXECUTOR_CELL_HOST_UNAVAILABLE');
    forwarder.reply = new WritError('EXECUTOR_OBSERVE_UNSTABLE', 'changing');
    expect(await codeOf(a.observe({ task_id: 'task-1', resources: ['a.txt'] }, local))).toBe('EXECUTOR_OBSERVE_UNSTABLE');
  });

  it('given a task without a cell, when it is observed, then this host answers (nothing is reserved for an observation)', async () => {
    const forwarder = new RecordingForwarder();
    const reply = await router(lifecycle('host-a'), 'host-a', forwarder).observe({ task_id: 'task-2', resources: ['a.txt'] }, async () => ({ fingerprints: { 'a.txt': 'absent' }, observed_at: iso(0) }));
    expect(reply.fingerprints).toEqual({ 'a.txt': 'absent' });
    expect(forwarder.observed).toEqual([]);
    expect(log.types('task-2')).toEqual([]);
  });

  it('given a cell prepared by host-b, when host-b is the one whose spawn won, then host-a refuses to run in its own copy (EXECUTOR_CELL_HELD_ELSEWHERE)', async () => {
    await lifecycle('host-b').reserve('task-1', 'agent-1');
    // host-a was routed here (say the preparer looked dead), but host-b's activation lands first
    const b = lifecycle('host-b');
    await b.prepareForAction('task-1', 'agent-1');
    expect(await codeOf(lifecycle('host-a').prepareForAction('task-1', 'agent-1'))).toBe('EXECUTOR_CELL_HELD_ELSEWHERE');
  });
});
