import { WritError } from '@writ/contracts';

/** Closed set of failures the policy service raises itself (the kernel's POLICY_* and the log's keep their own codes). */
export type PolicyServiceErrorCode =
  /** The command names an attempt the task stream does not hold; dead-lettered. */
  | 'POLICY_ATTEMPT_UNKNOWN'
  /** The command's request is not the one the attempt awaits policy for; dead-lettered. */
  | 'POLICY_REQUEST_MISMATCH';

export class PolicyServiceError extends WritError<PolicyServiceErrorCode> {
  constructor(code: PolicyServiceErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'PolicyServiceError';
  }
}
