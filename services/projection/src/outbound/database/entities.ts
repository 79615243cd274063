import { EntitySchema, type EntitySchemaColumnOptions, type ValueTransformer } from 'typeorm';
import type { ActionRow, ApprovalRow, GrantRow, PrincipalRow, ReceiptRow, TaskEventRow, TaskRow, ViewName } from '../../application/views/index.js';

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
const integer = (): EntitySchemaColumnOptions => ({ type: 'integer' });
const bigint = (): EntitySchemaColumnOptions => ({ type: 'bigint', transformer: bigintNumber });
const jsonObject = (): EntitySchemaColumnOptions => ({ type: 'jsonb', default: () => "'{}'" });
const jsonArray = (): EntitySchemaColumnOptions => ({ type: 'jsonb', default: () => "'[]'" });

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
  },
});

export interface CheckpointRow {
  readonly projector: string;
  readonly last_seq: number;
  readonly updated_at: string;
}

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
};

export const ENTITIES = [...Object.values(VIEW_ENTITIES), CheckpointEntity as unknown as EntitySchema];
