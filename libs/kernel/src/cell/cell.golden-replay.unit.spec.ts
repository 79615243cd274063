import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fold } from '../shared/decider.js';
import { cellDecider, type CellRecord } from './cell.decider.js';

// Golden replay (as ../golden-replay.unit.spec.ts): a recorded cell stream must still fold, with
// today's evolve, to the state recorded beside it and without an anomaly. Regenerate only on a
// deliberate, migrated change of the cell events or of evolve.
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8')) as unknown;

describe('golden replay of a recorded cell lifecycle', () => {
  it('given the recorded stream (invite, spawn, checkpoint, renew, downed, substitute, final checkpoint, resurrect, close, archive), then today\'s evolve folds it to the recorded state', () => {
    const events = fixture('cell-lifecycle.events.json') as unknown[];
    const state = fold(cellDecider, events) as CellRecord;
    expect(state.anomalies).toEqual([]);
    expect(state.status).toBe('ARCHIVED');
    expect(state).toEqual(fixture('cell-lifecycle.expected.json'));
  });

  it('given the recorded stream, then it walks the lifecycle in the recorded order', () => {
    const events = fixture('cell-lifecycle.events.json') as { type: string }[];
    expect(events.map((e) => e.type)).toEqual([
      'cell.participant_invited',
      'cell.participant_invited',
      'cell.invitation_accepted',
      'cell.invitation_accepted',
      'cell.preparing',
      'cell.activated',
      'cell.heartbeat_recorded',
      'cell.checkpoint_started',
      'cell.checkpoint_completed',
      'cell.ttl_renewed',
      'cell.downed',
      'cell.substitute_invited',
      'cell.invitation_accepted',
      'cell.revived',
      'cell.checkpoint_started',
      'cell.checkpoint_completed',
      'cell.closed',
      'cell.resurrected',
      'cell.closed',
      'cell.archived',
    ]);
  });

  it('given the recorded stream with the downed event removed, then evolve records the gap instead of guessing', () => {
    const events = (fixture('cell-lifecycle.events.json') as { type: string }[]).filter((e) => e.type !== 'cell.downed');
    const state = fold(cellDecider, events);
    expect(state.anomalies.map((a) => a.event_type)).toContain('cell.substitute_invited');
  });
});
