import { WritError } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { ProblemDetails } from '@writ/contracts';
import { ProjectionError } from '../../application/projection-errors.js';
import { statusForCode, toHttpError, toProblem } from './http-status.js';

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

  it('given any failure, when answered, then it is RFC 9457 problem details keeping the code, message as an alias of detail', () => {
    // given
    const refused = new ProjectionError('PROJECTION_CURSOR_INVALID', 'cursor refused', { details: { parameter: 'cursor' } });
    // when
    const { status, problem } = toProblem(refused, '/v1/tasks');
    // then
    expect(status).toBe(400);
    expect(problem).toEqual({
      type: '/v1/problems/PROJECTION_CURSOR_INVALID',
      title: 'Projection cursor invalid',
      status: 400,
      detail: 'cursor refused',
      instance: '/v1/tasks',
      code: 'PROJECTION_CURSOR_INVALID',
      message: 'cursor refused',
      parameter: 'cursor',
    });
    expect(ProblemDetails.safeParse(problem).success).toBe(true);
    expect(toProblem(new TypeError('secret place')).problem).toMatchObject({ status: 500, code: 'PROJECTION_INTERNAL', type: '/v1/problems/PROJECTION_INTERNAL' });
    expect(ProblemDetails.safeParse(toProblem({ getStatus: () => 404 }).problem).success).toBe(true);
  });
});
