/** What a compact JWS claims before anything is verified: never trusted, only used to route and to name the record. */
export interface JwsPeek {
  readonly wellFormed: boolean;
  readonly header: Readonly<Record<string, unknown>> | undefined;
  /** The payload parsed as JSON, when it is JSON. */
  readonly payload: unknown;
  readonly kid: string | undefined;
  readonly alg: string | undefined;
  readonly proposedBy: string | undefined;
  readonly actionRequestId: string | undefined;
}

const SEGMENT = /^[A-Za-z0-9_-]*$/;
const decoder = new TextDecoder('utf-8', { fatal: true });

function decodeJson(segment: string): unknown {
  try {
    return JSON.parse(decoder.decode(Buffer.from(segment, 'base64url'))) as unknown;
  } catch {
    return undefined;
  }
}

function stringField(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' ? field : undefined;
}

/**
 * Splits a compact JWS (`header.payload.signature`, base64url) and reads its
 * header and payload without verifying anything. Well-formed means three
 * non-empty base64url segments whose header is a JSON object.
 */
export function peekCompactJws(raw: string): JwsPeek {
  const parts = raw.split('.');
  const segmentsOk = parts.length === 3 && parts.every((part) => part.length > 0 && SEGMENT.test(part));
  const headerValue = segmentsOk ? decodeJson(parts[0]!) : undefined;
  const header =
    typeof headerValue === 'object' && headerValue !== null && !Array.isArray(headerValue) ? (headerValue as Record<string, unknown>) : undefined;
  const payload = segmentsOk ? decodeJson(parts[1]!) : undefined;
  return {
    wellFormed: header !== undefined,
    header,
    payload,
    kid: stringField(header, 'kid'),
    alg: stringField(header, 'alg'),
    proposedBy: stringField(payload, 'proposed_by'),
    actionRequestId: stringField(payload, 'action_request_id'),
  };
}
