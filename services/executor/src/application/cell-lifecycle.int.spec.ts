import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Objm } from '@nats-io/obj';
import { ExecutionCompleted, type ActionRequest, type EventDraft, type ResurrectCellReply } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { cellDecider, type CellCommand, type CellRecord } from '@writ/kernel';
import { SIGNED_REQUESTS, signRequest } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutorApp } from '../bootstrap.js';
import { ExecutorRig, expectRefused, newIds, request, runAction, type Ids, type User } from '../../test/executor-rig.js';
import { CELL_GID, CELL_SEAT_UID_BASE } from '../outbound/cells/cell-config.js';
import { OWNER_KEY } from '../outbound/checkpoint-store.js';
import { seatUser } from './cell-seats.js';

/**
 * The Lazarus cell lifecycle of a task's cell through the whole executor, against the
 * real NATS and Docker Engine (seed 000 sections 3, 4, 6, 7; issue 5): the lifecycle
 * events of a task's cell in order on `<prefix>.cell.<task_id>`, the layout in the cell,
 * role write paths, the final checkpoint (its tarball is the artifact its event names),
 * the graveyard and a director's resurrection, resumption on another host from the
 * checkpoint, scrubbing after the grace, DOWNED when heartbeats stop, and a substitute
 * that inherits the checkpoint but not the predecessor's home.
 *
 * Executor A hosts cells under its own cells root; executor B (another cells root: another
 * host) joins only when A is not taking RunActions, or is driven directly. The sweep timers
 * are off: the tests sweep by hand with clocks they move, and wait on events, never on sleeps.
 */

const rig = new ExecutorRig();
const MIN = 60_000;
const DAY = 24 * 60 * MIN;

let rootA: string;
let rootB: string;
let a: ExecutorApp;
let b: ExecutorApp | undefined;
/** Executor A's clock runs this far ahead of the wall clock (moved by the grace test). */
let offsetA = 0;

let director: User;
let agentUser: User;

beforeAll(async () => {
  await rig.open('executor-cells', { cellsRoots: ['writ-cells-a-', 'writ-cells-b-'], env: { WRIT_CELL_SWEEP_INTERVAL_MS: '0', WRIT_CELL_ALLOW_SUBSTITUTE: 'true', WRIT_CELL_POOL_SIZE: '1' } });
  [rootA, rootB] = rig.cellsRoots as [string, string];
  a = await rig.startExecutor({ executorId: 'cells-a' }, { clock: () => new Date(Date.now() + offsetA) });
  await rig.openLog({ kid: 'approval-cells', displayName: 'approval (cells test)' });
  director = await rig.registerUser(['director'], 'user', uniqueName('director'));
  agentUser = await rig.registerUser(['director'], 'agent', uniqueName('agent-director'));
}, 300_000);

afterAll(() => rig.close(), 60_000);

// ---- fixtures -------------------------------------------------------------------------------

/** A task directed by the human director: its `task.created` as the ingress records it. */
async function newTask(label: string): Promise<Ids> {
  const ids = newIds(label);
  const at = new Date().toISOString();
  await rig.store.append(
    ids.task_id,
    [
      {
        event_id: uniqueName('evt'),
        schema_version: 1,
        event_type: 'task.created',
        entity_type: 'task',
        entity_id: ids.task_id,
        occurred_at: at,
        actor_type: 'service',
        actor_id: 'writ-ingress',
        payload: { task_id: ids.task_id, owner_principal_id: director.id },
        causation_id: null,
        correlation_id: ids.task_id,
      },
    ],
    0,
  );
  return ids;
}

const cellTypes = async (cellId: string): Promise<string[]> => (await rig.cellEvents(cellId)).map((event) => event.event_type);

/**
 * One action of `proposer` in the task (a fresh attempt and grant covering the whole cell
 * home), published and waited for; `at` shifts the grant's validity to an executor's clock.
 */
