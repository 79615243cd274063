import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { CELL_RENEWAL_JWS_TYPE, CellRenewal, CellResurrection, type EventDraft } from '@writ/contracts';
import { importEd25519PublicJwk, verifyJws } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { cellDecider, type CellCommand, type CellState } from '@writ/kernel';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from './main.js';
import { operatorEnv } from '../test/service-process.fixture.js';

// `writ cell list|show|resurrect|renew` against the real NATS on a test-unique subject root and
// event stream. list and show read cell streams written here with the kernel's cell decider
// (as the executor writes them); resurrect and renew reach a stand-in for the executor on
// `<root>.qry.executor.resurrect-cell` / `renew-cell` (the CLI never imports a service) that checks what the
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
  const io: CliIo = { env: { ...operatorEnv(), WRIT_NATS_URL: NATS_URL, WRIT_SUBJECT_ROOT: root, WRIT_EVENTS_STREAM: stream }, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => NOW };
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

function standIn(answer: (request: Record<string, unknown>) => Promise<Record<string, unknown>>, verb = 'resurrect-cell'): { seen: Record<string, unknown>[] } {
  const sub = nc.subscribe(`${root}.qry.executor.${verb}`);
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

describe('writ cell renew', () => {
  /** What a CellRenewal JWS carries, verified with the director's public key and the renewal typ. */
  async function signedRenewal(jws: unknown): Promise<CellRenewal> {
    const { payload } = await verifyJws(String(jws), await importEd25519PublicJwk(director.publicJwk), { typ: CELL_RENEWAL_JWS_TYPE });
    return CellRenewal.parse(JSON.parse(new TextDecoder().decode(payload)));
  }

  it("given an ACTIVE cell, when a director renews it by 2h, then a CellRenewal signed with the director's key asks for 2h and the new expiry is printed", async () => {
    const service = standIn(async (request) => {
      const renewal = await signedRenewal(request['renewal_jws']);
      return {
        cell_id: renewal.cell_id,
        status: 'renewed',
        renewed_by: renewal.renewed_by,
        previous_expires_at: '2031-05-01T16:30:03Z',
        active_expires_at: '2031-05-01T18:30:03Z',
        max_expires_at: '2031-05-02T12:30:03Z',
        event_id: 'cev-2',
      };
    }, 'renew-cell');
    const result = await writ(['cell', 'renew', 'task-a', '--key', director.privateFile, '--principal', 'director-1', '--extend', '2h']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('renewed task-a by director-1; active until 2031-05-01T18:30:03Z (was 2031-05-01T16:30:03Z; renewable up to 2031-05-02T12:30:03Z)');
    expect(service.seen).toHaveLength(1);
    expect(service.seen[0]?.['cell_id']).toBe('task-a');
    expect(await signedRenewal(service.seen[0]?.['renewal_jws'])).toEqual({ cell_id: 'task-a', extend_ms: 2 * 3_600_000, renewed_by: 'director-1', renewed_at: NOW.toISOString() });
  });

  it('given no --extend, when a director renews, then the signed renewal names no extension (the cell policy’s active TTL applies) and --json prints the reply', async () => {
    const reply = { cell_id: 'task-a', status: 'renewed', renewed_by: 'director-1', previous_expires_at: '2031-05-01T18:30:03Z', active_expires_at: '2031-05-01T22:30:03Z', max_expires_at: '2031-05-02T12:30:03Z', event_id: 'cev-3' };
    const service = standIn(async () => reply, 'renew-cell');
    const result = await writ(['cell', 'renew', 'task-a', '--key', director.privateFile, '--principal', 'director-1', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(reply);
    expect(await signedRenewal(service.seen[0]?.['renewal_jws'])).toEqual({ cell_id: 'task-a', renewed_by: 'director-1', renewed_at: NOW.toISOString() });
  });

  it('given the executor refuses (past the ceiling), then the CLI exits 1 with its code and its message, which says what the ceiling allows', async () => {
    const message = 'cell task-a may stay active until 2031-05-02T12:30:03Z at most (the cell policy\'s ceiling: 24h from its activation at 2031-05-01T12:30:03Z); it runs until 2031-05-01T22:30:03Z, so a renewal may add at most 14h now (--extend 14h)';
    standIn(async () => ({ code: 'CELL_TTL_CAP_EXCEEDED', message }), 'renew-cell');
    const result = await writ(['cell', 'renew', 'task-a', '--key', director.privateFile, '--principal', 'director-1', '--extend', '20h']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error CELL_TTL_CAP_EXCEEDED: ${message}`);
  });

  it.each([
    ['not a director', 'EXECUTOR_CELL_NOT_ALLOWED'],
    ['a closed cell', 'CELL_TRANSITION_INVALID'],
    ['an unknown cell', 'EXECUTOR_CELL_NOT_FOUND'],
    ['a stale signature', 'EXECUTOR_CELL_STALE'],
  ])('given the executor refuses (%s), then the CLI exits 1 with %s', async (_note, code) => {
    standIn(async () => ({ code, message: 'refused' }), 'renew-cell');
    const result = await writ(['cell', 'renew', 'task-a', '--key', director.privateFile, '--principal', 'director-1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error ${code}: refused`);
  });

  it('given an --extend that is not a duration, when renewing, then a usage error (exit 2) and nothing is sent', async () => {
    const service = standIn(async () => ({ code: 'UNEXPECTED', message: 'must not be asked' }), 'renew-cell');
    const result = await writ(['cell', 'renew', 'task-a', '--key', director.privateFile, '--principal', 'director-1', '--extend', '2 hours']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error CLI_USAGE: --extend must be a duration/);
    expect(service.seen).toHaveLength(0);
  });
});
