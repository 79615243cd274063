import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fold } from '../shared/decider.js';
import { evolveParticipant, initialParticipantState, type ParticipantRecord, type ParticipantState } from './participant.decider.js';

// Golden replay: a recorded participant stream must still fold, with today's evolve, to the state
// recorded beside it and without an anomaly. Folding needs no cryptography. Regenerate only on a
// deliberate, migrated change of the participant events or of evolve.
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8')) as unknown;
const FOLD = { initialState: initialParticipantState, decide: () => [], evolve: evolveParticipant };

describe('golden replay of a recorded participant lifecycle', () => {
  const events = fixture('participant-lifecycle.events.json') as { type: string }[];

  it("given the recorded stream (refused spawn, spawn, heartbeats with a gap, drift pause, late heartbeat, resume, renewal, Last Will), then today's evolve folds it to the recorded state", () => {
    expect(events.map((e) => e.type)).toEqual([
      'participant.spawn_refused',
      'participant.spawn_verified',
      'participant.heartbeat_recorded',
      'participant.heartbeat_anomaly',
      'participant.heartbeat_recorded',
      'participant.paused',
      'participant.heartbeat_anomaly',
      'participant.heartbeat_recorded',
      'participant.resumed',
      'participant.manifest_renewed',
      'participant.retired',
    ]);
    const state = fold(FOLD, events) as ParticipantRecord;
    expect(state.anomalies).toEqual([]);
    expect(state.status).toBe('retired');
    expect(state).toEqual(fixture('participant-lifecycle.expected.json'));
  });

  it('given the recorded stream without its renewal, then the Last Will (for the renewed manifest) is an anomaly, never applied', () => {
    const state = fold(FOLD, events.filter((e) => e.type !== 'participant.manifest_renewed')) as ParticipantState;
    expect(state.status).toBe('active');
    expect(state.anomalies.map((a) => a.event_type)).toEqual(['participant.retired']);
  });
});