async function act(ids: Ids, proposer: string, overrides: Partial<ActionRequest>, at = new Date()): Promise<ExecutionCompleted> {
  const attempt = { ...ids, step_id: uniqueName('step'), attempt_id: uniqueName('attempt') };
  const grant = await rig.mint({ ids: attempt, actionClass: overrides.action_class ?? 'execute_command', issuedAt: at, expiresAt: new Date(at.getTime() + 5 * MIN) });
  await rig.publishRunAction(runAction(attempt, grant, request(attempt, { proposed_by: proposer, proposed_at: at.toISOString(), ...overrides })));
  const completed = await rig.waitForTaskEvent(ids.task_id, `execution.completed of ${attempt.attempt_id}`, (event) => event.event_type === 'execution.completed' && event.attempt_id === attempt.attempt_id);
  return ExecutionCompleted.parse(completed.payload);
}

const sh = (script: string): Partial<ActionRequest> => ({ action_class: 'execute_command', params: { argv: ['sh', '-c', script] }, target_resources: ['.'] });
const write = (file: string, content: string): Partial<ActionRequest> => ({ action_class: 'write_local', params: { path: file, content }, target_resources: [file] });

const cellHome = (root: string, cellId: string) => path.join(root, cellId, 'workspace');

/** The task's container as Docker lists it (by name: a claimed pooled cell keeps an empty task label). */
async function containerState(cellId: string): Promise<string[]> {
  return (await rig.docker.listContainers({ all: true, filters: { name: [`^/writ-cell-${cellId}$`] } })).map((container) => container.State);
}

/** Publishes close-cell and waits until the executor has acked it (the cell closed and its container stopped). */
async function closeCell(cellId: string): Promise<void> {
  const { seq } = await rig.client.publish(rig.config.subjects.closeCell, { task_id: cellId, reason: 'task.completed' }, { msgId: uniqueName('close') });
  await rig.waitSettled(seq, { durable: `${rig.config.durable}-close-cell`, what: `close-cell of ${cellId} to be acked` });
  expect(await cellTypes(cellId)).toContain('cell.closed');
}

async function resurrectionJws(user: User, cellId: string): Promise<string> {
  return (await signRequest(SIGNED_REQUESTS.cellResurrection, { cell_id: cellId, note: 'the operator needs it back' }, { principalId: user.id, key: user.key, now: new Date() })).jws;
}

const resurrect = (cellId: string, jws: string): Promise<ResurrectCellReply> => rig.client.request(rig.config.subjects.resurrectCell, { cell_id: cellId, resurrection_jws: jws });

