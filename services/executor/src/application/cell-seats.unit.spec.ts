import { cellDecider, type CellCommand, type CellRecord, type CellState } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { CELL_GID, CELL_SEAT_UID_BASE, cellUserSpec } from '../outbound/cells/cell-config.js';
import { firstWorkingSeat, seatUser, workingSeatFor } from './cell-seats.js';

const now = '2030-01-01T00:00:00Z';

/** A cell created by `owner` with `agent` invited and accepted as its first executor seat `seat`. */
function created(owner: string, seat: string, principal: string): CellState {
  let state = cellDecider.initialState();
  for (const command of [
    { type: 'invite-participant', data: { cell_id: 'task-1', invited_by: owner, participant_id: seat, principal_id: principal, role: 'executor' }, metadata: { now } },
    { type: 'accept-invitation', data: { participant_id: seat }, metadata: { now } },
  ] as const) {
    for (const event of cellDecider.decide(command, state)) state = cellDecider.evolve(state, event);
  }
  return state;
}

describe('working seats', () => {
  it('given the task principal proposes its own first action, when the cell is created, then its working seat is <principal>-exec (the director seat holds its id)', () => {
    expect(firstWorkingSeat('agent-1', 'agent-1')).toBe('agent-1-exec');
    expect(firstWorkingSeat('director-1', 'agent-1')).toBe('agent-1');
  });

  it('given a seated principal, then its seat is found by principal id', () => {
    const state = created('agent-1', 'agent-1-exec', 'agent-1');
    expect(workingSeatFor(state, 'agent-1')).toMatchObject({ participant_id: 'agent-1-exec', seat: { role: 'executor', status: 'accepted' } });
  });

  it('given a new principal, then a new seat under its own id, or the next free one', () => {
    const state = created('director-1', 'agent-1', 'agent-1');
    expect(workingSeatFor(state, 'agent-2')).toEqual({ participant_id: 'agent-2', seat: undefined });
    // the director principal itself acting: its id is the director seat's, so -exec
    expect(workingSeatFor(state, 'director-1')).toEqual({ participant_id: 'director-1-exec', seat: undefined });
  });

  it('given a principal id of 128 characters, then its derived seat id still fits an Id', () => {
    const long = 'a'.repeat(128);
    const seat = firstWorkingSeat(long, long);
    expect(seat).toMatch(/^seat-[0-9a-f]{40}$/);
  });
});

/** `state` with `commands` decided and applied in turn. */
function apply(state: CellState, commands: readonly CellCommand[]): CellState {
  let next = state;
  for (const command of commands) for (const event of cellDecider.decide(command, next)) next = cellDecider.evolve(next, event);
  return next;
}

const invite = (participantId: string, role: 'executor' | 'observer' | 'guest'): CellCommand => ({
  type: 'invite-participant',
  data: { cell_id: 'task-1', invited_by: 'director-1', participant_id: participantId, role },
  metadata: { now },
});

describe('seat users: each seat its own uid', () => {
  // director-1 (ordinal 0), agent-1 (1), agent-2 (2), watcher (3, observer), visitor (4, guest).
  const cell = (): CellRecord =>
    apply(cellDecider.initialState(), [
      { type: 'invite-participant', data: { cell_id: 'task-1', invited_by: 'director-1', participant_id: 'agent-1', role: 'executor', policy: { allow_guest: true } }, metadata: { now } },
      { type: 'accept-invitation', data: { participant_id: 'agent-1' }, metadata: { now } },
      invite('agent-2', 'executor'),
      invite('watcher', 'observer'),
      invite('visitor', 'guest'),
    ]) as CellRecord;

  it('given seats in a cell, then each runs as the seat base plus its ordinal in the participant list: distinct, and the same on every fold of the stream', () => {
    const state = cell();
    expect(seatUser(state, 'agent-1')).toEqual({ uid: CELL_SEAT_UID_BASE + 1, gid: CELL_GID });
    expect(seatUser(state, 'agent-2')).toEqual({ uid: CELL_SEAT_UID_BASE + 2, gid: CELL_GID });
    expect(seatUser(cell(), 'agent-2')).toEqual(seatUser(state, 'agent-2'));
  });

  it('given the roles, then those that write the project (executor, guest per the kernel role table) share the cell group; an observer and a director get a private group (read-only)', () => {
    const state = cell();
    expect(seatUser(state, 'visitor')).toEqual({ uid: CELL_SEAT_UID_BASE + 4, gid: CELL_GID });
    expect(seatUser(state, 'watcher')).toEqual({ uid: CELL_SEAT_UID_BASE + 3, gid: CELL_SEAT_UID_BASE + 3 });
    expect(seatUser(state, 'director-1')).toEqual({ uid: CELL_SEAT_UID_BASE, gid: CELL_SEAT_UID_BASE });
  });

  it('given a seat the cell does not have, then EXECUTOR_INTERNAL (an exec never runs as a guessed uid)', () => {
    expect(() => seatUser(cell(), 'nobody')).toThrow(expect.objectContaining({ code: 'EXECUTOR_INTERNAL' }));
  });

  it('given a user for an exec, then only a uid from the harness up with the cell group or its own is accepted: never root, a system user, or another group', () => {
    expect(cellUserSpec()).toBe('10001:10001');
    expect(cellUserSpec(seatUser(cell(), 'watcher'))).toBe(`${CELL_SEAT_UID_BASE + 3}:${CELL_SEAT_UID_BASE + 3}`);
    for (const user of [
      { uid: 0, gid: 0 },
      { uid: 0, gid: CELL_GID },
      { uid: 1000, gid: CELL_GID },
      { uid: 20_001, gid: 0 },
      { uid: 20_001, gid: 20_002 },
      { uid: 20_001.5, gid: CELL_GID },
      { uid: 2 ** 31, gid: CELL_GID },
    ]) {
      expect(() => cellUserSpec(user), JSON.stringify(user)).toThrow(expect.objectContaining({ code: 'CELL_ARGUMENT_INVALID' }));
    }
  });
});
