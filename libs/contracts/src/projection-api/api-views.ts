import { z } from 'zod';
import { PublicEd25519Jwk } from '../governed-path/principal-events.js';
import { RevokeGrant, ResolutionJws } from '../governed-path/service-commands.js';
import { SubmitClaim } from '../task-claims/commands.js';
import { BeliefStatus } from '../knowledge/belief.js';
import { SubmitKnowledgeRequest } from '../knowledge/requests.js';
import { BeliefRowSchema } from '../projection-rows/beliefs.row.js';
import { MemoryRowSchema } from '../projection-rows/memory.row.js';
import { MemoryStatus } from '../knowledge/memory-record.js';
import { KnowledgeScope } from '../knowledge/knowledge-evidence.js';
import { Id } from '../ids.js';
import { QuarantineCounts } from '../quarantine.js';
import { ActionRowSchema } from '../projection-rows/actions.row.js';
import { ApprovalRowSchema } from '../projection-rows/approvals.row.js';
import { ArtifactRowSchema } from '../projection-rows/artifacts.row.js';
import { AttemptRowSchema } from '../projection-rows/attempts.row.js';
import { CellRowSchema } from '../projection-rows/cells.row.js';
import { DecisionRowSchema } from '../projection-rows/decisions.row.js';
import { GrantRowSchema } from '../projection-rows/grants.row.js';
import { ReceiptRowSchema } from '../projection-rows/receipts.row.js';
import { RowCount, RowId, RowObject } from '../projection-rows/row-fields.js';
import { StepRowSchema } from '../projection-rows/steps.row.js';
import { TaskEventRowSchema } from '../projection-rows/task-events.row.js';
import { TaskRowSchema } from '../projection-rows/tasks.row.js';
import { pageOf } from './pagination.js';

/**
 * What the projection's HTTP API answers beyond a bare row: the rows with what
 * hangs off them, the pages of the lists, keys and health. The service's own
 * types are these (z.infer), and the OpenAPI document is generated from them.
 */

const nextAfter = RowCount.nullable().describe('Pass as ?after= for the next page; null when this page reached the end.');

/** `GET /v1/tasks/<id>`: the task and one page of its timeline. */
export const TaskView = TaskRowSchema.extend({ events: z.array(TaskEventRowSchema), next_after: nextAfter }).meta({
  title: 'TaskView',
  description: 'A task and one page of its event timeline.',
});
export type TaskView = z.infer<typeof TaskView>;

/** `GET /v1/steps/<id>`: the step and its attempts (by attempt number). */
export const StepView = StepRowSchema.extend({ attempts: z.array(AttemptRowSchema) }).meta({ title: 'StepView', description: 'A step and its attempts.' });
export type StepView = z.infer<typeof StepView>;

/** `GET /v1/tasks/<id>/decisions`: one page of the task's decision timeline. */
export const DecisionTimeline = z
  .strictObject({ task_id: RowId, decisions: z.array(DecisionRowSchema), next_after: nextAfter })
  .meta({ title: 'DecisionTimeline', description: "One page of a task's decision timeline, in log order." });
export type DecisionTimeline = z.infer<typeof DecisionTimeline>;

/** How an approval was resolved, as its last resolution event says. */
export const ApprovalResolutionView = z
  .strictObject({
    event_type: z.string(),
    status: z.string(),
    resolved_by: z.string().nullable(),
    resolved_at: z.string().nullable(),
    note: z.string().nullable(),
    cause: z.string().nullable().describe('For approval.invalidated: witness_drift, witness_expired, packet_drift, input_drift, policy_drift.'),
    drifted_resources: z.array(z.string()),
    witness_validated: z.boolean().nullable(),
    event_id: z.string(),
    task_seq: RowCount,
  })
  .meta({ title: 'ApprovalResolutionView', description: 'How an approval was resolved, as its last resolution event says.' });
export type ApprovalResolutionView = z.infer<typeof ApprovalResolutionView>;

/** `GET /v1/approvals/<id>`: the approval row and what its events in the task timeline add. */
export const ApprovalDetail = ApprovalRowSchema.extend({
  packet_ref: z.string().nullable().describe('approval_packet_ref of approval.requested: artifact:sha256:<hex>, the approval.packet artifact.'),
  state_witness: RowObject.nullable(),
  policy_result_ref: z.string().nullable(),
  resolution: ApprovalResolutionView.nullable(),
  decisions: z.array(RowObject).describe('The decision of every decision.recorded about the approval, in task order.'),
}).meta({ title: 'ApprovalDetail', description: 'An approval with its packet ref, state witness, resolution and decisions.' });
export type ApprovalDetail = z.infer<typeof ApprovalDetail>;

