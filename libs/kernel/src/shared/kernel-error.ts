import { WritError } from '@writ/contracts';

/** Codes shared by every decider: a command whose envelope (type, metadata) is malformed. */
export type KernelCommandErrorCode = 'KERNEL_COMMAND_INVALID';

/**
 * The one error class of the kernel: a `WritError` whose `code` comes from the
 * closed union of the context that raised it (`TASK_*`, `STEP_*`, `ATTEMPT_*`,
 * `APPROVAL_*`, `GRANT_*`, `POLICY_*`, `KERNEL_*`). Guards check `code` with
 * `hasErrorCode`, never `instanceof`.
 *
 * Style: `decide` THROWS a KernelError when a command is invalid in the current
 * state (a broken precondition, before any event exists). Every expected
 * outcome, failures included (`grant.refused`, `approval.expired`,
 * `attempt.policy_denied`), is an event. Pure checks that callers branch on
 * (`checkGrantUse`, `evaluatePolicy`) return values and never throw for
 * untrusted input.
 */
export class KernelError<Code extends string = string> extends WritError<Code> {
  constructor(code: Code, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'KernelError';
  }
}
