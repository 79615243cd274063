import { KernelError } from '../shared/kernel-error.js';

/** Closed set of reasons a StepAttempt command is refused. */
export type AttemptErrorCode =
  /** The command needs an attempt, and none was created in this stream. */
  | 'ATTEMPT_NOT_FOUND'
  /** `create-attempt` on a stream that already holds an attempt. */
  | 'ATTEMPT_ALREADY_EXISTS'
  /** The attempt succeeded, failed, was cancelled or superseded: nothing follows; a retry is a new attempt. */
  | 'ATTEMPT_TERMINAL'
  /** The attempt state machine (Hermit 12.3, `ATTEMPT_TRANSITIONS`) has no such edge from the current state. */
  | 'ATTEMPT_TRANSITION_NOT_ALLOWED'
  /** The submitted or rewritten ActionRequest is not a valid contract, or belongs to another task. */
  | 'ATTEMPT_REQUEST_INVALID'
  /** A policy result that cannot drive the attempt: require_approval without an approval id, downgrade without a rewritten request. */
  | 'ATTEMPT_POLICY_RESULT_INVALID'
  /** The approval resolution names an approval other than the one the attempt waits for. */
  | 'ATTEMPT_APPROVAL_MISMATCH'
  /** Policy required a state witness and the granted approval does not carry its revalidation (Hermit 12.4, 16.8). */
  | 'ATTEMPT_WITNESS_NOT_VALIDATED'
  /** A live grant is already attached: a duplicate grant is not minted (Hermit 19.2). */
  | 'ATTEMPT_GRANT_ALREADY_ATTACHED'
  /** Execution needs an attached grant (no side effect without a grant). */
  | 'ATTEMPT_GRANT_MISSING'
  /** Execution names a grant other than the attached one. */
  | 'ATTEMPT_GRANT_MISMATCH'
  /** The grant expires at or before `now` (Hermit 19.6). */
  | 'ATTEMPT_GRANT_EXPIRED'
  /**
   * A renewal may not replace the executing attempt's grant: a use of it is in flight or may
   * have run (completed, errored, unknown), or the grant was revoked (never renewed).
   */
  | 'ATTEMPT_RENEWAL_NOT_ALLOWED'
  /** An unknown-outcome receipt for an attempt whose outcome is known (or already receipted). */
  | 'ATTEMPT_OUTCOME_NOT_UNCERTAIN'
  /** An uncertain outcome is settled only on evidence (Hermit 19.3, 19.4). */
  | 'ATTEMPT_RESOLUTION_EVIDENCE_MISSING';

export class AttemptError extends KernelError<AttemptErrorCode> {}
