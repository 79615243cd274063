import { hasErrorCode } from '@writ/contracts';
import { expect } from 'vitest';
import { fold, type Decider } from '../src/shared/decider.js';

/**
 * Given / when / then for deciders (the Emmett DeciderSpecification shape):
 * `spec.given(events).when(command).then(expectedEvents)` or
 * `.thenThrows(code)`, asserting codes, never messages.
 */
export function deciderSpec<C, E, S>(decider: Decider<C, E, S>) {
  return {
    given(events: readonly unknown[]) {
      const state = fold(decider, events);
      return {
        state,
        when(command: C) {
          const run = () => decider.decide(command, state);
          return {
            then(expected: readonly E[]): E[] {
              const events = run();
              expect(events).toEqual(expected);
              return events;
            },
            thenEvents(): E[] {
              return run();
            },
            thenThrows(code: string): void {
              let thrown: unknown;
              try {
                run();
              } catch (error) {
                thrown = error;
              }
              expect(thrown, `expected ${code}`).toBeDefined();
              expect(hasErrorCode(thrown, code), `expected ${code}, got ${String((thrown as { code?: unknown })?.code)}`).toBe(true);
            },
          };
        },
      };
    },
  };
}

/** The error code `fn` throws, or undefined. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return hasErrorCode(error) ? error.code : `non-coded: ${String(error)}`;
  }
}

export const T0 = '2030-01-01T00:00:00Z';

/** RFC 3339 instant `seconds` after T0. */
export function at(seconds: number): string {
  const base = Date.parse(T0);
  return new Date(base + seconds * 1000).toISOString().replace('.000Z', 'Z');
}

export const meta = (seconds = 0) => ({ now: at(seconds) });
