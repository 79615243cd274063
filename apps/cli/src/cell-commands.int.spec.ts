import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { CellResurrection, type EventDraft } from '@writ/contracts';
import { importEd25519PublicJwk, verifyJws } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { cellDecider, type CellCommand, type CellState } from '@writ/kernel';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from './main.js';

// `writ cell list|show|resurrect` against the real NATS on a test-unique subject root and
// event stream. list and show read cell streams written here with the kernel's cell decider
// (as the executor writes them); resurrect reaches a stand-in for the executor on
// `<root>.qry.executor.resurrect-cell` (the CLI never imports a service) that checks what the
// CLI signed and replies as the executor does, success or a refusal code.

const NOW = new Date('2031-05-01T12:30:00.000Z');
const MiB = 1024 ** 2;
const root = uniqueName('t');
const stream = uniqueName('CELLEVT');
let nc: NatsConnection;
let store: EventStore;
let dir: string;
let director: { privateFile: string; publicJwk: Record<string, unknown> };
const subscriptions: Subscription[] = [];

async function writ(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: { WRIT_NATS_URL: NATS_URL, WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: stream }, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => NOW };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Appends the events the kernel decides for `commands`, as the executor appends them to `<root>.evt.cell.<cell_id>`. */
async function cellStream(cellId: string, commands: readonly Omit<CellCommand, 'metadata'>[]): Promise<void> {
  let state: CellState = cellDecider.initialState();
  const drafts: EventDraft[] = [];
  commands.forEach((command, i) => {
    const now = new Date(NOW.getTime() + i * 1_000).toISOString();
    for (const event of cellDecider.decide({ ...command, metadata: { now } } as CellCommand, state)) {
      state = cellDecider.evolve(state, event);
      drafts.push({
        event_id: uniqueName('cev'),
        schema_version: 1,
        event_type: event.type,
        entity_type: 'cell',
        entity_id: cellId,
        occurred_at: now,
        actor_type: 'service',
        actor_id: 'writ-executor',
        payload: event.data,
        causation_id: null,
        correlation_id: cellId,
      });
    }
  });
  await store.appendToEntity('cell', cellId, drafts, 0);
}

function standIn(answer: (request: Record<string, unknown>) => Promise<Record<string, unknown>>): { seen: Record<string, unknown>[] } {
  const sub = nc.subscribe(`${root}.qry.executor.resurrect-cell`);
  subscriptions.push(sub);
  const state = { seen: [] as Record<string, unknown>[] };
  void (async () => {
    for await (const msg of sub as AsyncIterable<Msg>) {
      const request = msg.json<Record<string, unknown>>();
      state.seen.push(request);
      const reply = await answer(request);
      if (typeof reply['code'] === 'string') {
        const headers = natsHeaders();
        headers.set('Writ-Error-Code', reply['code']);
        msg.respond(JSON.stringify(reply), { headers });
      } else {
        msg.respond(JSON.stringify(reply));
      }
    }
  })();
  return state;
}

beforeAll(async () => {
  nc = await connectTestNats('cli-cells');
  store = await EventStore.open(nc, { stream, subjectPrefix: `${root}.evt`, maxBytes: 16 * MiB });
  dir = await mkdtemp(join(tmpdir(), 'writ-cli-cells-'));
  const privateFile = join(dir, 'director.private.json');
  const keygen = await writ(['principal', 'keygen', '--kid', 'director-k1', '--out', privateFile]);
  expect(keygen.code).toBe(0);
  director = { privateFile, publicJwk: JSON.parse(keygen.stdout) as Record<string, unknown> };
  const spawn = [
    { type: 'invite-participant', data: { cell_id: 'task-a', invited_by: 'director-1', participant_id: 'agent-1', role: 'executor' } },
    { type: 'accept-invitation', data: { participant_id: 'agent-1' } },
    { type: 'prepare-cell', data: { backend: 'docker', prepared_by: 'executor-1' } },
    { type: 'activate-cell', data: { spawned_by: 'executor-1' } },
  ] as const;
  await cellStream('task-a', spawn);
  await cellStream('task-b', [
    ...spawn.map((command) => (command.type === 'invite-participant' ? { ...command, data: { ...command.data, cell_id: 'task-b' } } : command)),
    { type: 'begin-checkpoint', data: { checkpoint_id: 'ckpt-1', requested_by: 'director-1', final: true } },
    { type: 'complete-checkpoint', data: { checkpoint_id: 'ckpt-1', sha256: 'a'.repeat(64), artifact_ref: `nats-obj://ART/sha256-${'a'.repeat(64)}` } },
  ]);
});

