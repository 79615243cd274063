import { WritError } from '@writ/contracts';

/** Closed set of failures the orchestrator raises itself (the log's and the bus's keep their own codes). */
export type OrchestratorErrorCode =
  /** The delivered event is not yet in the task stream as read (a stale read); retried. */
  | 'ORCHESTRATOR_LOG_BEHIND'
  /** The task stream has no `task.created`: the event cannot be placed; dead-lettered. */
  | 'ORCHESTRATOR_TASK_UNKNOWN'
  /** A `grant.issued` carries no compact JWS, so the executor could not verify it; dead-lettered. */
  | 'ORCHESTRATOR_GRANT_JWS_MISSING'
  /** The kernel refused the transition the orchestrator planned (its view and the kernel disagree); retried, then dead-lettered. */
  | 'ORCHESTRATOR_TRANSITION_REFUSED';

export class OrchestratorError extends WritError<OrchestratorErrorCode> {
  constructor(code: OrchestratorErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'OrchestratorError';
  }
}
