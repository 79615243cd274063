import { describe, expect, it } from 'vitest';
import { backoffDelay, classifierFromTable, decideAck, DEFAULT_ERROR_ACTIONS, type RetrySettings } from './ack-policy.js';

const settings = (overrides: Partial<RetrySettings> = {}): RetrySettings => ({
  maxDeliver: 4,
  backoff: { initialMs: 100, maxMs: 1_000, multiplier: 2 },
  retrySoonDelayMs: 5,
  classify: classifierFromTable(),
  ...overrides,
});

describe('decideAck (the adapter mapping table)', () => {
  it.each([
    { note: 'contract violation → dead-letter at once', code: 'CONTRACT_INVALID', delivery: 1, want: { action: 'dead-letter', kind: 'terminal' } },
    { note: 'undecodable body → dead-letter at once', code: 'BUS_PAYLOAD_INVALID', delivery: 1, want: { action: 'dead-letter', kind: 'terminal' } },
    { note: 'sequence conflict → quick retry', code: 'EVENTSTORE_CONFLICT', delivery: 1, want: { action: 'retry', delayMs: 5 } },
    { note: 'publish conflict → quick retry', code: 'BUS_PUBLISH_SEQUENCE_CONFLICT', delivery: 2, want: { action: 'retry', delayMs: 5 } },
    { note: 'sequence conflict is still bounded', code: 'EVENTSTORE_CONFLICT', delivery: 4, want: { action: 'dead-letter', kind: 'exhausted' } },
    { note: 'timeout → backoff from the delivery count', code: 'BUS_TIMEOUT', delivery: 1, want: { action: 'retry', delayMs: 100 } },
    { note: 'unknown code → backoff, growing', code: 'SOMETHING_ELSE', delivery: 3, want: { action: 'retry', delayMs: 400 } },
    { note: 'a bug without a code → backoff', code: 'BUS_HANDLER_FAILED', delivery: 2, want: { action: 'retry', delayMs: 200 } },
    { note: 'last handled attempt → dead-letter as exhausted', code: 'BUS_TIMEOUT', delivery: 4, want: { action: 'dead-letter', kind: 'exhausted' } },
  ])('$note', ({ code, delivery, want }) => {
    expect(decideAck({ code, message: 'm' }, delivery, settings())).toEqual(want);
  });

  it('lets a handler override the table per code, leaving the rest of the defaults', () => {
    const classify = classifierFromTable({ GRANT_EXPIRED: 'dead-letter', EVENTSTORE_CONFLICT: 'retry-backoff' });
    expect(decideAck({ code: 'GRANT_EXPIRED', message: '' }, 1, settings({ classify }))).toEqual({ action: 'dead-letter', kind: 'terminal' });
    expect(decideAck({ code: 'EVENTSTORE_CONFLICT', message: '' }, 1, settings({ classify }))).toEqual({ action: 'retry', delayMs: 100 });
    expect(decideAck({ code: 'CONTRACT_INVALID', message: '' }, 1, settings({ classify }))).toEqual({ action: 'dead-letter', kind: 'terminal' });
  });

  it('lets a handler replace the classifier entirely', () => {
    const classify = () => 'dead-letter' as const;
    expect(decideAck({ code: 'BUS_TIMEOUT', message: '' }, 1, settings({ classify }))).toEqual({ action: 'dead-letter', kind: 'terminal' });
  });

  it('keeps the default table closed to accidental mutation', () => {
    expect(Object.isFrozen(DEFAULT_ERROR_ACTIONS)).toBe(true);
  });
});

describe('backoffDelay', () => {
  it.each([
    [1, 100],
    [2, 200],
    [4, 800],
    [5, 1_000],
    [60, 1_000],
    [10_000, 1_000],
  ])('delivery %i → %i ms', (delivery, want) => {
    expect(backoffDelay(delivery, { initialMs: 100, maxMs: 1_000, multiplier: 2 })).toBe(want);
  });
});