afterEach(() => {
  for (const sub of subscriptions.splice(0)) sub.unsubscribe();
});

afterAll(async () => {
  if (nc) {
    await deleteStreams(nc, stream);
    await nc.close();
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('writ cell list and show', () => {
  it('given two cells in the log, when listed, then each with its status, director, seats and events', async () => {
    const result = await writ(['cell', 'list', '--json']);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual([
      { cell_id: 'task-a', status: 'ACTIVE', director: 'director-1', participants: 2, events: 4, last_at: new Date(NOW.getTime() + 3_000).toISOString() },
      { cell_id: 'task-b', status: 'CLOSED', director: 'director-1', participants: 2, events: 7, last_at: new Date(NOW.getTime() + 5_000).toISOString() },
    ]);
    const table = await writ(['cell', 'list']);
    expect(table.stdout.split('\n')[0]).toMatch(/^CELL\s+STATUS\s+DIRECTOR\s+SEATS\s+EVENTS\s+LAST EVENT AT$/);
  });

  it('given a closed cell, when shown, then its seats, final checkpoint, graveyard grace and events, folded by the kernel', async () => {
    const result = await writ(['cell', 'show', 'task-b', '--json']);
    expect(result.code).toBe(0);
    const view = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(view).toMatchObject({
      cell_id: 'task-b',
      status: 'CLOSED',
      director: 'director-1',
      backend: 'docker',
      participants: [
        { participant_id: 'director-1', role: 'director', status: 'accepted' },
        { participant_id: 'agent-1', role: 'executor', status: 'accepted' },
      ],
      checkpoints: [{ checkpoint_id: 'ckpt-1', final: true, sha256: 'a'.repeat(64) }],
      closed: { reason: 'explicit', closed_by: 'director-1' },
    });
    expect((view['events'] as { event_type: string }[]).map((event) => event.event_type)).toEqual([
      'cell.participant_invited',
      'cell.invitation_accepted',
      'cell.preparing',
      'cell.activated',
      'cell.checkpoint_started',
      'cell.checkpoint_completed',
      'cell.closed',
    ]);
    const text = await writ(['cell', 'show', 'task-b']);
    expect(text.stdout.split('\n')[0]).toBe('cell task-b CLOSED');
    expect(text.stdout).toContain('ckpt-1 (final)');
  });

  it('given no such cell, when shown, then CLI_CELL_NOT_FOUND (exit 1)', async () => {
    const result = await writ(['cell', 'show', 'task-none']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_CELL_NOT_FOUND: /);
  });
});

describe('writ cell resurrect', () => {
  it("given a closed cell, when a director resurrects it, then a CellResurrection signed with the director's key reaches the executor and its reply is printed", async () => {
    const service = standIn(async (request) => {
      const { payload } = await verifyJws(String(request['resurrection_jws']), await importEd25519PublicJwk(director.publicJwk));
      const resurrection = CellResurrection.parse(JSON.parse(new TextDecoder().decode(payload)));
      return {
        cell_id: resurrection.cell_id,
        status: 'resurrected',
        restored_from: 'graveyard',
        checkpoint_id: null,
        resurrected_by: resurrection.resurrected_by,
        active_expires_at: '2031-05-01T16:30:00.000Z',
        event_id: 'cev-1',
      };
    });
    const result = await writ(['cell', 'resurrect', 'task-b', '--key', director.privateFile, '--principal', 'director-1', '--note', 'needed again']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('resurrected task-b from its graveyard by director-1; active until 2031-05-01T16:30:00.000Z');
    expect(service.seen).toHaveLength(1);
    const signed = JSON.parse(Buffer.from(String(service.seen[0]?.['resurrection_jws']).split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(signed).toEqual({ cell_id: 'task-b', note: 'needed again', resurrected_by: 'director-1', resurrected_at: NOW.toISOString() });
  });

  it('given the executor refuses (the grace is over), then the CLI exits 1 with the executor’s code', async () => {
    standIn(async () => ({ code: 'CELL_GRACE_EXPIRED', message: 'the closed grace of cell task-b ended' }));
    const result = await writ(['cell', 'resurrect', 'task-b', '--key', director.privateFile, '--principal', 'director-1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CELL_GRACE_EXPIRED: /);
  });

  it('given no key file, when resurrecting, then the command fails before anything is sent', async () => {
    const service = standIn(async () => ({ code: 'UNEXPECTED', message: 'must not be asked' }));
    const result = await writ(['cell', 'resurrect', 'task-b', '--key', join(dir, 'missing.json'), '--principal', 'director-1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_FILE_UNREADABLE: /);
    expect(service.seen).toHaveLength(0);
  });
});
