import 'reflect-metadata';
import { hasErrorCode, type EventDraft, type EventEnvelope, type RenewCellReply } from '@writ/contracts';
import { generateEd25519Key } from '@writ/crypto';
import { cellDecider, type CellCommand, type CellState } from '@writ/kernel';
import { SIGNED_REQUESTS, signRequest } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorRig, type User } from '../test/executor-rig.js';

/**
 * `<root>.qry.executor.renew-cell` through the whole executor against the real NATS (issue 5:
 * "active TTL default 4 h, renewable by a director up to 24 h"): a director's signed CellRenewal
 * is verified, the kernel decides `renew-active-ttl`, and `cell.ttl_renewed` lands on the cell's
 * own stream. The cells are written here with the kernel's decider, as executors write them, and
 * every one of them is held by a host that is not this executor's: a renewal only appends to the
 * log, so it is answered where it lands, never routed. No cell runs (no Docker container); the
 * executor's sweep is off, and its clock is the wall clock the signatures are made with.
 */

const rig = new ExecutorRig();
const HOUR = 3_600_000;
const MIN = 60_000;
const ELSEWHERE = 'host-elsewhere';

let director: User;
let observer: User;
let agent: User;
/** Activation instant of the cells written by `activeCell` (whole seconds: expiries are exact). */
let activatedMs: number;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

beforeAll(async () => {
  await rig.start('executor-renew', { cellsRoots: ['writ-executor-renew-'], env: { WRIT_CELL_POOL_SIZE: '0', WRIT_CELL_SWEEP_INTERVAL_MS: '0' }, cellImage: false });
  director = await rig.registerUser(['director'], 'user', uniqueName('director'));
  observer = await rig.registerUser(['observer'], 'user', uniqueName('observer'));
  // The agent working in the cell, even with the director role: an agent never renews.
  agent = await rig.registerUser(['director'], 'agent', uniqueName('agent'));
}, 120_000);

afterAll(() => rig.close(), 60_000);

/** Appends the kernel's events for `commands` to the cell's stream, at `atMs` each, as an executor appends them. */
async function appendCell(cellId: string, commands: readonly Omit<CellCommand, 'metadata'>[], atMs: number): Promise<void> {
  const log = await rig.cellEvents(cellId);
  let state: CellState = log.reduce<CellState>((s, event) => cellDecider.evolve(s, { type: event.event_type, data: event.payload }), cellDecider.initialState());
  const now = new Date(atMs).toISOString();
  const drafts: EventDraft[] = [];
  for (const command of commands) {
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
  }
  await rig.store.appendToEntity('cell', cellId, drafts, log.length);
}

/** A cell directed by `director`, with the agent working and the observer watching, activated on another host at `activatedMs`. */
async function activeCell(label: string): Promise<string> {
  const cellId = uniqueName(`task-${label}`);
  await appendCell(
    cellId,
    [
      { type: 'invite-participant', data: { cell_id: cellId, invited_by: director.id, participant_id: agent.id, role: 'executor' } },
      { type: 'accept-invitation', data: { participant_id: agent.id } },
      { type: 'invite-participant', data: { cell_id: cellId, invited_by: director.id, participant_id: observer.id, role: 'observer' } },
      { type: 'accept-invitation', data: { participant_id: observer.id } },
      { type: 'prepare-cell', data: { backend: 'docker', prepared_by: 'executor-elsewhere', host_id: ELSEWHERE } },
      { type: 'activate-cell', data: { spawned_by: 'executor-elsewhere', host_id: ELSEWHERE } },
    ],
    activatedMs,
  );
  return cellId;
}

async function renewalJws(user: User, cellId: string, fields: { extend_ms?: number; at?: Date; key?: User['key'] } = {}): Promise<string> {
  const { extend_ms: extendMs, at = new Date(), key = user.key } = fields;
  return (await signRequest(SIGNED_REQUESTS.cellRenewal, { cell_id: cellId, ...(extendMs === undefined ? {} : { extend_ms: extendMs }) }, { principalId: user.id, key, now: at })).jws;
}

const renew = (cellId: string, jws: string): Promise<RenewCellReply> => rig.client.request(rig.config.subjects.renewCell, { cell_id: cellId, renewal_jws: jws });

