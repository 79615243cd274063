import { KernelError } from '../shared/kernel-error.js';

/** Closed set of reasons a Step command is refused. */
export type StepErrorCode =
  /** The command needs a step, and none was planned in this stream. */
  | 'STEP_NOT_FOUND'
  /** `plan-step` on a stream that already holds a step. */
  | 'STEP_ALREADY_EXISTS'
  /** The step succeeded, failed, was cancelled or superseded. */
  | 'STEP_TERMINAL'
  /** No edge from the current step state to the one the command asks for. */
  | 'STEP_TRANSITION_NOT_ALLOWED'
  /** Only one mutable attempt per step (Hermit 8.3): close the active one first. */
  | 'STEP_ATTEMPT_ACTIVE'
  /** `max_attempts` attempts were already opened. */
  | 'STEP_ATTEMPTS_EXHAUSTED'
  /** The command names an attempt that is not the step's active attempt. */
  | 'STEP_ATTEMPT_UNKNOWN';

export class StepError extends KernelError<StepErrorCode> {}
