import { WritError } from '@writ/contracts';
import type { ApprovalErrorCode, GrantErrorCode, KernelCommandErrorCode } from '@writ/kernel';
import { RESOLUTION_AUTHORITY_CODES, type ResolutionAuthorityCode } from '@writ/runtime';

/** Codes the approval service itself raises (the kernel's approval and grant codes pass through unchanged). */
export type ApprovalServiceCode =
  /** The task stream holds no approval with this id (or the task does not exist). */
  | 'APPROVAL_NOT_FOUND'
  /** The resolver is unknown, lacks the director role, or requested the action itself. */
  | 'APPROVAL_RESOLVER_NOT_ALLOWED'
  /** `resolution_jws` is not a compact EdDSA JWS by one of the resolver's active keys. */
  | 'APPROVAL_SIGNATURE_INVALID'
  /** The approval was already granted, denied, expired, cancelled or invalidated. */
  | 'APPROVAL_NOT_PENDING'
  /** The signed resolution names another approval than the request. */
  | 'APPROVAL_RESOLUTION_MISMATCH'
  /** A command names a task with no events: nothing to approve or grant in. */
  | 'APPROVAL_TASK_NOT_FOUND'
  /** The approval id is already used by another attempt of the task. */
  | 'APPROVAL_ID_CONFLICT'
  /** issue-grant names an approval that is not granted (or belongs to another attempt). */
  | 'APPROVAL_NOT_GRANTED'
  /** issue-grant cites no policy result of this attempt that allows the action (directly or through the approval). */
  | 'APPROVAL_AUTHORITY_MISSING'
  /**
   * issue-grant renewal `n`: the grant it renews is missing, was revoked, or a use of it
   * was claimed and not given back; only a grant that expired unused is renewed.
   */
  | 'APPROVAL_RENEWAL_REFUSED'
  /**
   * issue-grant renewal `n`: the grant it renews has not expired yet on this service's clock
   * and no executor refused it as expired. Retried with backoff (it expires meanwhile).
   */
  | 'APPROVAL_GRANT_STILL_LIVE'
  /**
   * The state witness policy requires could not be observed: the executor did not answer
   * (timeout, no responder) or found the workspace changing. Retried with backoff; no
   * approval is recorded, and no grant resolved, without the witness it needs.
   */
  | 'APPROVAL_WITNESS_UNAVAILABLE'
  /** More distinct resources than a state witness may fingerprint (`LIMITS.targetResources`). */
  | 'APPROVAL_WITNESS_TOO_LARGE'
  /** revoke-grant / rotate-key: the signer is unknown, lacks the director role, is an agent, or (revoke) proposed the granted action. */
  | 'APPROVAL_SIGNER_NOT_ALLOWED'
  /** A signed revocation or rotation is older or newer than WRIT_APPROVAL_FRESHNESS_SECONDS allows (a replay, or a wrong clock). */
  | 'APPROVAL_SIGNED_REQUEST_STALE'
  /** The signed revocation names another grant or task than the request; the signed rotation names another service. */
  | 'APPROVAL_SIGNED_REQUEST_MISMATCH'
  /** revoke-grant: the task stream holds no grant with this id. */
  | 'APPROVAL_GRANT_NOT_FOUND'
  /**
   * The policy profile bucket (`WRIT_POLICY_BUCKET`) is missing, unreadable or holds a record that
   * is not a PolicyProfileRecord: the profile version cannot be compared (Hermit 19.6), so nothing
   * is granted and the approval stays pending. Deploy / repair the policy service, then retry.
   */
  | 'APPROVAL_POLICY_UNAVAILABLE'
  /** The approval packet could not be stored in the artifact bucket; retried with backoff, nothing is recorded without it. */
  | 'APPROVAL_ARTIFACT_UNAVAILABLE'
  /** The log or the bus did not answer, or kept conflicting; retry later. */
  | 'APPROVAL_UNAVAILABLE';

/**
 * Every code the service's handlers raise or reply with: its own, the kernel's, and the
 * authority check of a recorded director's resolution (APPROVAL_RESOLUTION_*, `@writ/runtime`).
 */
export type ApprovalCode = ApprovalServiceCode | ApprovalErrorCode | GrantErrorCode | KernelCommandErrorCode | ResolutionAuthorityCode | 'CONTRACT_INVALID';

export class ApprovalServiceError extends WritError<ApprovalServiceCode> {
  constructor(code: ApprovalServiceCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'ApprovalServiceError';
  }
}

/**
 * Codes that can never succeed on redelivery: the bus dead-letters them at
 * once (with the reason) instead of retrying. Everything else keeps the bus's
 * table: EVENTSTORE_CONFLICT retries soon, the rest backs off.
 */
export const TERMINAL_CODES: readonly ApprovalCode[] = Object.freeze([
  'APPROVAL_TASK_NOT_FOUND',
  'APPROVAL_ID_CONFLICT',
  'APPROVAL_NOT_GRANTED',
  'APPROVAL_AUTHORITY_MISSING',
  'APPROVAL_RENEWAL_REFUSED',
  'APPROVAL_WITNESS_TOO_LARGE',
  'APPROVAL_EXPIRY_INVALID',
  'GRANT_CLAIMS_INVALID',
  'GRANT_AUTHORITY_MISSING',
  'GRANT_EXPIRED',
  'KERNEL_COMMAND_INVALID',
  // A recorded resolution's authority never changes on redelivery: it is refused for good.
  ...RESOLUTION_AUTHORITY_CODES,
]);
