import { hash } from 'node:crypto';

/**
 * SHA-256 of a UTF-8 string or bytes, as lowercase hex. The one-shot `hash`
 * is several times cheaper than `createHash` for the small inputs of the
 * event-store hot path (one per appended event).
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}
