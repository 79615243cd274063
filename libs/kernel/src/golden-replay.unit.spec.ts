import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { approvalDecider, attemptDecider, fold, grantDecider, type Decider } from './index.js';

// Golden replay: event streams recorded under __fixtures__ must still fold,
// with today's evolve, to the state recorded beside them and without a single
// anomaly. A change to an event schema or to evolve that breaks an old
// stream fails here; regenerate only on a deliberate, migrated change.
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8')) as unknown;

const STREAMS: readonly [string, Decider<never, never, { status: string; anomalies: readonly unknown[] }>, string][] = [
  ['attempt-direct-allow', attemptDecider as never, 'succeeded'],
  ['attempt-approval-path', attemptDecider as never, 'succeeded'],
  ['approval-granted', approvalDecider as never, 'granted'],
  ['grant-issued-and-used', grantDecider as never, 'issued'],
];

describe('golden replay of recorded streams', () => {
  it.each(STREAMS)('given the recorded %s stream, then today\'s evolve folds it to the recorded state', (name, decider, status) => {
    const events = fixture(`${name}.events.json`) as unknown[];
    const state = fold(decider, events);
    expect(state.anomalies).toEqual([]);
    expect(state.status).toBe(status);
    expect(state).toEqual(fixture(`${name}.expected.json`));
  });

  it('given the approval path, then the same attempt paused, resumed on approval and settled its unknown outcome on evidence', () => {
    const events = fixture('attempt-approval-path.events.json') as { type: string }[];
    expect(events.map((e) => e.type)).toEqual([
      'attempt.created',
      'attempt.leased',
      'attempt.awaiting_policy',
      'attempt.awaiting_approval',
      'attempt.authorized',
      'attempt.grant_attached',
      'attempt.executing',
      'attempt.observing',
      'attempt.unknown_outcome_receipted',
      'attempt.receipt_pending',
      'attempt.succeeded',
    ]);
  });

  it('given a recorded stream with one event removed, then evolve records the gap instead of guessing', () => {
    const events = fixture('attempt-direct-allow.events.json') as { type: string }[];
    const withoutGrant = events.filter((e) => e.type !== 'attempt.grant_attached');
    const state = fold(attemptDecider, withoutGrant);
    expect(state.status).toBe('authorized');
    expect(state.anomalies.map((a) => a.event_type)).toEqual(['attempt.executing', 'attempt.observing', 'attempt.receipt_pending', 'attempt.succeeded']);
  });
});
