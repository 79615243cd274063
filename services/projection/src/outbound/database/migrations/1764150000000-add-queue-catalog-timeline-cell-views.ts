import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './1751760000000-create-projection-views.js';

/**
 * The rest of the Hermit 13.6 views the kernel has so far (step queue,
 * attempts, artifact catalog, decision timeline, cells) and the record of
 * rebuild jobs. A database created before them gets them empty: the next
 * `writ projections rebuild --view steps --view attempts ...` fills them from
 * the log (their checkpoint is the shared one, so only a rebuild backfills).
 */
export class AddQueueCatalogTimelineCellViews1764150000000 implements MigrationInterface {
  name = 'AddQueueCatalogTimelineCellViews1764150000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    const statements = [
      `CREATE TABLE ${s}."steps" (
        "step_id" varchar(128) PRIMARY KEY,
        "task_id" varchar(128) NOT NULL,
        "kind" text,
        "title" text,
        "status" text NOT NULL,
        "depends_on" jsonb NOT NULL DEFAULT '[]',
        "max_attempts" integer,
        "attempt_count" integer NOT NULL,
        "current_attempt_id" varchar(128),
        "current_attempt_no" integer,
        "current_attempt_status" text,
        "blocked_reason" text,
        "last_task_seq" integer NOT NULL,
        "last_event_type" text NOT NULL,
        "planned_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "steps_status_idx" ON ${s}."steps" ("status", "planned_at")`,
      `CREATE INDEX "steps_task_idx" ON ${s}."steps" ("task_id")`,
      `CREATE TABLE ${s}."attempts" (
        "attempt_id" varchar(128) PRIMARY KEY,
        "task_id" varchar(128) NOT NULL,
        "step_id" varchar(128),
        "attempt_no" integer,
        "status" text NOT NULL,
        "action_request_id" varchar(128),
        "action_class" text,
        "policy_outcome" text,
        "risk_band" text,
        "approval_id" varchar(128),
        "grant_id" varchar(128),
        "execution_outcome" text,
        "result_code" text,
        "receipt_id" varchar(128),
        "reason_code" text,
        "last_task_seq" integer NOT NULL,
        "last_event_type" text NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "attempts_step_idx" ON ${s}."attempts" ("step_id", "attempt_no")`,
      `CREATE TABLE ${s}."artifacts" (
        "artifact_id" varchar(128) PRIMARY KEY,
        "sha256" text NOT NULL,
        "kind" text NOT NULL,
        "class" text NOT NULL,
        "media_type" text NOT NULL,
        "byte_size" bigint NOT NULL,
        "uri" text NOT NULL,
        "task_id" varchar(128) NOT NULL,
        "step_id" varchar(128),
        "attempt_id" varchar(128),
        "producer" varchar(128) NOT NULL,
        "retention_class" text NOT NULL,
        "sensitivity_class" text NOT NULL,
        "event_id" varchar(128) NOT NULL,
        "event_type" text NOT NULL,
        "task_seq" integer NOT NULL,
        "created_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "artifacts_task_idx" ON ${s}."artifacts" ("task_id", "task_seq")`,
      `CREATE INDEX "artifacts_sha256_idx" ON ${s}."artifacts" ("sha256")`,
      `CREATE TABLE ${s}."decisions" (
        "task_id" varchar(128) NOT NULL,
        "task_seq" integer NOT NULL,
        "decision_id" varchar(128) NOT NULL,
        "source" text NOT NULL,
        "step_id" varchar(128),
        "attempt_id" varchar(128),
        "decision_type" text,
        "summary" text,
        "rationale" text,
        "risk_level" text,
        "decided_by" varchar(128),
        "reversible" boolean,
        "evidence_refs" jsonb NOT NULL DEFAULT '[]',
        "policy_result_id" varchar(128),
        "policy_outcome" text,
        "policy_profile" text,
        "policy_version" text,
        "subject_ref" text,
        "outcome_event" text,
        "stream_seq" bigint NOT NULL,
        "created_at" timestamptz NOT NULL,
        PRIMARY KEY ("task_id", "task_seq")
      )`,
      `CREATE INDEX "decisions_decision_idx" ON ${s}."decisions" ("decision_id")`,
      `CREATE TABLE ${s}."cells" (
        "cell_id" varchar(128) PRIMARY KEY,
        "source" text NOT NULL,
        "task_id" varchar(128),
        "status" text,
        "director_id" varchar(128),
        "backend" text,
        "participants" jsonb NOT NULL DEFAULT '[]',
        "active_expires_at" timestamptz,
        "last_heartbeat_at" timestamptz,
        "checkpoints" integer NOT NULL,
        "last_checkpoint_id" varchar(128),
        "last_checkpoint_sha256" text,
        "closed_reason" text,
        "container_id" text,
        "image" text,
        "image_id" text,
        "network_mode" text,
        "executions" integer NOT NULL,
        "last_execution_outcome" text,
        "last_cell_seq" integer NOT NULL,
        "last_task_seq" integer NOT NULL,
        "last_event_type" text NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "cells_status_idx" ON ${s}."cells" ("status", "updated_at")`,
      // Not a view: what `writ projections rebuild` did, kept in the live schema so any instance answers for a job. Never swapped.
      `CREATE TABLE ${s}."rebuild_jobs" (
        "job_id" varchar(128) PRIMARY KEY,
        "state" text NOT NULL,
        "job" jsonb NOT NULL,
        "started_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL
      )`,
      `CREATE INDEX "rebuild_jobs_started_idx" ON ${s}."rebuild_jobs" ("started_at")`,
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    for (const table of ['rebuild_jobs', 'cells', 'decisions', 'artifacts', 'attempts', 'steps']) {
      await queryRunner.query(`DROP TABLE IF EXISTS ${s}."${table}"`);
    }
  }
}
