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
  | 'ORCHESTRATOR_TRANSITION_REFUSED'
  // Claims (request/reply, docs/task-claims.md): the claimant gets these codes.
  /** The claim is not a compact JWS signed by an active key of the principal it names (forged, tampered, revoked key, wrong typ). */
  | 'ORCHESTRATOR_CLAIM_SIGNATURE_INVALID'
  /** The signer is not a registered principal, or not the task's owner: only the task's agent claims for it. */
  | 'ORCHESTRATOR_CLAIM_SIGNER_NOT_ALLOWED'
  /** The claim was signed more than WRIT_CLAIM_FRESHNESS_SECONDS away from now: sign it again. */
  | 'ORCHESTRATOR_CLAIM_STALE'
  /** The signed claim names another task than the request. */
  | 'ORCHESTRATOR_CLAIM_MISMATCH'
  /** No task with this id. */
  | 'ORCHESTRATOR_CLAIM_TASK_UNKNOWN'
  /** A done claim or correction for a task not created from a brief: there is no verify command to hold it to. */
  | 'ORCHESTRATOR_TASK_NOT_BRIEFED'
  /** A correction names a done claim the task does not hold. */
  | 'ORCHESTRATOR_CLAIM_UNKNOWN'
  // Knowledge requests (request/reply, issue 17): working state revisions and belief changes. The kernel's
  // KNOWLEDGE_* codes (TOO_LARGE, REVISION_CONFLICT, TRUST_TIER_UNSUPPORTED, ...) reach the requester as they are.
  /** The request is not a compact JWS signed by an active key of the principal it names, with its kind's typ. */
  | 'ORCHESTRATOR_KNOWLEDGE_SIGNATURE_INVALID'
  /** The signer is not a registered principal, or neither the task's owner nor a director. */
  | 'ORCHESTRATOR_KNOWLEDGE_SIGNER_NOT_ALLOWED'
  /** The request was signed more than WRIT_CLAIM_FRESHNESS_SECONDS away from now: sign it again. */
  | 'ORCHESTRATOR_KNOWLEDGE_STALE'
  /** The signed request names another task than the request. */
  | 'ORCHESTRATOR_KNOWLEDGE_MISMATCH'
  /** No task with this id. */
  | 'ORCHESTRATOR_KNOWLEDGE_TASK_UNKNOWN'
  /** The request_id was used before for another change (an idempotency key answers only the request it was made for): use a new one. */
  | 'ORCHESTRATOR_KNOWLEDGE_REQUEST_REUSED'
  /** The log could not be read or written now, or the task kept changing: retry. */
  | 'ORCHESTRATOR_UNAVAILABLE'
  /** An attempt's context pack could not be stored in the artifact bucket now; the task event is retried (the governed path went on). */
  | 'ORCHESTRATOR_CONTEXT_PACK_STORE_FAILED';

export class OrchestratorError extends WritError<OrchestratorErrorCode> {
  constructor(code: OrchestratorErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'OrchestratorError';
  }
}
