import { describe, expect, it } from 'vitest';
import { JetStreamApiError } from '@nats-io/jetstream';
import { errors as natsErrors } from '@nats-io/transport-node';
import { ContractError } from '@writ/contracts';
import { EventStoreError, fromNatsError, isEventStoreError } from './eventstore-errors.js';

const apiError = (errCode: number): JetStreamApiError => new JetStreamApiError({ code: 400, err_code: errCode, description: 'from the server' });

describe('fromNatsError: the one mapping table from client failures to store codes', () => {
  it.each([
    { note: 'maximum bytes exceeded', error: apiError(10077), code: 'EVENTSTORE_STREAM_FULL' },
    { note: 'maximum messages exceeded', error: apiError(10076), code: 'EVENTSTORE_STREAM_FULL' },
    { note: 'storage resources exceeded', error: apiError(10047), code: 'EVENTSTORE_STREAM_FULL' },
    { note: 'message size over the stream limit', error: apiError(10054), code: 'EVENTSTORE_EVENT_TOO_LARGE' },
    { note: 'payload over the server max_payload', error: natsErrors.InvalidArgumentError.format('payload', 'max_payload size exceeded'), code: 'EVENTSTORE_EVENT_TOO_LARGE' },
    { note: 'stream not found', error: apiError(10059), code: 'EVENTSTORE_UNAVAILABLE' },
    { note: 'a request timeout', error: new natsErrors.TimeoutError(), code: 'EVENTSTORE_UNAVAILABLE' },
    { note: 'a closed connection', error: new natsErrors.ClosedConnectionError(), code: 'EVENTSTORE_UNAVAILABLE' },
    { note: 'no responders', error: new Error('jetstream is not enabled', { cause: new natsErrors.NoRespondersError('x') }), code: 'EVENTSTORE_UNAVAILABLE' },
    { note: 'anything else', error: 'a thrown string', code: 'EVENTSTORE_UNAVAILABLE' },
  ])('maps $note to $code, keeping the cause', ({ error, code }) => {
    // given a client failure during an append, when it is mapped
    const mapped = fromNatsError(error, { operation: 'append', subject: 'writ.evt.task.t1', appended: [] });
    // then it carries a store code and the original as its cause
    expect(mapped.code).toBe(code);
    expect(mapped.cause).toBe(error);
  });

  it('passes a store error through unchanged', () => {
    const original = new EventStoreError('EVENTSTORE_CONFLICT', 'lost', { subject: 's', expectedSeq: 1, actualSeq: 2, appended: [] });
    expect(fromNatsError(original, { operation: 'append' })).toBe(original);
  });
});

describe('isEventStoreError', () => {
  it('narrows by code, across copies of the class', () => {
    // given a store error and a look-alike from another package copy
    const real = new EventStoreError('EVENTSTORE_CONFLICT', 'lost', { subject: 's', expectedSeq: 1, actualSeq: 2, appended: [] });
    const lookAlike = { code: 'EVENTSTORE_CONFLICT', details: {} };
    // then both are recognised by code, and the code filter applies
    expect(isEventStoreError(real, 'EVENTSTORE_CONFLICT')).toBe(true);
    expect(isEventStoreError(lookAlike, 'EVENTSTORE_CONFLICT')).toBe(true);
    expect(isEventStoreError(real, 'EVENTSTORE_UNAVAILABLE')).toBe(false);
    expect(isEventStoreError(real)).toBe(true);
  });

  it('does not claim other contexts\' errors', () => {
    expect(isEventStoreError(new ContractError('EventDraft', []))).toBe(false);
    expect(isEventStoreError(new Error('x'))).toBe(false);
    expect(isEventStoreError(null)).toBe(false);
  });

  it('serializes as { code, message, details } for request/reply', () => {
    const error = new EventStoreError('EVENTSTORE_REQUEST_INVALID', 'empty', { reason: 'empty' });
    expect(error.toJSON()).toEqual({ code: 'EVENTSTORE_REQUEST_INVALID', message: 'empty', details: { reason: 'empty' } });
  });
});
