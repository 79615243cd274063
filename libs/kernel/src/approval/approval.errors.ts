import { KernelError } from '../shared/kernel-error.js';

/** Closed set of reasons an Approval command is refused. */
export type ApprovalErrorCode =
  /** The command needs an approval, and none was requested in this stream. */
  | 'APPROVAL_NOT_FOUND'
  /** `request-approval` on a stream that already holds an approval. */
  | 'APPROVAL_ALREADY_REQUESTED'
  /** Grant, deny, expire or cancel of an approval that is no longer pending: an approval is resolved at most once. */
  | 'APPROVAL_NOT_PENDING'
  /** Invalidation of an approval that is already denied, expired, cancelled or invalidated. */
  | 'APPROVAL_TERMINAL'
  /** The resolver lacks the `director` role, or is the principal that requested the action. */
  | 'APPROVAL_RESOLVER_NOT_ALLOWED'
  /** The requested expiry is not after `now`. */
  | 'APPROVAL_EXPIRY_INVALID'
  /** `expire-approval` before the approval's `expires_at`. */
  | 'APPROVAL_NOT_EXPIRED'
  /** The approval captured a state witness, and the grant does not bring current fingerprints to compare. */
  | 'APPROVAL_WITNESS_MISSING'
  /** The approval answers a policy result, and the grant does not bring the policy versions to compare (Hermit 19.6). */
  | 'APPROVAL_POLICY_UNCHECKED';

export class ApprovalError extends KernelError<ApprovalErrorCode> {}