/** The refusal `pending` ends with: its code must be `code`; its message is returned for the test to read. */
async function refusal(code: string, pending: Promise<unknown>): Promise<string> {
  const error = await pending.then(
    () => new Error('the request was accepted'),
    (failure: unknown) => failure,
  );
  expect(hasErrorCode(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
  return error instanceof Error ? error.message : String(error);
}

const ofCell = async (cellId: string): Promise<EventEnvelope[]> => rig.cellEvents(cellId);

describe('a director renews a cell’s active TTL', () => {
  let cellId: string;

  beforeAll(async () => {
    activatedMs = Math.floor(Date.now() / 1_000) * 1_000;
    cellId = await activeCell('renew');
  });

  it('given an ACTIVE cell held by another host, when its director renews it by 2h, then this executor appends cell.ttl_renewed (actor: the director) and replies with the new expiry', async () => {
    const reply = await renew(cellId, await renewalJws(director, cellId, { extend_ms: 2 * HOUR }));

    expect(reply).toEqual({
      cell_id: cellId,
      status: 'renewed',
      renewed_by: director.id,
      previous_expires_at: iso(activatedMs + 4 * HOUR),
      active_expires_at: iso(activatedMs + 6 * HOUR),
      max_expires_at: iso(activatedMs + 24 * HOUR),
      event_id: reply.event_id,
    });
    const last = (await ofCell(cellId)).at(-1);
    expect(last).toMatchObject({
      event_type: 'cell.ttl_renewed',
      event_id: reply.event_id,
      entity_type: 'cell',
      entity_id: cellId,
      actor_type: 'user',
      actor_id: director.id,
      payload: { renewed_by: director.id, previous_expires_at: iso(activatedMs + 4 * HOUR), active_expires_at: iso(activatedMs + 6 * HOUR) },
    });
    expect(last?.causation_id).toMatch(/^crn-[0-9a-f]{32}$/);
    // not routed: the holder recorded on the cell is still the other host
    expect((await ofCell(cellId)).filter((event) => event.payload['host_id'] !== undefined).map((event) => event.payload['host_id'])).toEqual([ELSEWHERE, ELSEWHERE]);
  });

  it('given the same signed renewal sent again (a retry), then it is answered already_renewed with the first event and the window is not extended twice', async () => {
    const jws = await renewalJws(director, cellId, { extend_ms: 30 * MIN });
    const first = await renew(cellId, jws);
    const count = (await ofCell(cellId)).length;
    const again = await renew(cellId, jws);

    expect(first).toMatchObject({ status: 'renewed', active_expires_at: iso(activatedMs + 6.5 * HOUR) });
    expect(again).toEqual({ ...first, status: 'already_renewed' });
    expect(await ofCell(cellId)).toHaveLength(count);
  });

  it('given an observer of the cell, or the agent working in it (an agent even with the director role), when either signs a renewal, then EXECUTOR_CELL_NOT_ALLOWED and nothing is appended', async () => {
    const count = (await ofCell(cellId)).length;
    await refusal('EXECUTOR_CELL_NOT_ALLOWED', renew(cellId, await renewalJws(observer, cellId, { extend_ms: HOUR })));
    await refusal('EXECUTOR_CELL_NOT_ALLOWED', renew(cellId, await renewalJws(agent, cellId, { extend_ms: HOUR })));
    expect(await ofCell(cellId)).toHaveLength(count);
  });

  it('given a renewal past the 24 h ceiling, then CELL_TTL_CAP_EXCEEDED saying until when and how much more the ceiling allows, nothing appended; exactly that much is then granted, and no more after it', async () => {
    const count = (await ofCell(cellId)).length;
    // the window ends at activation + 6h30m: 17h30m are left to the ceiling
    const message = await refusal('CELL_TTL_CAP_EXCEEDED', renew(cellId, await renewalJws(director, cellId, { extend_ms: 18 * HOUR })));
    expect(message).toContain(`until ${iso(activatedMs + 24 * HOUR)} at most`);
    expect(message).toContain('at most 17h30m now (--extend 17h30m)');
    expect(await ofCell(cellId)).toHaveLength(count);

    const full = await renew(cellId, await renewalJws(director, cellId, { extend_ms: 17.5 * HOUR }));
    expect(full).toMatchObject({ status: 'renewed', active_expires_at: iso(activatedMs + 24 * HOUR), max_expires_at: iso(activatedMs + 24 * HOUR) });
    const spent = await refusal('CELL_TTL_CAP_EXCEEDED', renew(cellId, await renewalJws(director, cellId, { extend_ms: MIN })));
    expect(spent).toContain('cannot be renewed any further');
  });
});

describe('renewals the executor refuses before the kernel is asked', () => {
  let cellId: string;

  beforeAll(async () => {
    activatedMs = Math.floor(Date.now() / 1_000) * 1_000;
    cellId = await activeCell('refused');
  });

  it('given a renewal signed with a key the director does not hold (forged), then EXECUTOR_CELL_SIGNATURE_INVALID and nothing is appended', async () => {
    const count = (await ofCell(cellId)).length;
    const forger = await generateEd25519Key({ kid: `${director.id}-k1` });
    await refusal('EXECUTOR_CELL_SIGNATURE_INVALID', renew(cellId, await renewalJws(director, cellId, { key: forger })));
    expect(await ofCell(cellId)).toHaveLength(count);
  });

  it('given a director’s signed resurrection sent as a renewal, then EXECUTOR_CELL_SIGNATURE_INVALID: one kind of signed request never passes for another', async () => {
    const count = (await ofCell(cellId)).length;
    const resurrection = (await signRequest(SIGNED_REQUESTS.cellResurrection, { cell_id: cellId }, { principalId: director.id, key: director.key, now: new Date() })).jws;
    await refusal('EXECUTOR_CELL_SIGNATURE_INVALID', renew(cellId, resurrection));
    expect(await ofCell(cellId)).toHaveLength(count);
  });

  it('given a renewal signed 10 minutes ago (stale: replayed or a wrong clock), then EXECUTOR_CELL_STALE and nothing is appended', async () => {
    const count = (await ofCell(cellId)).length;
    await refusal('EXECUTOR_CELL_STALE', renew(cellId, await renewalJws(director, cellId, { at: new Date(Date.now() - 10 * MIN) })));
    expect(await ofCell(cellId)).toHaveLength(count);
  });

  it('given a renewal signed for another cell, then EXECUTOR_CELL_MISMATCH and neither cell changes', async () => {
    const other = await activeCell('other');
    const counts = [(await ofCell(cellId)).length, (await ofCell(other)).length];
    await refusal('EXECUTOR_CELL_MISMATCH', renew(cellId, await renewalJws(director, other)));
    expect([(await ofCell(cellId)).length, (await ofCell(other)).length]).toEqual(counts);
  });

  it('given no cell with this id, then EXECUTOR_CELL_NOT_FOUND', async () => {
    const missing = uniqueName('task-none');
    await refusal('EXECUTOR_CELL_NOT_FOUND', renew(missing, await renewalJws(director, missing)));
    expect(await ofCell(missing)).toEqual([]);
  });

  it('given a CLOSED cell, then CELL_TRANSITION_INVALID pointing at resurrection, and nothing is appended', async () => {
    const closed = await activeCell('closed');
    await appendCell(closed, [{ type: 'close-cell', data: { reason: 'explicit', closed_by: director.id } }], Date.now());
    const count = (await ofCell(closed)).length;
    const message = await refusal('CELL_TRANSITION_INVALID', renew(closed, await renewalJws(director, closed, { extend_ms: HOUR })));
    expect(message).toContain('is CLOSED');
    expect(message).toContain('writ cell resurrect');
    expect(await ofCell(closed)).toHaveLength(count);
  });

  it('given a cell with no extension named, when its director renews it, then the window grows by the cell policy’s active TTL (4h)', async () => {
    const reply = await renew(cellId, await renewalJws(director, cellId));
    expect(reply).toMatchObject({ status: 'renewed', previous_expires_at: iso(activatedMs + 4 * HOUR), active_expires_at: iso(activatedMs + 8 * HOUR) });
  });
});
