/**
 * The shapes the console reads from the projection's HTTP API
 * (services/projection README, "HTTP API"), only the fields it shows. Kept
 * here rather than imported: the console must not depend on a service, and
 * a field it does not know is simply not shown.
 */

export type Json = Readonly<Record<string, unknown>>;

export interface ActionRow {
  readonly action_request_id: string;
  readonly status: string;
  readonly principal_id: string | null;
  readonly task_id: string | null;
  readonly step_id: string | null;
  readonly attempt_id: string | null;
  readonly action_class: string | null;
  readonly policy_outcome: string | null;
  readonly risk_band: string | null;
  readonly policy_result_id: string | null;
  readonly approval_id: string | null;
  readonly grant_id: string | null;
  readonly receipt_id: string | null;
  readonly reason_code: string | null;
  readonly received_at: string | null;
  readonly updated_at: string | null;
}

export interface TaskRow {
  readonly task_id: string;
  readonly title: string;
  readonly goal: string;
  readonly status: string;
  readonly owner_principal_id: string | null;
  readonly policy_profile: string | null;
  readonly last_task_seq: number;
  readonly last_event_type: string;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface TaskEventRow {
  readonly task_id: string;
  readonly task_seq: number;
  readonly event_id: string;
  readonly event_type: string;
  readonly entity_type: string;
  readonly entity_id: string;
  readonly step_id: string | null;
  readonly attempt_id: string | null;
  readonly actor_type: string;
  readonly actor_id: string;
  readonly payload: Json;
  readonly occurred_at: string;
}

export interface TaskView extends TaskRow {
  readonly events: readonly TaskEventRow[];
  readonly next_after: number | null;
}

export interface DecisionRow {
  readonly task_id: string;
  readonly task_seq: number;
  readonly decision_id?: string;
  readonly decision_type?: string;
  readonly summary?: string;
  readonly rationale?: string;
  readonly decided_by?: string;
  readonly risk_level?: string;
  readonly created_at?: string;
  readonly [field: string]: unknown;
}

export interface ApprovalRow {
  readonly approval_id: string;
  readonly task_id: string;
  readonly status: string;
  readonly requested_at?: string;
  readonly expires_at?: string | null;
  readonly resolved_by?: string | null;
  readonly resolved_at?: string | null;
  readonly [field: string]: unknown;
}

export interface ApprovalDetail extends ApprovalRow {
  readonly packet: Json;
  readonly packet_ref: string | null;
  readonly state_witness: Json | null;
  readonly resolution: Json | null;
  readonly decisions: readonly Json[];
}

export interface ResolveReply {
  readonly status: string;
  readonly approval_id: string;
  readonly task_id: string;
  readonly resolved_by?: string | null;
  readonly [field: string]: unknown;
}

/** `RevokeGrantReply`: `revoked` (this request revoked it) or `already_revoked` (the standing revocation). */
export interface RevokeReply {
  readonly grant_id: string;
  readonly task_id: string;
  readonly status: 'revoked' | 'already_revoked';
  readonly revoked_by: string;
  readonly revoked_at: string;
}

export interface ReceiptRow {
  readonly receipt_id: string;
  readonly task_id: string;
  readonly step_id: string | null;
  readonly attempt_id: string | null;
  readonly action_request_id: string | null;
  readonly result_code: string | null;
  readonly receipt_class: string | null;
  readonly receipt: Json;
  readonly jws: string;
  readonly receipt_hash: string | null;
  readonly created_at: string;
}

export interface GrantRow {
  readonly grant_id: string;
  readonly task_id: string;
  readonly attempt_id?: string | null;
  readonly action_class?: string | null;
  readonly issued_to?: string | null;
  readonly issued_by?: string | null;
  readonly issued_at?: string | null;
  readonly expires_at?: string | null;
  readonly status: string;
  readonly [field: string]: unknown;
}

export interface StepRow {
  readonly step_id: string;
  readonly task_id: string;
  readonly status: string;
  readonly title?: string | null;
  readonly kind?: string | null;
  readonly [field: string]: unknown;
}

export interface AttemptRow {
  readonly attempt_id: string;
  readonly status: string;
  readonly attempt_no?: number;
  readonly [field: string]: unknown;
}

/** One working state entry (`GET /v1/tasks/<id>/working-state`); a secret one has its value withheld. */
export interface WorkingStateEntryRow {
  readonly key: string;
  readonly kind: string;
  readonly value: unknown;
  readonly value_withheld?: true;
  readonly refs?: readonly string[];
  readonly [field: string]: unknown;
}

export interface WorkingStateRow {
  readonly task_id: string;
  readonly revision: number;
  readonly limits: Readonly<Record<string, number>>;
  readonly entries: readonly WorkingStateEntryRow[];
  readonly last_revised_by: string | null;
  readonly compactions: number;
  readonly updated_at: string;
}

/** One belief (`GET /v1/tasks/<id>/beliefs`), every status; a secret claim is withheld. */
export interface BeliefRow {
  readonly belief_id: string;
  readonly claim: string;
  readonly claim_withheld: boolean;
  readonly scope: string;
  readonly trust_tier: string;
  readonly status: string;
  readonly confidence: number;
  readonly evidence_refs: readonly { readonly kind: string; readonly id: string }[];
  readonly asserted_by: string | null;
  readonly epistemic_type: string | null;
  readonly needs_review: boolean;
  readonly [field: string]: unknown;
}

/** One durable memory record (`GET /v1/memory`): never removed; a secret claim is withheld. */
export interface MemoryRow {
  readonly memory_id: string;
  readonly task_id: string;
  readonly claim: string;
  readonly claim_withheld: boolean;
  readonly scope: string;
  readonly trust_tier: string;
  readonly status: string;
  readonly evidence_refs: readonly { readonly kind: string; readonly id: string }[];
  readonly promotion_reason: string | null;
  readonly source_kind: string | null;
  readonly source_id: string | null;
  readonly retention_class: string | null;
  readonly promoted_by: string | null;
  readonly policy_result_ref: string | null;
  readonly approval_ref: string | null;
  readonly receipt_ref: string | null;
  readonly invalidated_by: string | null;
  readonly invalidation_reason: string | null;
  readonly invalidation_receipt_ref: string | null;
  readonly invalidated_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly [field: string]: unknown;
}

/** One conversation's focus (`GET /v1/focus`): a projection of ingress records and bindings. */
export interface ConversationFocusRow {
  readonly principal_id: string;
  readonly conversation_id: string;
  readonly focus_task_id: string | null;
  readonly last_outcome_task_id: string | null;
  readonly pending_ingress_ids: readonly string[];
  readonly unbound_ingress_ids: readonly string[];
  readonly message_count: number;
  readonly updated_at: string;
}

/** One message of a conversation and where it was bound (`GET /v1/conversations/<id>/history`). */
export interface ConversationMessageRow {
  readonly ingress_id: string;
  readonly conversation_seq: number;
  readonly text: string | null;
  readonly explicit_task_ref: string | null;
  readonly reply_to_ref: string | null;
  readonly recorded_at: string;
  readonly resolution: string | null;
  readonly task_id: string | null;
  readonly candidates: readonly string[];
  readonly rationale: string | null;
}

export interface StepView extends StepRow {
  readonly attempts: readonly AttemptRow[];
}

export interface ArtifactRow {
  readonly artifact_id: string;
  readonly task_id: string;
  readonly kind?: string;
  readonly sha256?: string;
  readonly media_type?: string | null;
  readonly size_bytes?: number | null;
  readonly [field: string]: unknown;
}

export interface CellRow {
  readonly cell_id: string;
  readonly task_id?: string | null;
  readonly status: string | null;
  readonly [field: string]: unknown;
}

export interface PrincipalRow {
  readonly principal_id: string;
  readonly principal_type?: string;
  readonly roles: readonly string[];
  readonly keys?: readonly Json[];
  readonly revoked_kids?: readonly string[];
  readonly [field: string]: unknown;
}

/** A page of one of the list endpoints (`GET /v1/tasks`...), once they exist. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next_cursor: string | null;
}
