import { EntitySchema, type EntitySchemaColumnOptions, type ValueTransformer } from 'typeorm';
import type {
  ActionRow,
  BeliefRow,
  MemoryRow,
  ConversationFocusRow,
  ConversationMessageRow,
  WorkingStateRow,
  ApprovalRow,
  ArtifactRow,
  AttemptRow,
  CellRow,
  DecisionRow,
  GrantRow,
  PrincipalRow,
  ReceiptRow,
  StepRow,
  TaskEventRow,
  TaskRow,
  ViewName,
} from '../../application/views/index.js';

/**
 * The read models' typeorm mapping (EntitySchema: the row types stay plain
 * application types). Tables are created by the migration beside this file,
 * never by `synchronize`. Timestamps travel as canonical ISO strings and
 * bigints as numbers, so a loaded row compares equal to the row a fold built.
 */

const isoTimestamp: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value instanceof Date ? value.toISOString() : value),
};

const bigintNumber: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
};

const id = (options: Partial<EntitySchemaColumnOptions> = {}): EntitySchemaColumnOptions => ({ type: 'varchar', length: 128, ...options });
const nullableId = (): EntitySchemaColumnOptions => id({ nullable: true });
const str = (nullable = false): EntitySchemaColumnOptions => ({ type: 'text', nullable });
const timestamp = (nullable = false): EntitySchemaColumnOptions => ({ type: 'timestamptz', nullable, transformer: isoTimestamp });
const integer = (nullable = false): EntitySchemaColumnOptions => ({ type: 'integer', nullable });
const bool = (nullable = false): EntitySchemaColumnOptions => ({ type: 'boolean', nullable });
const bigint = (): EntitySchemaColumnOptions => ({ type: 'bigint', transformer: bigintNumber });
const jsonObject = (): EntitySchemaColumnOptions => ({ type: 'jsonb', default: () => "'{}'" });
const jsonArray = (): EntitySchemaColumnOptions => ({ type: 'jsonb', default: () => "'[]'" });
/** The log sequence of the last event applied to the row (published views; indexed for `GET /v1/changes`). */
const rowVersion = (): EntitySchemaColumnOptions => bigint();

export const ActionEntity = new EntitySchema<ActionRow>({
  name: 'ActionRow',
  tableName: 'actions',
  columns: {
    action_request_id: id({ primary: true }),
    status: str(),
    principal_id: nullableId(),
    ingress_id: nullableId(),
    task_id: nullableId(),
    step_id: nullableId(),
    attempt_id: nullableId(),
    action_class: str(true),
    policy_outcome: str(true),
    risk_band: str(true),
    policy_result_id: nullableId(),
    approval_id: nullableId(),
    grant_id: nullableId(),
    receipt_id: nullableId(),
    reason_code: str(true),
    received_at: timestamp(true),
    updated_at: timestamp(),
    row_version: rowVersion(),
    // Added by AddListPagination1766100000000 after AddRowVersions1766000000000, so last in the table (the row cache writes columns in table order).
    created_at: timestamp(),
  },
});

