import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The schema the DataSource was opened on (`WRIT_PG_SCHEMA`), quoted. */
export function schemaOf(queryRunner: QueryRunner): string {
  const schema = (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
  return `"${schema.replaceAll('"', '""')}"`;
}

/**
 * The read models of the governed path and the projector checkpoint. Every
 * string column that carries event data is `text` or a validated id, so no
 * event can make a row unwritable (a stalled projector).
 */
export class CreateProjectionViews1751760000000 implements MigrationInterface {
  name = 'CreateProjectionViews1751760000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    const statements = [
      `CREATE TABLE ${s}."actions" (
        "action_request_id" varchar(128) PRIMARY KEY,
        "status" text NOT NULL,
        "principal_id" varchar(128),
        "ingress_id" varchar(128),
        "task_id" varchar(128),
        "step_id" varchar(128),
        "attempt_id" varchar(128),
        "action_class" text,
        "policy_outcome" text,
        "risk_band" text,
        "policy_result_id" varchar(128),
        "approval_id" varchar(128),
        "grant_id" varchar(128),
        "receipt_id" varchar(128),
        "reason_code" text,
        "received_at" timestamptz,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "actions_task_attempt_idx" ON ${s}."actions" ("task_id", "attempt_id")`,
      `CREATE INDEX "actions_ingress_idx" ON ${s}."actions" ("ingress_id")`,
      `CREATE TABLE ${s}."tasks" (
        "task_id" varchar(128) PRIMARY KEY,
        "title" text NOT NULL,
        "goal" text NOT NULL,
        "status" text NOT NULL,
        "owner_principal_id" varchar(128),
        "policy_profile" text,
        "last_task_seq" integer NOT NULL,
        "last_event_type" text NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE TABLE ${s}."task_events" (
        "task_id" varchar(128) NOT NULL,
        "task_seq" integer NOT NULL,
        "stream_seq" bigint NOT NULL,
        "event_id" varchar(128) NOT NULL,
        "event_type" text NOT NULL,
        "entity_type" text NOT NULL,
        "entity_id" varchar(128) NOT NULL,
        "step_id" varchar(128),
        "attempt_id" varchar(128),
        "actor_type" text NOT NULL,
        "actor_id" varchar(128) NOT NULL,
        "payload" jsonb NOT NULL DEFAULT '{}',
        "occurred_at" timestamptz NOT NULL,
        PRIMARY KEY ("task_id", "task_seq")
      )`,
      `CREATE TABLE ${s}."approvals" (
        "approval_id" varchar(128) PRIMARY KEY,
        "task_id" varchar(128) NOT NULL,
        "step_id" varchar(128),
        "attempt_id" varchar(128),
        "status" text NOT NULL,
        "packet" jsonb NOT NULL DEFAULT '{}',
        "requested_by" varchar(128),
        "resolved_by" varchar(128),
        "resolution_note" text,
        "requested_at" timestamptz NOT NULL,
        "resolved_at" timestamptz,
        "expires_at" timestamptz,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "approvals_status_idx" ON ${s}."approvals" ("status", "requested_at")`,
      `CREATE INDEX "approvals_task_attempt_idx" ON ${s}."approvals" ("task_id", "attempt_id")`,
      `CREATE TABLE ${s}."grants" (
        "grant_id" varchar(128) PRIMARY KEY,
        "task_id" varchar(128) NOT NULL,
        "step_id" varchar(128),
        "attempt_id" varchar(128),
        "action_class" text,
        "issued_to" varchar(128),
        "issued_by" varchar(128),
        "issued_at" timestamptz,
        "expires_at" timestamptz,
        "max_uses" integer NOT NULL,
        "uses" integer NOT NULL,
        "status" text NOT NULL,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "grants_task_attempt_idx" ON ${s}."grants" ("task_id", "attempt_id")`,
      `CREATE TABLE ${s}."receipts" (
        "receipt_id" varchar(128) PRIMARY KEY,
        "task_id" varchar(128) NOT NULL,
        "step_id" varchar(128),
        "attempt_id" varchar(128),
        "action_request_id" varchar(128),
        "result_code" text,
        "receipt_class" text,
        "receipt" jsonb NOT NULL DEFAULT '{}',
        "jws" text NOT NULL,
        "receipt_hash" text,
        "created_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "receipts_task_idx" ON ${s}."receipts" ("task_id")`,
      `CREATE TABLE ${s}."principals" (
        "principal_id" varchar(128) PRIMARY KEY,
        "type" text NOT NULL,
        "display_name" text NOT NULL,
        "roles" jsonb NOT NULL DEFAULT '[]',
        "keys" jsonb NOT NULL DEFAULT '[]',
        "revoked_kids" jsonb NOT NULL DEFAULT '[]',
        "registered_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "principals_type_idx" ON ${s}."principals" ("type")`,
      `CREATE TABLE ${s}."checkpoints" (
        "projector" varchar(64) PRIMARY KEY,
        "last_seq" bigint NOT NULL DEFAULT 0,
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`,
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    for (const table of ['checkpoints', 'principals', 'receipts', 'grants', 'approvals', 'task_events', 'tasks', 'actions']) {
      await queryRunner.query(`DROP TABLE IF EXISTS ${s}."${table}"`);
    }
  }
}
