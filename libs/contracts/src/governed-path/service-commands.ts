import { z } from 'zod';
import { ActionRequest } from '../action-request.js';
import { Id, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { isPresent, withRules } from '../rules.js';
import { RiskBand } from '../risk-band.js';
import { FilePath, ResourceName, Text } from '../text.js';

/**
 * Command subjects (`writ.cmd.<service>.<verb>`, captured by WRIT_COMMANDS) and
 * request/reply subjects (`writ.qry.<service>.<name>`, core NATS only: a stream
 * capturing a request subject would answer it with a PubAck first).
 */
export const COMMANDS = Object.freeze({
  ingressSubmitAction: 'writ.qry.ingress.submit-action',
  ingressRegisterPrincipal: 'writ.qry.ingress.register-principal',
  ingressRevokePrincipal: 'writ.qry.ingress.revoke-principal',
  ingressSubmitMessage: 'writ.qry.ingress.submit-message',
  ingressSpawnVerify: 'writ.qry.ingress.spawn-verify',
  ingressHeartbeatVerify: 'writ.qry.ingress.heartbeat-verify',
  ingressRetireIngest: 'writ.qry.ingress.retire-ingest',
  ingressCrashReport: 'writ.qry.ingress.crash-report',
  ingressParticipantCheck: 'writ.qry.ingress.participant-check',
  ingressParticipantExpire: 'writ.cmd.ingress.participant-expire',
  policyEvaluate: 'writ.cmd.policy.evaluate',
  approvalRequest: 'writ.cmd.approval.request',
  approvalResolve: 'writ.qry.approval.resolve',
  approvalIssueGrant: 'writ.cmd.approval.issue-grant',
  approvalCancel: 'writ.cmd.approval.cancel',
  approvalExpire: 'writ.cmd.approval.expire',
  approvalRevokeGrant: 'writ.qry.approval.revoke-grant',
  approvalRotateKey: 'writ.qry.approval.rotate-key',
  policyApplyProfile: 'writ.qry.policy.apply-profile',
  policyEvaluateDryRun: 'writ.qry.policy.evaluate',
  executorRun: 'writ.cmd.executor.run',
  executorCloseCell: 'writ.cmd.executor.close-cell',
  executorObserve: 'writ.qry.executor.observe',
  executorResolveOutcome: 'writ.qry.executor.resolve-outcome',
  executorResurrectCell: 'writ.qry.executor.resurrect-cell',
  executorRenewCell: 'writ.qry.executor.renew-cell',
  receiptIssue: 'writ.cmd.receipt.issue',
  orchestratorClaimDone: 'writ.qry.orchestrator.claim-done',
  orchestratorClaimBlocked: 'writ.qry.orchestrator.claim-blocked',
  orchestratorClaimCorrection: 'writ.qry.orchestrator.claim-correction',
  orchestratorReviseWorkingState: 'writ.qry.orchestrator.revise-working-state',
  orchestratorChangeBelief: 'writ.qry.orchestrator.change-belief',
  receiptTreeHead: 'writ.qry.receipt.tree-head',
  receiptInclusionProof: 'writ.qry.receipt.inclusion-proof',
  receiptConsistencyProof: 'writ.qry.receipt.consistency-proof',
  receiptRotateKey: 'writ.qry.receipt.rotate-key',
  projectionRebuild: 'writ.qry.projection.rebuild',
  projectionRebuildStatus: 'writ.qry.projection.rebuild-status',
});

/**
 * An executor host's own copy of an executor subject: `<subject>.host.<host_id>`, e.g.
 * `writ.cmd.executor.run.host.host-3f9a…`. A task's cell lives on one Docker host; work for it
 * that reaches another executor is forwarded here, to the host that holds the cell
 * (services/executor README, "Several hosts"). Run and close-cell copies are captured by
 * WRIT_COMMANDS like their base subject, yet never match the shared consumers' filters
 * (a filter without wildcards matches its subject only); the observe copy is request/reply.
 */
export function executorHostSubject(subject: string, hostId: string): string {
  return `${subject}.host.${hostId}`;
}

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

/** The largest compact JWS of a director's resolution (on the wire and on the resolution event). */
export const RESOLUTION_JWS_MAX = 16 * 1024;

/** A compact EdDSA JWS by a director over an ApprovalResolution. */
export const ResolutionJws = z.string().min(1).max(RESOLUTION_JWS_MAX);

/**
 * `writ.qry.approval.resolve` (request/reply). `resolution_jws` is a compact
 * EdDSA JWS by the resolver over an ApprovalResolution; the approval service
 * checks the signature, the resolver's role and that `packet_hash` is the
 * approval's packet, then records the JWS on the resolution event, where
 * everyone who acts on the resolution checks it again.
 */
export const ResolveApproval = z.strictObject({ approval_id: Id, task_id: Id, resolution_jws: ResolutionJws });
export type ResolveApproval = z.infer<typeof ResolveApproval>;

/**
 * `sha256:<hex>` of the approval packet a director decided on: the SHA-256 of the
 * RFC 8785 packet document (`{ format: "writ.approval-packet/1", packet, state_witness? }`),
 * the hex that the approval's `approval_packet_ref` (`artifact:sha256:<hex>`) names.
 */
export const ApprovalPacketHash = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 lowercase hex> (the approval packet document hash)');
export type ApprovalPacketHash = z.infer<typeof ApprovalPacketHash>;

/**
 * The payload a resolver signs (`writ approve|deny`). `packet_hash` binds the
 * decision to the packet the director saw: a resolution over any other packet
 * (changed, or another approval's) is refused.
 */
export const ApprovalResolution = z
  .strictObject({
    approval_id: Id,
    decision: z.enum(['grant', 'deny']),
    packet_hash: ApprovalPacketHash,
    resolved_by: Id,
    resolved_at: Timestamp,
    note: Text.optional(),
  })
  .meta({ title: 'ApprovalResolution', description: "A director's signed grant or denial of one approval, over the hash of the packet the director saw." });
export type ApprovalResolution = z.infer<typeof ApprovalResolution>;

/**
 * How many times an attempt's grant may be renewed after it expired unused (its run command
 * waited in a backlog longer than the grant lived): past it, the attempt ends refused.
 */
export const GRANT_RENEWALS_MAX = 3;

/** `writ.cmd.approval.issue-grant`. */
export const IssueGrant = z.strictObject({
  ...AttemptRef,
  action_request: ActionRequest,
  policy_result_id: Id,
  approval_id: Id.nullable(),
  issued_to: Id,
  /**
   * Renewal `n` of the attempt's grant: the grant of renewal `n - 1` (the first grant for 1)
   * expired before any use of it started (none was claimed, or each claimed one was proven
   * never started and released). Minted on the same authority, checked again; absent
   * for the first grant (so its id is what it always was).
   */
  renewal: z.int().min(1).max(GRANT_RENEWALS_MAX).optional(),
});
export type IssueGrant = z.infer<typeof IssueGrant>;

/** `writ.cmd.executor.run` (work queue: executors compete for it). */
export const RunAction = z.strictObject({
  ...AttemptRef,
  grant_id: Id,
  grant_jws: z.string().min(1).max(16 * 1024),
  action_request: ActionRequest,
  /**
   * The run of the attempt under this grant, from 2 when an earlier use was proven never to
   * have started (`not_run`): another command, so another use id, claimed and checked anew.
   * Absent on the first run (so its use id is what it always was).
   */
  run_no: z.int().min(2).max(16).optional(),
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

/**
 * `writ.cmd.approval.expire`: the approval service's own durable timer. It is
 * published when `approval.requested` is appended and held on the server
 * (nak with delay) until `expires_at`; then a still pending approval gets
 * `approval.expired`. `expires_at` only schedules: the log's is authoritative.
 */
export const ExpireApproval = z.strictObject({ ...AttemptRef, approval_id: Id, expires_at: Timestamp });
export type ExpireApproval = z.infer<typeof ExpireApproval>;

/**
 * Why a receipt is issued. `approval_resolved` receipts one resolution of one
 * approval of the attempt (Hermit 18.1 `approval_resolution`), apart from the
 * receipt that ends the attempt.
 */
export const ReceiptCause = z.enum(['settled', 'policy_denied', 'approval_denied', 'refused', 'approval_resolved']);
export type ReceiptCause = z.infer<typeof ReceiptCause>;

/**
 * `writ.cmd.receipt.issue`: receipt the attempt as it stands in the log.
 * `approval_id` names the resolved approval; required for (and only for)
 * `approval_resolved`, since an attempt may wait for several approvals.
 */
export const IssueReceipt = withRules(
  z.strictObject({ ...AttemptRef, cause: ReceiptCause, approval_id: Id.optional() }),
  (command, report) => {
    if (command.cause === 'approval_resolved' && !isPresent(command.approval_id)) report(['approval_id'], 'is required when cause is approval_resolved');
    if (command.cause !== 'approval_resolved' && isPresent(command.approval_id)) report(['approval_id'], 'must be absent unless cause is approval_resolved');
  },
);
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

/**
 * `writ.qry.approval.revoke-grant` (request/reply). `revocation_jws` is a
 * compact EdDSA JWS by a director over GrantRevocation; the approval service
 * checks the signer's role and key in the log and the signature's freshness,
 * then appends `grant.revoked` to the task stream. The executor refuses every
 * use of a revoked grant not claimed before the revocation (GRANT_REVOKED).
 */
export const RevokeGrant = z.strictObject({ grant_id: Id, task_id: Id, revocation_jws: z.string().min(1).max(16 * 1024) });
export type RevokeGrant = z.infer<typeof RevokeGrant>;

/** The payload a director signs to revoke a grant. */
export const GrantRevocation = z.strictObject({ grant_id: Id, task_id: Id, reason: Text, revoked_by: Id, revoked_at: Timestamp });
export type GrantRevocation = z.infer<typeof GrantRevocation>;

/** The reply: `revoked` (this request appended `grant.revoked`) or `already_revoked` (the earlier revocation stands). */
export const RevokeGrantReply = z.strictObject({
  grant_id: Id,
  task_id: Id,
  status: z.enum(['revoked', 'already_revoked']),
  revoked_by: Id,
  revoked_at: Timestamp,
  event_id: Id,
});
export type RevokeGrantReply = z.infer<typeof RevokeGrantReply>;

/**
 * `writ.qry.approval.rotate-key` and `writ.qry.receipt.rotate-key`
 * (request/reply). `rotation_jws` is a compact EdDSA JWS by a director over
 * KeyRotation. The service generates a new signing key, appends
 * `principal.key_added` for it (with `replaces`), then signs with it; the old
 * key stays valid until `retire_after`, when `principal.key_revoked` (reason
 * `rotated`) is appended.
 */
export const RotateKey = z.strictObject({ rotation_jws: z.string().min(1).max(16 * 1024) });
export type RotateKey = z.infer<typeof RotateKey>;

/** The payload a director signs to rotate a service's signing key; `service` names the service (`approval`, `receipt`), so a rotation signed for one cannot be replayed on another. */
export const KeyRotation = z.strictObject({
  service: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/),
  requested_by: Id,
  requested_at: Timestamp,
  reason: Text.optional(),
});
export type KeyRotation = z.infer<typeof KeyRotation>;

/** The reply: the new signing key, the key it replaces and when that one is retired (`already_rotated` for a repeated request). */
export const RotateKeyReply = z.strictObject({
  principal_id: Id,
  status: z.enum(['rotated', 'already_rotated']),
  kid: z.string().min(1).max(128),
  previous_kid: z.string().min(1).max(128),
  retire_after: Timestamp,
});
export type RotateKeyReply = z.infer<typeof RotateKeyReply>;

/**
 * `writ.qry.executor.resolve-outcome` (request/reply). `resolution_jws` is a
 * compact EdDSA JWS by a director over OutcomeResolution. The executor checks
 * the signer (active key, role director, not an agent, not the action's
 * proposer) and freshness, then appends `execution.outcome_resolved` to the
 * attempt's last `execution.completed` whose outcome is `unknown` (Hermit 19.4).
 * Nothing is ever re-run.
 */
export const ResolveOutcome = z.strictObject({ task_id: Id, attempt_id: Id, resolution_jws: z.string().min(1).max(16 * 1024) });
export type ResolveOutcome = z.infer<typeof ResolveOutcome>;

/** The payload a director signs to settle an unknown outcome on evidence outside the log. */
export const OutcomeResolution = z.strictObject({
  task_id: Id,
  attempt_id: Id,
  outcome: z.enum(['succeeded', 'failed']),
  note: Text,
  resolved_by: Id,
  resolved_at: Timestamp,
});
export type OutcomeResolution = z.infer<typeof OutcomeResolution>;

/** The reply: `resolved` (this request appended the fact) or `already_resolved` (the standing resolution, appending nothing). */
export const ResolveOutcomeReply = z.strictObject({
  task_id: Id,
  attempt_id: Id,
  status: z.enum(['resolved', 'already_resolved']),
  outcome: z.enum(['succeeded', 'failed']),
  resolved_by: Id,
  resolved_at: Timestamp,
  event_id: Id,
});
export type ResolveOutcomeReply = z.infer<typeof ResolveOutcomeReply>;
