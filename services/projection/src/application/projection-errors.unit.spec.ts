import { WritError } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { isWritCoded, ProjectionError } from './projection-errors.js';

describe('isWritCoded', () => {
  it('recognises Writ codes and refuses driver codes that would otherwise pass for one', () => {
    expect(isWritCoded(new ProjectionError('PROJECTION_DB_UNAVAILABLE', 'x'))).toBe(true);
    expect(isWritCoded(new WritError('INGRESS_STALE', 'x'))).toBe(true);
    expect(isWritCoded(Object.assign(new Error('refused'), { code: 'P0001' }))).toBe(false);
    expect(isWritCoded(Object.assign(new Error('dup'), { code: '23505' }))).toBe(false);
    expect(isWritCoded(Object.assign(new Error('conn'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isWritCoded(Object.assign(new TypeError('arg'), { code: 'ERR_INVALID_ARG_TYPE' }))).toBe(false);
    expect(isWritCoded('PROJECTION_INTERNAL')).toBe(false);
  });
});
