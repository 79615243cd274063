import { hasErrorCode } from '@writ/contracts';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Decider, EvolvingState } from '../src/shared/decider.js';

export interface Step<C, E, S> {
  readonly before: S;
  readonly command: C;
  readonly events: readonly E[] | null;
  readonly code: string | null;
  readonly after: S;
}

/**
 * Model test: runs random command sequences through decide → evolve and
 * hands every step to `check`. Always asserted: decide either returns events
 * or throws a coded error from `codes`; the events decide returns are applied
 * by evolve without a single anomaly (decide and evolve agree).
 */
export function modelCheck<C, E, S extends EvolvingState>(
  decider: Decider<C, E, S>,
  commands: fc.Arbitrary<readonly C[]>,
  codes: readonly string[],
  check: (step: Step<C, E, S>, history: readonly Step<C, E, S>[]) => void,
  runs = 300,
): void {
  fc.assert(
    fc.property(commands, (sequence) => {
      let state = decider.initialState();
      const history: Step<C, E, S>[] = [];
      for (const command of sequence) {
        let events: E[] | null = null;
        let code: string | null = null;
        try {
          events = decider.decide(command, state);
        } catch (error) {
          expect(hasErrorCode(error), `non-coded error: ${String(error)}`).toBe(true);
          code = (error as { code: string }).code;
          expect(codes, `unexpected code ${code}`).toContain(code);
        }
        const after = (events ?? []).reduce<S>((s, e) => decider.evolve(s, e), state);
        expect(after.anomalies.length, `decide produced events evolve rejects: ${JSON.stringify(events)}`).toBe(state.anomalies.length);
        const step = { before: state, command, events, code, after };
        check(step, history);
        history.push(step);
        state = after;
      }
    }),
    { numRuns: runs },
  );
}

/** evolve is total: any value, in any state reachable by folding, leaves a state and never throws. */
export function evolveIsTotal<C, E, S extends EvolvingState>(decider: Decider<C, E, S>, validEvents: fc.Arbitrary<readonly E[]>): void {
  fc.assert(
    fc.property(validEvents, fc.array(fc.oneof(fc.anything(), fc.record({ type: fc.string(), data: fc.anything() })), { maxLength: 5 }), (events, junk) => {
      let state = events.reduce<S>((s, e) => decider.evolve(s, e), decider.initialState());
      for (const value of junk) {
        const before = state;
        state = decider.evolve(state, value);
        expect(state.status).toBe(before.status);
      }
      expect(() => decider.evolve(state, null)).not.toThrow();
    }),
    { numRuns: 200 },
  );
}

/** Increasing RFC 3339 instants for a sequence of commands. */
export const instants = (count: number) =>
  fc.array(fc.integer({ min: 0, max: 600 }), { minLength: count, maxLength: count }).map((steps) => {
    let t = Date.parse('2030-01-01T00:00:00Z');
    return steps.map((step) => {
      t += step * 1000;
      return new Date(t).toISOString();
    });
  });
