import { z } from 'zod';
import { ActionRequest } from '../action-request.js';
import { Id, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { RiskBand } from '../risk-band.js';
import { FilePath, ResourceName, Text } from '../text.js';

/**
 * Command subjects (`writ.cmd.<service>.<verb>`, captured by WRIT_COMMANDS) and
 * request/reply subjects (`writ.qry.<service>.<name>`, core NATS only: a stream
 * capturing a request subject would answer it with a PubAck first).
 */
export const COMMANDS = Object.freeze({
  ingressSubmitAction: 'writ.qry.ingress.submit-action',
  policyEvaluate: 'writ.cmd.policy.evaluate',
  approvalRequest: 'writ.cmd.approval.request',
  approvalResolve: 'writ.qry.approval.resolve',
  approvalIssueGrant: 'writ.cmd.approval.issue-grant',
  approvalCancel: 'writ.cmd.approval.cancel',
  approvalRevokeGrant: 'writ.qry.approval.revoke-grant',
  approvalRotateKey: 'writ.qry.approval.rotate-key',
  policyApplyProfile: 'writ.qry.policy.apply-profile',
  policyEvaluateDryRun: 'writ.qry.policy.evaluate',
  executorRun: 'writ.cmd.executor.run',
  executorCloseCell: 'writ.cmd.executor.close-cell',
  executorObserve: 'writ.qry.executor.observe',
  receiptIssue: 'writ.cmd.receipt.issue',
});

/** The attempt a command is about. */
const AttemptRef = { task_id: Id, step_id: Id, attempt_id: Id };

/** `writ.qry.ingress.submit-action` (request/reply; what `POST /v1/actions` forwards). */
export const SubmitAction = z.strictObject({
  jws: z.string().min(1).max(256 * 1024),
  idempotency_key: z.string().min(1).max(256),
  principal_id: Id.optional(),
});
export type SubmitAction = z.infer<typeof SubmitAction>;

/** `writ.cmd.policy.evaluate`. */
export const EvaluatePolicy = z.strictObject({
  ...AttemptRef,
  action_request: ActionRequest,
  policy_profile: z.string().min(1).max(128),
  files_owned: z.array(FilePath).max(LIMITS.listItems),
  /** The task's explicit Sacred Scope exceptions (TaskSpec.sacred_exceptions); a sacred path is writable only when the profile allows it too. */
  sacred_exceptions: z.array(FilePath).max(LIMITS.listItems).optional(),
});
export type EvaluatePolicy = z.infer<typeof EvaluatePolicy>;

/** `writ.cmd.approval.request`. */
export const RequestApproval = z.strictObject({
  ...AttemptRef,
  approval_id: Id,
  policy_result_id: Id,
  action_request: ActionRequest,
  requested_by: Id,
  risk_band: RiskBand,
  reason: Text,
});
export type RequestApproval = z.infer<typeof RequestApproval>;

/**
 * `writ.qry.approval.resolve` (request/reply). `resolution_jws` is a compact
 * EdDSA JWS by the resolver over `{ approval_id, decision, resolved_at }`;
 * the approval service checks the signature and the resolver's role.
 */
export const ResolveApproval = z.strictObject({ approval_id: Id, task_id: Id, resolution_jws: z.string().min(1).max(16 * 1024) });
export type ResolveApproval = z.infer<typeof ResolveApproval>;

/** The payload a resolver signs. */
export const ApprovalResolution = z.strictObject({
  approval_id: Id,
  decision: z.enum(['grant', 'deny']),
  resolved_by: Id,
  resolved_at: Timestamp,
  note: Text.optional(),
});
export type ApprovalResolution = z.infer<typeof ApprovalResolution>;

/** `writ.cmd.approval.issue-grant`. */
export const IssueGrant = z.strictObject({
  ...AttemptRef,
  action_request: ActionRequest,
  policy_result_id: Id,
  approval_id: Id.nullable(),
  issued_to: Id,
});
export type IssueGrant = z.infer<typeof IssueGrant>;

/** `writ.cmd.executor.run` (work queue: executors compete for it). */
export const RunAction = z.strictObject({
  ...AttemptRef,
  grant_id: Id,
  grant_jws: z.string().min(1).max(16 * 1024),
  action_request: ActionRequest,
});
export type RunAction = z.infer<typeof RunAction>;

/**
 * `writ.cmd.approval.cancel`: a pending approval must not be resolved any more.
 * `task_ended`: the task reached a terminal state (appends `approval.cancelled`);
 * `input_drift`: a newly bound input changed the action, its risk or its
 * targets (Hermit 16.7; appends `approval.invalidated`, the attempt re-enters
 * policy or is superseded).
 */
export const CancelApproval = z.strictObject({
  ...AttemptRef,
  approval_id: Id,
  cause: z.enum(['task_ended', 'input_drift']),
  reason: Text,
  cancelled_by: Id,
});
export type CancelApproval = z.infer<typeof CancelApproval>;

/** `writ.cmd.receipt.issue`: receipt the attempt as it stands in the log. */
export const IssueReceipt = z.strictObject({ ...AttemptRef, cause: z.enum(['settled', 'policy_denied', 'approval_denied', 'refused']) });
export type IssueReceipt = z.infer<typeof IssueReceipt>;

/**
 * `writ.cmd.executor.close-cell`: the task is over (its terminal event is the
 * reason); the executor removes the task's container and keeps its workspace.
 */
export const CloseCellReason = z.enum(['task.completed', 'task.failed', 'task.cancelled']);
export type CloseCellReason = z.infer<typeof CloseCellReason>;
export const CloseCell = z.strictObject({ task_id: Id, reason: CloseCellReason });
export type CloseCell = z.infer<typeof CloseCell>;

/**
 * `writ.qry.executor.observe` (request/reply): read-only fingerprints of a
 * task's workspace for a state witness (Hermit 16.8); no grant, no side effect.
 */
export const ObserveWorkspace = z.strictObject({
  task_id: Id,
  resources: z.array(ResourceName).min(1).max(LIMITS.targetResources),
});
export type ObserveWorkspace = z.infer<typeof ObserveWorkspace>;

/** The reply: one fingerprint per requested resource, and when the agreeing walk started. */
export const WorkspaceObserved = z.strictObject({
  fingerprints: z.record(ResourceName, z.string().min(1).max(256)),
  observed_at: Timestamp,
});
export type WorkspaceObserved = z.infer<typeof WorkspaceObserved>;