export const TaskEntity = new EntitySchema<TaskRow>({
  name: 'TaskRow',
  tableName: 'tasks',
  columns: {
    task_id: id({ primary: true }),
    title: str(),
    goal: str(),
    status: str(),
    owner_principal_id: nullableId(),
    policy_profile: str(true),
    last_task_seq: integer(),
    last_event_type: str(),
    created_at: timestamp(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const TaskEventEntity = new EntitySchema<TaskEventRow>({
  name: 'TaskEventRow',
  tableName: 'task_events',
  columns: {
    task_id: id({ primary: true }),
    task_seq: { type: 'integer', primary: true },
    stream_seq: bigint(),
    event_id: id(),
    event_type: str(),
    entity_type: str(),
    entity_id: id(),
    step_id: nullableId(),
    attempt_id: nullableId(),
    actor_type: str(),
    actor_id: id(),
    payload: jsonObject(),
    occurred_at: timestamp(),
  },
});

export const ApprovalEntity = new EntitySchema<ApprovalRow>({
  name: 'ApprovalRow',
  tableName: 'approvals',
  columns: {
    approval_id: id({ primary: true }),
    task_id: id(),
    step_id: nullableId(),
    attempt_id: nullableId(),
    status: str(),
    packet: jsonObject(),
    requested_by: nullableId(),
    resolved_by: nullableId(),
    resolution_note: str(true),
    requested_at: timestamp(),
    resolved_at: timestamp(true),
    expires_at: timestamp(true),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const GrantEntity = new EntitySchema<GrantRow>({
  name: 'GrantRow',
  tableName: 'grants',
  columns: {
    grant_id: id({ primary: true }),
    task_id: id(),
    step_id: nullableId(),
    attempt_id: nullableId(),
    action_class: str(true),
    issued_to: nullableId(),
    issued_by: nullableId(),
    issued_at: timestamp(true),
    expires_at: timestamp(true),
    max_uses: integer(),
    uses: integer(),
    status: str(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const ReceiptEntity = new EntitySchema<ReceiptRow>({
  name: 'ReceiptRow',
  tableName: 'receipts',
  columns: {
    receipt_id: id({ primary: true }),
    task_id: id(),
    step_id: nullableId(),
    attempt_id: nullableId(),
    action_request_id: nullableId(),
    result_code: str(true),
    receipt_class: str(true),
    receipt: jsonObject(),
    jws: str(),
    receipt_hash: str(true),
    created_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const PrincipalEntity = new EntitySchema<PrincipalRow>({
  name: 'PrincipalRow',
  tableName: 'principals',
  columns: {
    principal_id: id({ primary: true }),
    type: str(),
    display_name: str(),
    roles: jsonArray(),
    keys: jsonArray(),
    revoked_kids: jsonArray(),
    registered_at: timestamp(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const StepEntity = new EntitySchema<StepRow>({
  name: 'StepRow',
  tableName: 'steps',
  columns: {
    step_id: id({ primary: true }),
    task_id: id(),
    kind: str(true),
    title: str(true),
    status: str(),
    depends_on: jsonArray(),
    max_attempts: integer(true),
    attempt_count: integer(),
    current_attempt_id: nullableId(),
    current_attempt_no: integer(true),
    current_attempt_status: str(true),
    blocked_reason: str(true),
    last_task_seq: integer(),
    last_event_type: str(),
    planned_at: timestamp(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const AttemptEntity = new EntitySchema<AttemptRow>({
  name: 'AttemptRow',
  tableName: 'attempts',
  columns: {
    attempt_id: id({ primary: true }),
    task_id: id(),
    step_id: nullableId(),
    attempt_no: integer(true),
    status: str(),
    action_request_id: nullableId(),
    action_class: str(true),
    policy_outcome: str(true),
    risk_band: str(true),
    approval_id: nullableId(),
    grant_id: nullableId(),
    execution_outcome: str(true),
    result_code: str(true),
    receipt_id: nullableId(),
    reason_code: str(true),
    context_pack_sha256: { type: 'varchar', length: 64, nullable: true },
    context_pack_uri: str(true),
    context_pack_byte_size: integer(true),
    last_task_seq: integer(),
    last_event_type: str(),
    created_at: timestamp(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const ArtifactEntity = new EntitySchema<ArtifactRow>({
  name: 'ArtifactRow',
  tableName: 'artifacts',
  columns: {
    artifact_id: id({ primary: true }),
    sha256: str(),
    kind: str(),
    class: str(),
    media_type: str(),
    byte_size: bigint(),
    uri: str(),
    task_id: id(),
    step_id: nullableId(),
    attempt_id: nullableId(),
    producer: id(),
    retention_class: str(),
    sensitivity_class: str(),
    event_id: id(),
    event_type: str(),
    task_seq: integer(),
    created_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const DecisionEntity = new EntitySchema<DecisionRow>({
  name: 'DecisionRow',
  tableName: 'decisions',
  columns: {
    task_id: id({ primary: true }),
    task_seq: { type: 'integer', primary: true },
    decision_id: id(),
    source: str(),
    step_id: nullableId(),
    attempt_id: nullableId(),
    decision_type: str(true),
    summary: str(true),
    rationale: str(true),
    risk_level: str(true),
    decided_by: nullableId(),
    reversible: bool(true),
    evidence_refs: jsonArray(),
    policy_result_id: nullableId(),
    policy_outcome: str(true),
    policy_profile: str(true),
    policy_version: str(true),
    subject_ref: str(true),
    outcome_event: str(true),
    stream_seq: bigint(),
    created_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const CellEntity = new EntitySchema<CellRow>({
  name: 'CellRow',
  tableName: 'cells',
  columns: {
    cell_id: id({ primary: true }),
    source: str(),
    task_id: nullableId(),
    status: str(true),
    director_id: nullableId(),
    backend: str(true),
    participants: jsonArray(),
    active_expires_at: timestamp(true),
    last_heartbeat_at: timestamp(true),
    checkpoints: integer(),
    last_checkpoint_id: nullableId(),
    last_checkpoint_sha256: str(true),
    closed_reason: str(true),
    container_id: str(true),
    image: str(true),
    image_id: str(true),
    network_mode: str(true),
    executions: integer(),
    last_execution_outcome: str(true),
    last_cell_seq: integer(),
    last_task_seq: integer(),
    last_event_type: str(),
    created_at: timestamp(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export interface CheckpointRow {
  readonly projector: string;
  readonly last_seq: number;
  readonly updated_at: string;
}

export const WorkingStateEntity = new EntitySchema<WorkingStateRow>({
  name: 'WorkingStateRow',
  tableName: 'working_states',
  columns: {
    task_id: id({ primary: true }),
    revision: integer(),
    limits: jsonObject(),
    entries: jsonArray(),
    entry_count: integer(),
    last_request_id: nullableId(),
    last_revised_by: nullableId(),
    compactions: integer(),
    opened_at: timestamp(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const BeliefEntity = new EntitySchema<BeliefRow>({
  name: 'BeliefRow',
  tableName: 'beliefs',
  columns: {
    task_id: id({ primary: true }),
    belief_id: id({ primary: true }),
    claim: str(true),
    claim_withheld: bool(),
    scope: str(),
    trust_tier: str(),
    status: str(),
    confidence: { type: 'double precision' },
    version: integer(),
    evidence_refs: jsonArray(),
    asserted_by: nullableId(),
    asserter_type: str(true),
    step_id: nullableId(),
    attempt_id: nullableId(),
    supersedes: nullableId(),
    superseded_by: nullableId(),
    contradicts: jsonArray(),
    needs_review: bool(),
    expires_at: timestamp(true),
    revoked_by: nullableId(),
    revoke_reason: str(true),
    epistemic_type: str(true),
    sensitivity: str(true),
    created_at: timestamp(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const MemoryEntity = new EntitySchema<MemoryRow>({
  name: 'MemoryRow',
  tableName: 'memory',
  columns: {
    memory_id: id({ primary: true }),
    task_id: id(),
    claim: str(true),
    claim_withheld: bool(),
    scope: str(),
    trust_tier: str(),
    status: str(),
    evidence_refs: jsonArray(),
    promotion_reason: str(true),
    source_kind: str(true),
    source_id: nullableId(),
    invalidation_mode: str(true),
    expires_at: timestamp(true),
    retention_class: str(true),
    promoted_by: nullableId(),
    policy_result_ref: str(true),
    approval_ref: str(true),
    receipt_ref: str(true),
    attempt_id: nullableId(),
    invalidation_attempt_id: nullableId(),
    invalidation_receipt_ref: str(true),
    supersedes: nullableId(),
    superseded_by: nullableId(),
    invalidated_by: nullableId(),
    invalidation_reason: str(true),
    invalidated_at: timestamp(true),
    sensitivity: str(true),
    created_at: timestamp(),
    updated_at: timestamp(),
    row_version: rowVersion(),
  },
});

export const ConversationFocusEntity = new EntitySchema<ConversationFocusRow>({
  name: 'ConversationFocusRow',
  tableName: 'conversation_focus',
  columns: {
    principal_id: id({ primary: true }),
    conversation_id: id({ primary: true }),
    stream_id: id(),
    bound_focus_task_id: nullableId(),
    pending_ingress_ids: jsonArray(),
    unbound_ingress_ids: jsonArray(),
    last_ingress_id: nullableId(),
    message_count: integer(),
    updated_at: timestamp(),
  },
});

export const ConversationMessageEntity = new EntitySchema<ConversationMessageRow>({
  name: 'ConversationMessageRow',
  tableName: 'conversation_messages',
  columns: {
    ingress_id: id({ primary: true }),
    stream_id: id(),
    principal_id: id(),
    conversation_id: id(),
    conversation_seq: integer(),
    source_channel: str(),
    text_sha256: str(),
    explicit_task_ref: str(true),
    reply_to_ref: str(true),
    recorded_at: timestamp(),
    resolution: str(true),
    task_id: nullableId(),
    candidates: jsonArray(),
    rationale: str(true),
    confidence: { type: 'double precision', nullable: true },
    bound_at: timestamp(true),
  },
});

export const CheckpointEntity = new EntitySchema<CheckpointRow>({
  name: 'CheckpointRow',
  tableName: 'checkpoints',
  columns: {
    projector: { type: 'varchar', length: 64, primary: true },
    last_seq: bigint(),
    updated_at: timestamp(),
  },
});

/** The entity of each view. */
export const VIEW_ENTITIES: Readonly<Record<ViewName, EntitySchema>> = {
  actions: ActionEntity as unknown as EntitySchema,
  tasks: TaskEntity as unknown as EntitySchema,
  task_events: TaskEventEntity as unknown as EntitySchema,
  approvals: ApprovalEntity as unknown as EntitySchema,
  grants: GrantEntity as unknown as EntitySchema,
  receipts: ReceiptEntity as unknown as EntitySchema,
  principals: PrincipalEntity as unknown as EntitySchema,
  steps: StepEntity as unknown as EntitySchema,
  attempts: AttemptEntity as unknown as EntitySchema,
  artifacts: ArtifactEntity as unknown as EntitySchema,
  decisions: DecisionEntity as unknown as EntitySchema,
  cells: CellEntity as unknown as EntitySchema,
  working_states: WorkingStateEntity as unknown as EntitySchema,
  beliefs: BeliefEntity as unknown as EntitySchema,
  memory: MemoryEntity as unknown as EntitySchema,
  conversation_focus: ConversationFocusEntity as unknown as EntitySchema,
  conversation_messages: ConversationMessageEntity as unknown as EntitySchema,
};

export const ENTITIES = [...Object.values(VIEW_ENTITIES), CheckpointEntity as unknown as EntitySchema];
