import { KernelError } from '../shared/kernel-error.js';

/** Closed set of policy failures. A policy *outcome* (deny, require_approval...) is never an error. */
export type PolicyErrorCode =
  /** A profile does not satisfy the `PolicyProfile` schema (or asks for a downgrade the kernel cannot perform). */
  | 'POLICY_PROFILE_INVALID'
  /** No built-in profile has that id. */
  | 'POLICY_PROFILE_UNKNOWN'
  /** The facts passed to evaluation are malformed (an invalid files_owned pattern, a relative workspace root). */
  | 'POLICY_FACTS_INVALID'
  /** An evaluation could not be turned into a valid `PolicyResult` contract. */
  | 'POLICY_RESULT_INVALID';

export class PolicyError extends KernelError<PolicyErrorCode> {}
