import { WritError } from '@writ/contracts';
import { RESOLUTION_AUTHORITY_CODES, type ResolutionAuthorityCode } from '@writ/runtime';

/** Codes the receipt service raises while issuing. */
export type ReceiptServiceCode =
  /** The command names a task with no events. */
  | 'RECEIPT_TASK_NOT_FOUND'
  /** The task holds no ActionRequest for the attempt (no `attempt.awaiting_policy`): nothing to receipt. */
  | 'RECEIPT_ATTEMPT_NOT_FOUND'
  /** A `settled` receipt for an attempt that was never dispatched under a grant. */
  | 'RECEIPT_GRANT_NOT_FOUND'
  /** An `approval_resolved` command names an approval the task does not hold, or one not resolved (yet). */
  | 'RECEIPT_APPROVAL_NOT_FOUND'
  /** The log or the bus did not answer; retried with backoff. */
  | 'RECEIPT_UNAVAILABLE'
  /** A signed request (a key rotation) is not a JWS by an active key of the principal it names. */
  | 'RECEIPT_REQUEST_SIGNATURE_INVALID'
  /** The signer of a key rotation is not a director, or is an agent. */
  | 'RECEIPT_SIGNER_NOT_ALLOWED'
  /** A key rotation signed too far from now (`WRIT_RECEIPT_FRESHNESS_SECONDS`). */
  | 'RECEIPT_SIGNED_REQUEST_STALE'
  /** A key rotation signed for another service. */
  | 'RECEIPT_SIGNED_REQUEST_MISMATCH';

export class ReceiptServiceError extends WritError<ReceiptServiceCode> {
  constructor(code: ReceiptServiceCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'ReceiptServiceError';
  }
}

/** Codes that can never succeed on redelivery: dead-lettered at once with the reason (a refused resolution stays refused). */
export const TERMINAL_CODES: readonly (ReceiptServiceCode | ResolutionAuthorityCode)[] = Object.freeze([
  'RECEIPT_TASK_NOT_FOUND',
  'RECEIPT_ATTEMPT_NOT_FOUND',
  'RECEIPT_GRANT_NOT_FOUND',
  'RECEIPT_APPROVAL_NOT_FOUND',
  ...RESOLUTION_AUTHORITY_CODES,
]);
