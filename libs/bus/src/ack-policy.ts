import type { HandlerFailure } from './handler-failure.js';

/**
 * What to do with a message whose handler failed, by the failure's error code
 * (STYLE.md, "each adapter has one mapping table"):
 * - `dead-letter`: the message can never succeed (a contract violation); store
 *   it on the dead-letter subject with the reason and `term()` it, no retries;
 * - `retry-soon`: a lost race (sequence conflict); the handler reloads and
 *   tries again almost at once, still bounded by `maxDeliver`;
 * - `retry-backoff`: transient or unknown (timeouts, a peer down, a bug);
 *   redeliver after an exponentially growing delay, bounded by `maxDeliver`.
 */
export type ErrorAction = 'dead-letter' | 'retry-soon' | 'retry-backoff';

/** Maps an error code to an action. The table below is the default; a handler may supply its own. */
export type ErrorClassifier = (code: string) => ErrorAction;

export type ErrorActionTable = Readonly<Record<string, ErrorAction>>;

/** The bus's default table. Codes not listed are `retry-backoff`. */
export const DEFAULT_ERROR_ACTIONS: ErrorActionTable = Object.freeze({
  CONTRACT_INVALID: 'dead-letter',
  BUS_PAYLOAD_INVALID: 'dead-letter',
  EVENTSTORE_CONFLICT: 'retry-soon',
  BUS_PUBLISH_SEQUENCE_CONFLICT: 'retry-soon',
});

export const DEFAULT_FALLBACK_ACTION: ErrorAction = 'retry-backoff';

/** A classifier over `DEFAULT_ERROR_ACTIONS` overlaid with `overrides`. */
export function classifierFromTable(
  overrides: ErrorActionTable = {},
  fallback: ErrorAction = DEFAULT_FALLBACK_ACTION,
): ErrorClassifier {
  const table: ErrorActionTable = { ...DEFAULT_ERROR_ACTIONS, ...overrides };
  return (code) => (Object.hasOwn(table, code) ? (table[code] as ErrorAction) : fallback);
}

export interface BackoffSettings {
  /** Delay before the 2nd delivery, in ms. */
  readonly initialMs: number;
  /** Ceiling of any single delay, in ms. */
  readonly maxMs: number;
  /** Growth factor per delivery. */
  readonly multiplier: number;
}

export interface RetrySettings {
  /** Handled attempts per message, first delivery included. */
  readonly maxDeliver: number;
  readonly backoff: BackoffSettings;
  /** Delay for `retry-soon`, in ms (a little, so the winner's append is visible when we reload). */
  readonly retrySoonDelayMs: number;
  readonly classify: ErrorClassifier;
}

/** Exponential backoff from the delivery count: delivery 1 failed → initialMs, 2 → initialMs·m, … capped at maxMs. */
export function backoffDelay(deliveryCount: number, backoff: BackoffSettings): number {
  const exponent = Math.max(0, deliveryCount - 1);
  const delay = backoff.initialMs * backoff.multiplier ** exponent;
  return Math.round(Math.min(backoff.maxMs, Number.isFinite(delay) ? delay : backoff.maxMs));
}

/** Why a message ends on the dead-letter subject. */
export type DeadLetterKind = 'terminal' | 'exhausted';

export type AckDecision =
  | { readonly action: 'retry'; readonly delayMs: number }
  | { readonly action: 'dead-letter'; readonly kind: DeadLetterKind };

/**
 * The ack decision for a failed delivery: the classifier picks the action,
 * and `maxDeliver` bounds every retry — the delivery that would exceed it is
 * dead-lettered as `exhausted` instead. Pure, so it is tested as a table.
 */
export function decideAck(failure: HandlerFailure, deliveryCount: number, settings: RetrySettings): AckDecision {
  const action = settings.classify(failure.code);
  if (action === 'dead-letter') return { action: 'dead-letter', kind: 'terminal' };
  if (deliveryCount >= settings.maxDeliver) return { action: 'dead-letter', kind: 'exhausted' };
  const delayMs = action === 'retry-soon' ? settings.retrySoonDelayMs : backoffDelay(deliveryCount, settings.backoff);
  return { action: 'retry', delayMs };
}
