import { WritError } from '@writ/contracts';

/** Closed set of failures the policy service raises itself (the kernel's POLICY_* and the log's keep their own codes). */
export type PolicyServiceErrorCode =
  /** The command names an attempt the task stream does not hold; dead-lettered. */
  | 'POLICY_ATTEMPT_UNKNOWN'
  /** The command's request is not the one the attempt awaits policy for; dead-lettered. */
  | 'POLICY_REQUEST_MISMATCH'
  /** A profile document (applied, or a dry-run candidate) is invalid; the message lists every issue, `details.issues` holds them. */
  | 'POLICY_PROFILE_INVALID'
  /** A dry run names a profile the store does not hold. */
  | 'POLICY_PROFILE_UNKNOWN'
  /** The signer of a profile application is not a registered principal with role director. */
  | 'POLICY_APPLY_FORBIDDEN'
  /** The application is not a compact EdDSA JWS of the right type by an active key of the principal it names. */
  | 'POLICY_APPLY_SIGNATURE_INVALID'
  /** applied_at is outside the freshness window, or not later than the current record's (a replay). */
  | 'POLICY_APPLY_STALE'
  /** A record in the profile bucket is not a valid PolicyProfileRecord for its key (ignored: the previous version stays). */
  | 'POLICY_RECORD_INVALID'
  /** A record carries no signed application and is not a built-in shipped in the service's code (refused: the previous version, or the built-in, stays). */
  | 'POLICY_RECORD_UNSIGNED'
  /** A record's signed application does not verify with a key its signer held when it was applied (refused). */
  | 'POLICY_RECORD_SIGNATURE_INVALID'
  /** A record's signer is not a registered director (unknown, another role, or an agent): it may not apply policy (refused). */
  | 'POLICY_RECORD_SIGNER_NOT_ALLOWED'
  /** A record is not what its signed application says: another document (content hash), profile, signer or time (refused). */
  | 'POLICY_RECORD_MISMATCH'
  /** A record older than the version in force (applied_at not later, or a built-in after a director's version): a replay (refused). */
  | 'POLICY_RECORD_STALE'
  /** The profile bucket or the log could not be read or written now (retry; the log stays the truth). */
  | 'POLICY_STORE_UNAVAILABLE';

export class PolicyServiceError extends WritError<PolicyServiceErrorCode> {
  constructor(code: PolicyServiceErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'PolicyServiceError';
  }
}