/** `GET /v1/tasks`. */
export const TaskPage = pageOf(TaskRowSchema).meta({ title: 'TaskPage', description: 'A page of tasks, newest first.' });
export type TaskPage = z.infer<typeof TaskPage>;

/** `GET /v1/actions`. */
export const ActionPage = pageOf(ActionRowSchema).meta({ title: 'ActionPage', description: 'A page of actions, newest first.' });
export type ActionPage = z.infer<typeof ActionPage>;

/** `GET /v1/receipts`. */
export const ReceiptPage = pageOf(ReceiptRowSchema).meta({ title: 'ReceiptPage', description: 'A page of receipts, newest first.' });
export type ReceiptPage = z.infer<typeof ReceiptPage>;

/** `GET /v1/approvals`; `approvals` is the same rows as `items`, kept for clients of the earlier answer. */
export const ApprovalPage = pageOf(ApprovalRowSchema)
  .extend({ approvals: z.array(ApprovalRowSchema).meta({ deprecated: true, description: 'Deprecated: the same rows as items.' }) })
  .meta({ title: 'ApprovalPage', description: 'A page of approvals, oldest request first (the inbox).' });
export type ApprovalPage = z.infer<typeof ApprovalPage>;

/** `GET /v1/cells`; `cells` is the same rows as `items`, kept for clients of the earlier answer. */
export const CellPage = pageOf(CellRowSchema)
  .extend({ cells: z.array(CellRowSchema).meta({ deprecated: true, description: 'Deprecated: the same rows as items.' }) })
  .meta({ title: 'CellPage', description: 'A page of cells, newest first.' });
export type CellPage = z.infer<typeof CellPage>;

/** `GET /v1/grants`. */
export const GrantList = z.strictObject({ grants: z.array(GrantRowSchema) }).meta({ title: 'GrantList', description: 'Grants, newest issue first.' });
export type GrantList = z.infer<typeof GrantList>;

/** `GET /v1/steps`. */
export const StepList = z.strictObject({ steps: z.array(StepRowSchema) }).meta({ title: 'StepList', description: 'The step queue, oldest planned first.' });
export type StepList = z.infer<typeof StepList>;

/** `GET /v1/artifacts`. */
export const ArtifactList = z.strictObject({ artifacts: z.array(ArtifactRowSchema) }).meta({ title: 'ArtifactList', description: 'The artifact catalog, in task order.' });
export type ArtifactList = z.infer<typeof ArtifactList>;

/** `GET /v1/keys`: a JWKS of the service principals' active public keys. */
export const KeySet = z.strictObject({ keys: z.array(PublicEd25519Jwk) }).meta({ title: 'KeySet', description: "JWKS of the service principals' active Ed25519 keys." });
export type KeySet = z.infer<typeof KeySet>;

/** `GET /healthz`: the process is up, and which build it runs. */
export const Health = z
  .strictObject({
    status: z.literal('ok'),
    service: z.string(),
    version: z.string(),
    commit: z.string().optional(),
  })
  .meta({ title: 'Health', description: 'The process is up, and which build it runs.' });
export type Health = z.infer<typeof Health>;

/** How far the views are behind the log. */
export const ProjectionLag = z
  .strictObject({
    last_stream_seq: RowCount.describe("The log's last stream sequence."),
    checkpoint: RowCount.describe('The last stream sequence folded into the views.'),
    events_behind: RowCount,
    lag_ms: RowCount.describe('How long the oldest event not yet folded has been in the log; 0 when caught up.'),
  })
  .meta({ title: 'ProjectionLag', description: 'How far the views are behind the log.' });
export type ProjectionLag = z.infer<typeof ProjectionLag>;

/** `GET /readyz` when ready. */
export const ProjectionReady = z
  .strictObject({
    status: z.literal('ready'),
    consumers: z.array(z.string()),
    lag: ProjectionLag,
    quarantined: QuarantineCounts,
  })
  .meta({ title: 'ProjectionReady', description: 'Ready: NATS, streams, consumer and Postgres up; with the lag and the junk passed over.' });
export type ProjectionReady = z.infer<typeof ProjectionReady>;

/** What ingress or approval answered a forwarded POST (its own reply, passed through). */
export const ForwardedReply = z
  .looseObject({ status: z.string().optional() })
  .meta({ title: 'ForwardedReply', description: "The answering service's reply, passed through as it sent it." });
export type ForwardedReply = z.infer<typeof ForwardedReply>;

/**
 * `POST /v1/actions` as JSON (the compact JWS may also be the raw body, as
 * `application/jose` or `text/plain`). The idempotency key defaults to the
 * `Idempotency-Key` header, else the claimed action_request_id, else the JWS's
 * digest; forwarded to ingress as `SubmitAction`.
 */
