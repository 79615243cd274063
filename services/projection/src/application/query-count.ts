import { ProjectionError } from './projection-errors.js';

/**
 * An integer query parameter (`after`, `limit`, `since`): `fallback` when absent, else decimal
 * digits within `min`–`max`, refused PROJECTION_REQUEST_INVALID naming the parameter otherwise.
 */
export function parseCount(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `${name} must be an integer from ${min} to ${max}`, { details: { parameter: name } });
  }
  return n;
}
