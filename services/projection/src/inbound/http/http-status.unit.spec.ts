import { WritError } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { statusForCode, toHttpError } from './http-status.js';

describe('HTTP status table', () => {
  it.each([
    ['PROJECTION_NOT_FOUND', 404],
    ['PROJECTION_REQUEST_INVALID', 400],
    ['PROJECTION_UPSTREAM_TIMEOUT', 504],
    ['CONTRACT_INVALID', 400],
    ['INGRESS_SIGNATURE_INVALID', 401],
    ['INGRESS_PRINCIPAL_MISMATCH', 403],
    ['INGRESS_TASK_TERMINAL', 409],
    ['APPROVAL_RESOLVER_NOT_ALLOWED', 403],
    ['APPROVAL_NOT_PENDING', 409],
    ['APPROVAL_SOMETHING_NEW', 422],
    ['ATTEMPT_NOT_FOUND', 404],
    ['EVENTSTORE_UNAVAILABLE', 503],
    ['EVENTSTORE_CONFLICT', 409],
    ['SOMETHING_ELSE', 502],
  ])('%s → %i', (code, status) => {
    expect(statusForCode(code)).toBe(status);
  });

  it('keeps a coded error as { code, message }, redacted', () => {
    const error = new WritError('INGRESS_STALE', 'too old; token=abc123');
    expect(toHttpError(error)).toEqual({ status: 422, body: { code: 'INGRESS_STALE', message: 'too old; token=[REDACTED]' } });
  });

  it('maps framework errors to stable codes and never leaks an unexpected error', () => {
    expect(toHttpError({ getStatus: () => 404, message: 'Cannot GET /x' }).body.code).toBe('PROJECTION_ROUTE_NOT_FOUND');
    expect(toHttpError({ status: 413, type: 'entity.too.large' }).body.code).toBe('PROJECTION_REQUEST_TOO_LARGE');
    expect(toHttpError({ getStatus: () => 400 }).body.code).toBe('PROJECTION_REQUEST_INVALID');
    expect(toHttpError(new TypeError('x is undefined at secret place'))).toEqual({
      status: 500,
      body: { code: 'PROJECTION_INTERNAL', message: 'unexpected error; see the projection service logs' },
    });
  });
});