export const SubmitActionBody = z
  .strictObject({
    jws: z.string().min(1).describe('The signed ActionRequest as a compact JWS (EdDSA, kid = a key of the proposing principal).'),
    idempotency_key: z.string().min(1).max(256).optional(),
    principal_id: Id.optional().describe('The principal that signed it (else the Writ-Principal header, else the JWS says).'),
  })
  .meta({ title: 'SubmitActionBody', description: 'A signed ActionRequest to submit, as JSON.' });
export type SubmitActionBody = z.infer<typeof SubmitActionBody>;

/** `POST /v1/approvals/<id>/grant|deny`: the resolver's signed decision, forwarded to the approval service as `ResolveApproval`. */
export const ApprovalDecisionBody = z
  .strictObject({
    task_id: Id.describe("The approval's task, as the approval inbox lists it."),
    resolution_jws: ResolutionJws.describe('Compact JWS by the resolver over { approval_id, decision, packet_hash, resolved_by, resolved_at } (ApprovalResolution).'),
  })
  .meta({ title: 'ApprovalDecisionBody', description: "A director's signed resolution of an approval." });
export type ApprovalDecisionBody = z.infer<typeof ApprovalDecisionBody>;

/** `POST /v1/grants/<id>/revoke`: a director's signed revocation, forwarded to the approval service as `RevokeGrant`. */
export const GrantRevocationBody = z
  .strictObject({
    task_id: RevokeGrant.shape.task_id.describe("The grant's task, as the grant's own view shows it."),
    revocation_jws: RevokeGrant.shape.revocation_jws.describe('Compact JWS by a director over { grant_id, task_id, reason, revoked_by, revoked_at } (GrantRevocation).'),
  })
  .meta({ title: 'GrantRevocationBody', description: "A director's signed revocation of a grant." });
export type GrantRevocationBody = z.infer<typeof GrantRevocationBody>;

/** `POST /v1/tasks/<id>/claims/done|blocked|correction`: the task owner's signed claim, forwarded to the orchestrator as `SubmitClaim`. */
export const TaskClaimBody = z
  .strictObject({
    claim_jws: SubmitClaim.shape.claim_jws.describe(
      "Compact JWS by the task's owner (typ writ-done-claim+jws, writ-blocked-claim+jws or writ-correction+jws) over { task_id, claim | correction, claimed_by, claimed_at }.",
    ),
  })
  .meta({ title: 'TaskClaimBody', description: "The task owner's signed done / blocked claim or correction." });
export type TaskClaimBody = z.infer<typeof TaskClaimBody>;

/** `GET /v1/tasks/<id>/beliefs`: every belief of the task, in assertion order (`?status=` keeps one status). */
export const BeliefList = z
  .strictObject({ task_id: RowId, beliefs: z.array(BeliefRowSchema) })
  .meta({ title: 'BeliefList', description: "A task's beliefs, every status, in assertion order." });
export type BeliefList = z.infer<typeof BeliefList>;

/** `GET /v1/memory`: durable memory records, newest first (an agent: the ones it promoted). */
export const MemoryList = z
  .strictObject({ memory: z.array(MemoryRowSchema) })
  .meta({ title: 'MemoryList', description: 'Durable memory records, every status, newest first.' });
export type MemoryList = z.infer<typeof MemoryList>;

/** `?status=&scope=&task_id=&limit=` of `GET /v1/memory`. */
export const MemoryListQuery = z.strictObject({
  status: MemoryStatus.optional(),
  scope: KnowledgeScope.optional(),
  task_id: RowId.optional(),
  limit: z.coerce.number().int().min(1).max(1_000).optional(),
});
export type MemoryListQuery = z.infer<typeof MemoryListQuery>;

/** `?status=` of `GET /v1/tasks/<id>/beliefs`. */
export const BeliefListQuery = z.strictObject({ status: BeliefStatus.optional() });
export type BeliefListQuery = z.infer<typeof BeliefListQuery>;

/**
 * `POST /v1/tasks/<id>/working-state` and `POST /v1/tasks/<id>/beliefs`: the
 * signed request, forwarded to the orchestrator as `SubmitKnowledgeRequest`.
 */
export const KnowledgeRequestBody = z
  .strictObject({
    request_jws: SubmitKnowledgeRequest.shape.request_jws.describe(
      "Compact JWS by the task's owner or a director: typ writ-working-state-revision+jws over { task_id, request_id, expected_revision, set, remove, revised_by, revised_at }, or typ writ-belief-request+jws over { task_id, request_id, change, requested_by, requested_at }.",
    ),
  })
  .meta({ title: 'KnowledgeRequestBody', description: 'A signed working state revision or belief change.' });
export type KnowledgeRequestBody = z.infer<typeof KnowledgeRequestBody>;
