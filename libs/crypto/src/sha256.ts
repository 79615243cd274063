import { hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/**
 * SHA-256 of a UTF-8 string or bytes, as lowercase hex. The one-shot `hash`
 * is several times cheaper than `createHash` for the small inputs of the
 * event-store hot path (one per appended event).
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/**
 * A content version: `sha256:` and the SHA-256 of the value's RFC 8785
 * canonical JSON. Equal content, equal version, wherever it is computed (a
 * policy profile's version in the service and in the CLI).
 */
export function canonicalContentVersion(value: unknown): `sha256:${string}` {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}
