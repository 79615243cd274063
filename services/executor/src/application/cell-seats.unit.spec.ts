import { cellDecider, type CellState } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { firstWorkingSeat, workingSeatFor } from './cell-seats.js';

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
