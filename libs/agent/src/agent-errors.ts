import { WritError } from './contracts.js';

/**
 * Every code the SDK throws: a closed union, stable across minor and patch
 * releases (README, "Semver"). Branch on `error.code` (or `isAgentError`),
 * never on the message or on `instanceof` (a second copy of the package in
 * one process has its own class).
 */
export const AGENT_ERROR_CODES = [
  /** A key file could not be read, or does not hold JSON. */
  'AGENT_KEY_UNREADABLE',
  /** Not a private Ed25519 JWK with a `kid` (or a public one where a private one is needed). */
  'AGENT_KEY_INVALID',
  /** The ActionRequest (or a brief, claim, option) breaks its contract: `details.issues` lists every path. */
  'AGENT_REQUEST_INVALID',
  /** A NATS submission or claim was asked for, but the agent has no NATS connection or server configured. */
  'AGENT_NATS_NOT_CONFIGURED',
  /** The NATS server could not be reached, or refused the credential. */
  'AGENT_NATS_UNREACHABLE',
  /** The bus credential may not publish the subject (an agent's may publish its own ingress subject only). */
  'AGENT_BUS_FORBIDDEN',
  /** JetStream did not store the request (no stream captures the subject, or no ack in time). */
  'AGENT_SUBMIT_NOT_STORED',
  /** Ingress refused the request; `remoteCode` holds ingress's reason (INGRESS_STALE, INGRESS_KEY_UNKNOWN…). */
  'AGENT_SUBMIT_REJECTED',
  /** The HTTP API could not be reached, or answered 5xx / something that is not the expected JSON. */
  'AGENT_API_UNAVAILABLE',
  /** The API refused the bearer token (401): `remoteCode` is the HTTP_AUTH_* reason. */
  'AGENT_API_UNAUTHORIZED',
  /** The API answered 404 for something the caller expected to exist (another principal's ids answer the same). */
  'AGENT_NOT_FOUND',
  /** The API answered another 4xx: `remoteCode` is its code. */
  'AGENT_API_REFUSED',
  /** The outcome was not settled within the timeout; `details.last` is the last status seen. */
  'AGENT_OUTCOME_TIMEOUT',
  /** The receipt is not a valid Receipt, or not the receipt of the action it was fetched for. */
  'AGENT_RECEIPT_INVALID',
  /** `receipt_hash` is not SHA-256 of the RFC 8785 body: the body was changed. */
  'AGENT_RECEIPT_HASH_MISMATCH',
  /** Signed by a key that GET /v1/keys does not hold. */
  'AGENT_RECEIPT_KEY_UNKNOWN',
  /** The receipt's JWS does not verify (tampered, wrong algorithm or typ, malformed). */
  'AGENT_RECEIPT_SIGNATURE_INVALID',
  /** The JWS verifies but signs another body than this receipt's. */
  'AGENT_RECEIPT_PAYLOAD_MISMATCH',
  /** The verifying key is not the receipt's `signer_ref`, or `signature` is not the JWS's signature. */
  'AGENT_RECEIPT_SIGNER_MISMATCH',
  /** The served receipt is not the one `receipt.issued` carries in the task's timeline. */
  'AGENT_RECEIPT_EVENT_MISMATCH',
  /** `prev_receipt_hash` does not link to the task's previous receipt. */
  'AGENT_RECEIPT_CHAIN_BROKEN',
  /** The orchestrator refused the claim request itself; `remoteCode` is its code (ORCHESTRATOR_CLAIM_*). */
  'AGENT_CLAIM_REFUSED',
  /** No service answered on the claim subject in time. */
  'AGENT_SERVICE_UNAVAILABLE',
  /** The client was closed. */
  'AGENT_CLOSED',
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

/**
 * The SDK's error: a stable `code`, an actionable message, structured
 * `details`, the `cause` kept, and `remoteCode` when Writ itself answered with
 * a code (ingress's, the API's, the orchestrator's). It is a `WritError`, so
 * `{ code, message, details }` is its JSON form.
 */
export class AgentError extends WritError<AgentErrorCode> {
  /** The code Writ answered with, when the error is Writ's refusal (e.g. `INGRESS_STALE`, `HTTP_AUTH_EXPIRED`). */
  readonly remoteCode: string | undefined;

  constructor(code: AgentErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown>; remoteCode?: string } = {}) {
    const details = options.remoteCode === undefined ? options.details : { ...options.details, remote_code: options.remoteCode };
    super(code, message, { ...(options.cause === undefined ? {} : { cause: options.cause }), ...(details === undefined ? {} : { details }) });
    this.name = 'AgentError';
    this.remoteCode = options.remoteCode;
  }
}

/** True when `error` is an SDK error with one of `codes` (any code when none is given); works across package copies. */
export function isAgentError<Code extends AgentErrorCode>(error: unknown, ...codes: Code[]): error is AgentError & { readonly code: Code } {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (AGENT_ERROR_CODES as readonly string[]).includes(code) && (codes.length === 0 || (codes as readonly string[]).includes(code));
}
