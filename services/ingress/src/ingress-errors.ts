import { WritError } from '@writ/contracts';

/**
 * Failures of the ingress service itself (not rejections: a refused request
 * is an expected outcome and becomes an `ingress.rejected` event with an
 * `IngressRejectionCode`).
 */
export type IngressErrorCode =
  /** A resumed ingress can no longer be completed: the task changed under it after part of its events were stored. */
  | 'INGRESS_INTAKE_CONFLICT'
  /** The ingress log holds something ingress never writes (no `ingress.received` first, an unreadable claim). */
  | 'INGRESS_LOG_INCONSISTENT'
  /** A consumer or responder could not be set up at start-up. */
  | 'INGRESS_SETUP_FAILED'
  /** A participant stream kept changing while a seed document was being recorded (retry). */
  | 'INGRESS_PARTICIPANT_BUSY'
  /** The participant TTL timer names a seed that was never spawned (dead-lettered). */
  | 'INGRESS_PARTICIPANT_UNKNOWN'
  /** A seed document larger than ingress records (MAX_SEED_DOCUMENT_BYTES): refused before anything is appended. */
  | 'INGRESS_SEED_DOCUMENT_TOO_LARGE'
  /** The artifact bucket could not be opened or read. */
  | 'INGRESS_ARTIFACTS_UNAVAILABLE'
  /** An administrative request (principal registration) whose JWS does not verify under the signer's keys, or is not the contract. */
  | 'INGRESS_ADMIN_SIGNATURE_INVALID'
  /** The signer may not administer (not an operator, an agent, unknown), or the request targets a service principal. */
  | 'INGRESS_ADMIN_FORBIDDEN'
  /** The administrative request was signed too far from now (a replay, or a skewed clock). */
  | 'INGRESS_ADMIN_STALE'
  /** The registration contradicts the principal the log describes (type, roles, a revoked or reused kid). */
  | 'INGRESS_PRINCIPAL_CONFLICT'
  /** A free-form message (writ say) whose JWS does not verify under the signer's active keys, is not an IngressMessageSubmission, or whose signer is unknown: nothing recorded. */
  | 'INGRESS_MESSAGE_SIGNATURE_INVALID'
  /** The message was signed too far from now (a replay, or a skewed clock): sign it again. */
  | 'INGRESS_MESSAGE_STALE'
  /** The explicit task ref names no task the signer may send a message about (unknown, or another principal's and the signer no director). */
  | 'INGRESS_MESSAGE_TASK_UNKNOWN'
  /** reply_to_ref names no message of this conversation of the signer's. */
  | 'INGRESS_MESSAGE_REPLY_UNKNOWN'
  /** The message_id was first sent with another text or target: a new message needs a new message_id. */
  | 'INGRESS_MESSAGE_REUSED'
  /** The conversation kept changing while the message was recorded (a lost race, bounded retries): send it again with the same message_id. */
  | 'INGRESS_MESSAGE_BUSY';

export class IngressError extends WritError<IngressErrorCode> {
  constructor(code: IngressErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'IngressError';
  }
}