/** Member names of a tarball, as the host's tar lists them. */
function tarMembers(bytes: Uint8Array): string[] {
  return execFileSync('tar', ['-tf', '-'], { input: bytes, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((name) => name.replace(/^\.\//, ''));
}

/** Mount points under `dir` (a scrubbed cell leaves none). */
async function mountsUnder(dir: string): Promise<string[]> {
  return (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}

/** The text of an artifact the log names by hash. */
async function text(sha256: string): Promise<string> {
  return Buffer.from((await rig.objectBytes(sha256)) ?? []).toString();
}

/** Seats a principal in the cell as its director would (the kernel's decider, appended at the stream's head): the executor itself only seats workers. */
async function seatAs(cellId: string, participantId: string, role: 'observer'): Promise<CellRecord> {
  const log = await rig.cellEvents(cellId);
  let state = log.reduce((s, event) => cellDecider.evolve(s, { type: event.event_type, data: event.payload }), cellDecider.initialState());
  const now = new Date().toISOString();
  const drafts: EventDraft[] = [];
  for (const command of [
    { type: 'invite-participant', data: { cell_id: cellId, invited_by: director.id, participant_id: participantId, role }, metadata: { now } },
    { type: 'accept-invitation', data: { participant_id: participantId }, metadata: { now } },
  ] as CellCommand[]) {
    for (const event of cellDecider.decide(command, state)) {
      state = cellDecider.evolve(state, event);
      drafts.push({ event_id: uniqueName('cev'), schema_version: 1, event_type: event.type, entity_type: 'cell', entity_id: cellId, occurred_at: now, actor_type: 'user', actor_id: director.id, payload: event.data, causation_id: null, correlation_id: cellId });
    }
  }
  await rig.store.appendToEntity('cell', cellId, drafts, log.length);
  return state as CellRecord;
}

// ---- tests ----------------------------------------------------------------------------------

describe('a task cell as a Lazarus cell', () => {
  let ids: Ids;

  it("given a new task directed by a director, when an agent's first action runs, then its cell is created with a director seat, prepared and activated, in order, on the cell's own stream", async () => {
    ids = await newTask('cells');
    const completed = await act(ids, 'agent-1', sh('echo hello > out.txt'));
    expect(completed).toMatchObject({ outcome: 'completed', exit_code: 0, changed_files: [{ path: 'out.txt', change: 'added' }] });

    const log = await rig.cellEvents(ids.task_id);
    expect(log.map((event) => event.event_type)).toEqual(['cell.participant_invited', 'cell.invitation_accepted', 'cell.preparing', 'cell.activated']);
    expect(log.every((event) => event.entity_type === 'cell' && event.entity_id === ids.task_id && event.actor_id === 'writ-executor')).toBe(true);
    expect(log[0]?.payload).toMatchObject({
      participant: { participant_id: 'agent-1', principal_id: 'agent-1', role: 'executor' },
      created: { director: { participant_id: director.id, role: 'director' }, policy: { invitation_ttl_ms: 15 * MIN, active_ttl_ms: 240 * MIN, active_ttl_max_ms: 1440 * MIN, closed_grace_ms: 30 * MIN } },
    });
    expect(log[2]?.payload).toMatchObject({ backend: 'docker', prepared_by: 'cells-a' });
    // nothing of the cell went to the task stream
    expect((await rig.events(ids.task_id)).some((event) => event.event_type.startsWith('cell.'))).toBe(false);
  });

  it('given the cell, then its home has the Lazarus layout, the harness parts are not the cell user’s to move, and a second action appends no cell event', async () => {
    const home = cellHome(rootA, ids.task_id);
    for (const dir of ['.lazarus', '.lazarus/checkpoints', 'shared', 'shared/artifacts', 'home', 'home/agent-1']) expect((await lstat(path.join(home, dir))).isDirectory()).toBe(true);
    for (const file of ['.lazarus/cell.json', '.lazarus/spawn.log', '.lazarus/decisions.jsonl', 'shared/scratchpad.md', 'out.txt']) expect((await lstat(path.join(home, file))).isFile()).toBe(true);
    const metadata = JSON.parse(await readFile(path.join(home, '.lazarus/cell.json'), 'utf8')) as Record<string, unknown>;
    expect(metadata).toMatchObject({ cell_id: ids.task_id, status: 'ACTIVE', backend: 'docker', director: director.id, spawn_seq: 4, policy: { closed_grace_ms: 30 * MIN } });
    expect((await readFile(path.join(home, '.lazarus/spawn.log'), 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { event: string }).event)).toEqual(['spawned']);
    const agentHome = await lstat(path.join(home, 'home/agent-1'));
    // agent-1's own uid (its seat is the cell's second, after the director's), nobody else's
    expect({ uid: agentHome.uid, gid: agentHome.gid, mode: agentHome.mode & 0o777 }).toEqual({ uid: CELL_SEAT_UID_BASE + 1, gid: CELL_GID, mode: 0o700 });

    // from inside the cell: the harness's .lazarus and the homes directory cannot be moved, written or replaced
    const inside = await act(ids, 'agent-1', sh('mv .lazarus x 2>/dev/null && echo MOVED; echo x > .lazarus/cell.json 2>/dev/null && echo WROTE; mkdir home/intruder 2>/dev/null && echo HOMED; rmdir shared 2>/dev/null && echo GONE; echo fine'));
    expect(Buffer.from((await rig.objectBytes(inside.stdout_sha256)) ?? []).toString()).toBe('fine\n');
    expect(await cellTypes(ids.task_id)).toHaveLength(4);
  });

  it("given two agents in the cell, when one writes or reads the other's home, then EXECUTOR_CELL_WRITE_REFUSED / READ_REFUSED before anything runs; each writes its own home and the shared area", async () => {
    const own = await act(ids, 'agent-2', write('home/agent-2/memory.md', 'mine\n'));
    expect(own).toMatchObject({ outcome: 'completed', exit_code: 0, changed_files: [{ path: 'home/agent-2/memory.md', change: 'added' }] });
    expect((await cellTypes(ids.task_id)).slice(4)).toEqual(['cell.participant_invited', 'cell.invitation_accepted']);
    expect(await act(ids, 'agent-1', write('shared/scratchpad.md', 'note from agent-1\n'))).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(await act(ids, 'agent-1', write('home/agent-1/memory.md', 'agent-1 memory\n'))).toMatchObject({ outcome: 'completed', exit_code: 0 });

    const overwrite = await act(ids, 'agent-1', write('home/agent-2/memory.md', 'overwritten\n'));
    expect(overwrite).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_CELL_WRITE_REFUSED' }, artifacts: [], changed_files: [] });
    const peek = await act(ids, 'agent-1', { action_class: 'read_local', params: { path: 'home/agent-2/memory.md' }, target_resources: ['home/agent-2/memory.md'] });
    expect(peek).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_CELL_READ_REFUSED' }, artifacts: [] });
    const harness = await act(ids, 'agent-1', write('.lazarus/cell.json', '{}'));
    expect(harness).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_CELL_WRITE_REFUSED' } });
    expect(await readFile(path.join(cellHome(rootA, ids.task_id), 'home/agent-2/memory.md'), 'utf8')).toBe('mine\n');
  });

  it('given the task ended, when close-cell arrives, then a final checkpoint closes the cell: its tarball is the artifact the event names (same SHA-256), and the container waits stopped in the graveyard with the workspace', async () => {
    await closeCell(ids.task_id);
    expect((await cellTypes(ids.task_id)).slice(-3)).toEqual(['cell.checkpoint_started', 'cell.checkpoint_completed', 'cell.closed']);
    const completed = (await rig.cellEvents(ids.task_id)).find((event) => event.event_type === 'cell.checkpoint_completed')?.payload as { sha256: string; artifact_ref: string; final: boolean };
    expect(completed.final).toBe(true);
    expect(completed.artifact_ref).toBe(`nats-obj://${rig.config.artifacts.bucket}/sha256-${completed.sha256}`);
    const tarball = (await rig.objectBytes(completed.sha256)) ?? new Uint8Array();
    expect(sha256Hex(tarball)).toBe(completed.sha256);
    const members = tarMembers(tarball);
    expect(members).toEqual(expect.arrayContaining(['out.txt', 'shared/scratchpad.md', 'home/agent-1/memory.md', 'home/agent-2/memory.md']));
    expect(members.some((name) => name.startsWith('.lazarus'))).toBe(false);

    expect(await containerState(ids.task_id)).toEqual(['exited']);
    const home = cellHome(rootA, ids.task_id);
    expect(await readFile(path.join(home, 'out.txt'), 'utf8')).toBe('hello\n');
    const record = JSON.parse(await readFile(path.join(home, '.lazarus/checkpoints/ckpt-1.json'), 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({ checkpoint_id: 'ckpt-1', sha256: completed.sha256, final: true });
    // a closed cell runs nothing
    expect(await act(ids, 'agent-1', sh('echo late > late.txt'))).toMatchObject({ outcome: 'errored', error: { code: 'EXECUTOR_CELL_CLOSED' } });
    expect(existsSync(path.join(home, 'late.txt'))).toBe(false);
  });

  it('given the cell in its graveyard, when an agent or a mismatched request asks, then it is refused; when a director resurrects it within its grace, then it comes back as it was and runs actions again', async () => {
    await expectRefused('EXECUTOR_CELL_NOT_ALLOWED', resurrect(ids.task_id, await resurrectionJws(agentUser, ids.task_id)));
    await expectRefused('EXECUTOR_CELL_MISMATCH', resurrect(ids.task_id, await resurrectionJws(director, 'another-cell')));
    expect((await cellTypes(ids.task_id)).at(-1)).toBe('cell.closed');

    const reply = await resurrect(ids.task_id, await resurrectionJws(director, ids.task_id));
    expect(reply).toMatchObject({ cell_id: ids.task_id, status: 'resurrected', restored_from: 'graveyard', resurrected_by: director.id });
    const resurrected = (await rig.cellEvents(ids.task_id)).at(-1);
    expect(resurrected).toMatchObject({ event_type: 'cell.resurrected', event_id: reply.event_id, actor_type: 'user', actor_id: director.id, payload: { resurrected_by: director.id } });
    expect(await containerState(ids.task_id)).toEqual(['running']);

    const read = await act(ids, 'agent-1', { action_class: 'read_local', params: { path: 'out.txt' }, target_resources: ['out.txt'] });
    expect(Buffer.from((await rig.objectBytes(read.stdout_sha256)) ?? []).toString()).toBe('hello\n');
    const decisions = (await readFile(path.join(cellHome(rootA, ids.task_id), '.lazarus/decisions.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { decision: string });
    expect(decisions.map((entry) => entry.decision)).toEqual(['checkpoint', 'close', 'resurrect']);
  });
});

describe('per-seat users: every action of a seat runs as its own uid', () => {
  let ids: Ids;
  let uidA: number;
  let uidB: number;

  it("given seats A and B in one cell, when each acts, then each runs as its own uid in the cell group, and each home belongs to its seat alone (0700)", async () => {
    ids = await newTask('seats');
    const first = await act(ids, 'agent-b', sh('id -u; id -g; echo secret-of-b > home/agent-b/secret'));
    expect(first).toMatchObject({ outcome: 'completed', exit_code: 0 });
    const second = await act(ids, 'agent-a', sh('id -u; id -g'));
    [uidB, uidA] = [Number((await text(first.stdout_sha256)).split('\n')[0]), Number((await text(second.stdout_sha256)).split('\n')[0])];
    expect((await text(first.stdout_sha256)).split('\n')[1]).toBe(String(CELL_GID));
    expect(uidA).not.toBe(uidB);
    expect([uidA, uidB].every((uid) => uid >= CELL_SEAT_UID_BASE)).toBe(true);
    const home = cellHome(rootA, ids.task_id);
    for (const [seat, uid] of [['agent-a', uidA], ['agent-b', uidB]] as const) {
      const stat = await lstat(path.join(home, 'home', seat));
      expect({ uid: stat.uid, mode: stat.mode & 0o777 }).toEqual({ uid, mode: 0o700 });
    }
  });

  it.each([
    ['writes into B\'s home', 'echo x > home/agent-b/f'],
    ['reads B\'s secret', 'cat home/agent-b/secret'],
    ['lists B\'s home', 'ls home/agent-b'],
    ['takes B\'s home over (chmod)', 'chmod 0777 home/agent-b'],
    ['moves B\'s home away', 'mv home/agent-b home/stolen'],
  ])('given seats A and B, when A %s through execute_command, then it fails with permission denied and B\'s files are unchanged', async (_what, script) => {
    const attempt = await act(ids, 'agent-a', sh(script));
    expect(attempt.outcome).toBe('completed');
    expect(attempt.exit_code).not.toBe(0);
    expect(await text(attempt.stderr_sha256)).toMatch(/Permission denied|Operation not permitted/);
    const home = cellHome(rootA, ids.task_id);
    expect(await readdir(path.join(home, 'home/agent-b'))).toEqual(['secret']);
    expect(await readFile(path.join(home, 'home/agent-b/secret'), 'utf8')).toBe('secret-of-b\n');
    expect((await readdir(path.join(home, 'home'))).sort()).toEqual(['agent-a', 'agent-b']);
  });

  it('given seats A and B, then both write the project and the shared area: each changes, renames and removes what the other made', async () => {
    expect(await act(ids, 'agent-a', sh('mkdir -p proj && echo from-a > proj/a.txt && echo top-a > top.txt && echo note-a > shared/notes.md'))).toMatchObject({ exit_code: 0 });
    const byB = await act(ids, 'agent-b', sh('echo from-b >> proj/a.txt && echo more-b >> top.txt && mv proj/a.txt proj/ab.txt && echo b > proj/b.txt && echo note-b >> shared/notes.md && echo pad-b >> shared/scratchpad.md'));
    expect(byB).toMatchObject({ outcome: 'completed', exit_code: 0 });
    expect(await act(ids, 'agent-a', sh('rm proj/b.txt && echo again-a >> proj/ab.txt'))).toMatchObject({ exit_code: 0 });
    const home = cellHome(rootA, ids.task_id);
    expect(await readFile(path.join(home, 'proj/ab.txt'), 'utf8')).toBe('from-a\nfrom-b\nagain-a\n');
    expect(await readFile(path.join(home, 'top.txt'), 'utf8')).toBe('top-a\nmore-b\n');
    expect(await readFile(path.join(home, 'shared/notes.md'), 'utf8')).toBe('note-a\nnote-b\n');
    expect(existsSync(path.join(home, 'proj/b.txt'))).toBe(false);
    // what a seat makes stays the cell group's, group-writable (setgid directories, umask 002)
    const made = await lstat(path.join(home, 'proj/ab.txt'));
    expect({ uid: made.uid, gid: made.gid, group_write: (made.mode & 0o020) !== 0 }).toEqual({ uid: uidA, gid: CELL_GID, group_write: true });
  });

  it('given an observer seat, when it runs, then it reads the project and the shared area but writes neither, nor any home', async () => {
    const state = await seatAs(ids.task_id, 'watcher', 'observer');
    const user = seatUser(state, 'watcher');
    expect(user.gid).toBe(user.uid);
    const run = (script: string) => a.cells.runtime.exec(ids.task_id, { argv: ['sh', '-c', script], timeoutMs: 10_000, maxOutputBytes: 4_096, user });
    const read = await run('cat proj/ab.txt shared/notes.md');
    expect({ exit: read.exit_code, out: read.stdout.toString() }).toEqual({ exit: 0, out: 'from-a\nfrom-b\nagain-a\nnote-a\nnote-b\n' });
    for (const script of ['echo x > observed.txt', 'echo x >> proj/ab.txt', 'echo x > proj/new.txt', 'echo x >> shared/notes.md', 'echo x > shared/new.md', 'rm shared/scratchpad.md', 'cat home/agent-a/../agent-b/secret', 'ls home/agent-a']) {
      const attempt = await run(script);
      expect(attempt.exit_code, script).not.toBe(0);
      expect(attempt.stderr.toString(), script).toMatch(/Permission denied/);
    }
    const home = cellHome(rootA, ids.task_id);
    expect(existsSync(path.join(home, 'observed.txt'))).toBe(false);
    expect(await readFile(path.join(home, 'proj/ab.txt'), 'utf8')).toBe('from-a\nfrom-b\nagain-a\n');
  });

  it('given per-seat homes, when close-cell takes the final checkpoint, then each home is in the tarball (read by its own seat), and nothing else could read them all', async () => {
    await closeCell(ids.task_id);
    const completed = (await rig.cellEvents(ids.task_id)).find((event) => event.event_type === 'cell.checkpoint_completed')?.payload as { sha256: string };
    const members = tarMembers((await rig.objectBytes(completed.sha256)) ?? new Uint8Array());
    expect(members).toEqual(expect.arrayContaining(['proj/ab.txt', 'top.txt', 'shared/notes.md', 'home/agent-b/secret', 'home/agent-a/']));
    // the checkpoint carries this cell's owner note: its purge may delete it, nobody else's
    const info = await (await new Objm(rig.nc).open(rig.config.artifacts.bucket)).info(`sha256-${completed.sha256}`);
    expect(info?.metadata?.[OWNER_KEY]).toBe(`cell:${ids.task_id}`);
  });
});

describe('checkpoints, resumption elsewhere, scrubbing', () => {
  it('given a closed cell whose graveyard is on another host, when it is resurrected there, then its last checkpoint is restored: the project, the shared area and the homes', async () => {
    const ids = await newTask('resume');
    await act(ids, 'agent-1', sh('mkdir -p src && echo "export {}" > src/a.ts && echo scratch >> shared/scratchpad.md && echo remember > home/agent-1/memory.md'));
    await closeCell(ids.task_id);
    const checkpoint = (await rig.cellEvents(ids.task_id)).find((event) => event.event_type === 'cell.checkpoint_completed')?.payload as { checkpoint_id: string };

    b = await rig.startExecutor({ executorId: 'cells-b', cells: { ...rig.config.cells, cellsRoot: rootB, poolSize: 0 } });
    try {
      const result = await b.cellLifecycle.resurrect(ids.task_id, { id: director.id, type: 'user' }, 'crs-cells-test');
      expect(result).toMatchObject({ restored_from: 'checkpoint', checkpoint_id: checkpoint.checkpoint_id });
      const home = cellHome(rootB, ids.task_id);
      expect(await readFile(path.join(home, 'src/a.ts'), 'utf8')).toBe('export {}\n');
      expect(await readFile(path.join(home, 'shared/scratchpad.md'), 'utf8')).toBe('scratch\n');
      expect(await readFile(path.join(home, 'home/agent-1/memory.md'), 'utf8')).toBe('remember\n');
      const restored = await lstat(path.join(home, 'src/a.ts'));
      expect(restored.uid).toBe(10001);
      // the home comes back to its seat's own uid on the other host (the same ordinal in the same stream)
      for (const entry of ['home/agent-1', 'home/agent-1/memory.md']) expect((await lstat(path.join(home, entry))).uid).toBe(CELL_SEAT_UID_BASE + 1);
      expect(JSON.parse(await readFile(path.join(home, '.lazarus/cell.json'), 'utf8'))).toMatchObject({ executor_id: 'cells-b', status: 'ACTIVE' });
    } finally {
      await rig.stopExecutor(b);
      b = undefined;
    }
  });

  it('given a closed cell, when its grace is over and its host sweeps, then its files, container and mounts are gone from the host first, and cell.archived lists the final checkpoint', async () => {
    const ids = await newTask('scrub');
    await act(ids, 'agent-1', sh('echo data > w.txt; echo scratch > /tmp/scratch; exit 0'));
    await closeCell(ids.task_id);
    const hostTmpBefore = new Set(await readdir(tmpdir()));
    offsetA = 31 * MIN;
    try {
      await a.cellLifecycle.sweep();
    } finally {
      offsetA = 0;
    }
    const log = await rig.cellEvents(ids.task_id);
    expect(log.at(-1)).toMatchObject({ event_type: 'cell.archived', payload: { filesystem_scrubbed: true, checkpoint_ids: ['ckpt-1'] } });
    expect(existsSync(path.join(rootA, ids.task_id))).toBe(false);
    expect(existsSync(path.join(rootA, '.scrubbing'))).toBe(false);
    expect(await containerState(ids.task_id)).toEqual([]);
    expect(await mountsUnder(path.join(rootA, ids.task_id))).toEqual([]);
    expect((await readdir(tmpdir())).filter((name) => !hostTmpBefore.has(name) && (name.includes(ids.task_id) || name === 'scratch'))).toEqual([]);
    // the archive manifest names the checkpoint
    const ref = String(log.at(-1)?.payload['archive_ref']);
    const manifest = JSON.parse(Buffer.from((await rig.objectBytes(ref.slice(ref.indexOf('sha256-') + 7))) ?? []).toString()) as Record<string, unknown>;
    expect(manifest).toMatchObject({ cell_id: ids.task_id, checkpoints: [{ checkpoint_id: 'ckpt-1', final: true }] });
    // an archived cell is never resurrected
    await expectRefused('CELL_TRANSITION_INVALID', resurrect(ids.task_id, await resurrectionJws(director, ids.task_id)));
  });
});

describe('archive retention: checkpoints leave the artifact store', () => {
  it('given an archived cell, when swept within its archive retention, then nothing is deleted; past it, its checkpoint and manifest are gone, cell.archive_purged is appended once, and a second sweep does nothing', async () => {
    const ids = await newTask('purge');
    await act(ids, 'agent-1', sh('echo kept-for-30-days > data.txt'));
    await closeCell(ids.task_id);
    offsetA = 31 * MIN;
    try {
      await a.cellLifecycle.sweep();
    } finally {
      offsetA = 0;
    }
    const archived = (await rig.cellEvents(ids.task_id)).at(-1);
    expect(archived?.event_type).toBe('cell.archived');
    const checkpoint = (await rig.cellEvents(ids.task_id)).find((event) => event.event_type === 'cell.checkpoint_completed')?.payload as { sha256: string };
    const ref = String(archived?.payload['archive_ref']);
    const manifest = ref.slice(ref.indexOf('sha256-') + 7);
    expect(await rig.objectBytes(checkpoint.sha256)).not.toBeNull();

    // within the retention (30 days from archiving, the default): nothing happens
    offsetA = 31 * MIN + 30 * DAY - 10 * MIN;
    try {
      await a.cellLifecycle.sweep();
    } finally {
      offsetA = 0;
    }
    expect((await rig.cellEvents(ids.task_id)).at(-1)?.event_type).toBe('cell.archived');
    expect(await rig.objectBytes(checkpoint.sha256)).not.toBeNull();
    expect(await rig.objectBytes(manifest)).not.toBeNull();

    // past it: deleted first, then recorded, once
    offsetA = 31 * MIN + 30 * DAY + MIN;
    try {
      const report = await a.cellLifecycle.sweep();
      expect(report.transitions).toContainEqual({ cell_id: ids.task_id, kind: 'retention_over' });
      const purged = (await rig.cellEvents(ids.task_id)).filter((event) => event.event_type === 'cell.archive_purged');
      expect(purged).toHaveLength(1);
      expect(purged[0]?.payload).toMatchObject({ purged_by: 'writ-executor', deleted_sha256: [checkpoint.sha256, manifest], kept_sha256: [] });
      expect(await rig.objectBytes(checkpoint.sha256)).toBeNull();
      expect(await rig.objectBytes(manifest)).toBeNull();

      const head = (await rig.cellEvents(ids.task_id)).length;
      const again = await a.cellLifecycle.sweep();
      expect(again.transitions.filter((transition) => transition.cell_id === ids.task_id)).toEqual([]);
      expect(await rig.cellEvents(ids.task_id)).toHaveLength(head);
    } finally {
      offsetA = 0;
    }
  });
});

describe('heartbeats, DOWNED and a substitute (runs last: executor A stops)', () => {
  it('given a cell whose host stops beating, when another executor sweeps past the deadline, then DOWNED; when another agent acts there, then it takes over as a substitute with the last checkpoint and without the predecessor’s home', async () => {
    const ids = await newTask('downed');
    await act(ids, 'agent-1', sh('echo kept > p.txt && echo private > home/agent-1/memory.md'));
    await a.cellLifecycle.checkpoint(ids.task_id);
    await act(ids, 'agent-1', sh('echo later > after.txt'));
    const checkpoint = (await rig.cellEvents(ids.task_id)).find((event) => event.event_type === 'cell.checkpoint_completed')?.payload as { checkpoint_id: string };

    // the host goes away: nothing beats for its cells any more
    await rig.stopExecutor(a);
    const ahead = 10 * MIN;
    b = await rig.startExecutor({ executorId: 'cells-b', cells: { ...rig.config.cells, cellsRoot: rootB, poolSize: 0 } }, { clock: () => new Date(Date.now() + ahead) });
    const report = await b.cellLifecycle.sweep();
    expect(report.transitions).toContainEqual({ cell_id: ids.task_id, kind: 'heartbeat_missed' });
    expect((await rig.cellEvents(ids.task_id)).at(-1)).toMatchObject({ event_type: 'cell.downed', payload: { participant_id: 'agent-1' } });

    const sub = await act(ids, 'agent-2', sh('ls; ls home'), new Date(Date.now() + ahead));
    expect(sub).toMatchObject({ outcome: 'completed', exit_code: 0 });
    const log = await rig.cellEvents(ids.task_id);
    expect(log.slice(-3).map((event) => event.event_type)).toEqual(['cell.substitute_invited', 'cell.invitation_accepted', 'cell.revived']);
    expect(log.at(-3)?.payload).toMatchObject({
      participant: { participant_id: 'agent-2', role: 'substitute' },
      replaces: 'agent-1',
      inherits_checkpoint_id: checkpoint.checkpoint_id,
      inherits_home: false,
      invited_by: director.id,
    });
    expect(log.at(-1)?.payload).toMatchObject({ revived_by: 'agent-2', replaced: 'agent-1' });
    const home = cellHome(rootB, ids.task_id);
    expect(await readFile(path.join(home, 'p.txt'), 'utf8')).toBe('kept\n');
    expect(existsSync(path.join(home, 'after.txt'))).toBe(false);
    expect(existsSync(path.join(home, 'home/agent-1'))).toBe(false);
    expect((await lstat(path.join(home, 'home/agent-2'))).isDirectory()).toBe(true);
    expect(Buffer.from((await rig.objectBytes(sub.stdout_sha256)) ?? []).toString().split('\n')).not.toContain('agent-1');
    // a new seat (the cell's third, after the director and agent-1): a new uid, a new home, nothing of agent-1's
    const who = await act(ids, 'agent-2', sh('id -u; stat -c %u home/agent-2; ls -A home/agent-2 | wc -l'), new Date(Date.now() + ahead));
    expect(Buffer.from((await rig.objectBytes(who.stdout_sha256)) ?? []).toString()).toBe(`${CELL_SEAT_UID_BASE + 2}\n${CELL_SEAT_UID_BASE + 2}\n0\n`);
  });
});
