import { ContractError, WritError } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { toHandlerFailure } from './handler-failure.js';

describe('toHandlerFailure', () => {
  it('keeps a Writ error code', () => {
    expect(toHandlerFailure(new ContractError('ActionRequest', [{ path: 'a', code: 'x', message: 'bad' }]))).toMatchObject({
      code: 'CONTRACT_INVALID',
    });
    expect(toHandlerFailure(new WritError('EVENTSTORE_CONFLICT', 'lost the race'))).toEqual({ code: 'EVENTSTORE_CONFLICT', message: 'lost the race' });
  });

  it('keeps a code carried by a plain object (an RpcException payload)', () => {
    expect(toHandlerFailure({ code: 'GRANT_EXPIRED', message: 'too late' })).toEqual({ code: 'GRANT_EXPIRED', message: 'too late' });
  });

  it.each([
    ['a plain Error', new Error('bug'), 'bug'],
    ["Nest's default filter output", { status: 'error', message: 'Internal server error' }, 'Internal server error'],
    ['a string', 'nope', 'nope'],
    ['an error with a numeric code', Object.assign(new Error('api'), { code: 10071 }), 'api'],
  ])('maps %s to BUS_HANDLER_FAILED', (_what, thrown, message) => {
    expect(toHandlerFailure(thrown)).toEqual({ code: 'BUS_HANDLER_FAILED', message });
  });
});
