import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './1751760000000-create-projection-views.js';

/**
 * The working state and belief views (issue 17, Hermit 13.6): one row per
 * task's working state, one per belief of a task. Both are published, so
 * both carry `row_version` with its index (the changes feed reads by it).
 * New tables start empty; the projector fills them from the events it folds
 * from now on, and `writ projections rebuild --view working_states --view beliefs`
 * fills them from the whole log (a log older than this migration holds no
 * knowledge events, so there is nothing to backfill).
 */
export class AddKnowledgeViews1767000000000 implements MigrationInterface {
  name = 'AddKnowledgeViews1767000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    const statements = [
      `CREATE TABLE ${s}."working_states" (
        "task_id" varchar(128) PRIMARY KEY,
        "revision" integer NOT NULL,
        "limits" jsonb NOT NULL DEFAULT '{}',
        "entries" jsonb NOT NULL DEFAULT '[]',
        "entry_count" integer NOT NULL,
        "last_request_id" varchar(128),
        "last_revised_by" varchar(128),
        "compactions" integer NOT NULL,
        "opened_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL,
        "row_version" bigint NOT NULL
      )`,
      `CREATE INDEX "working_states_row_version_idx" ON ${s}."working_states" ("row_version")`,
      `CREATE TABLE ${s}."beliefs" (
        "task_id" varchar(128) NOT NULL,
        "belief_id" varchar(128) NOT NULL,
        "claim" text,
        "claim_withheld" boolean NOT NULL,
        "scope" text NOT NULL,
        "trust_tier" text NOT NULL,
        "status" text NOT NULL,
        "confidence" double precision NOT NULL,
        "version" integer NOT NULL,
        "evidence_refs" jsonb NOT NULL DEFAULT '[]',
        "asserted_by" varchar(128),
        "asserter_type" text,
        "step_id" varchar(128),
        "attempt_id" varchar(128),
        "supersedes" varchar(128),
        "superseded_by" varchar(128),
        "contradicts" jsonb NOT NULL DEFAULT '[]',
        "needs_review" boolean NOT NULL,
        "expires_at" timestamptz,
        "revoked_by" varchar(128),
        "revoke_reason" text,
        "epistemic_type" text,
        "sensitivity" text,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL,
        "row_version" bigint NOT NULL,
        PRIMARY KEY ("task_id", "belief_id")
      )`,
      `CREATE INDEX "beliefs_row_version_idx" ON ${s}."beliefs" ("row_version")`,
      `CREATE INDEX "beliefs_task_created_idx" ON ${s}."beliefs" ("task_id", "created_at", "belief_id")`,
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    for (const table of ['beliefs', 'working_states']) await queryRunner.query(`DROP TABLE IF EXISTS ${s}."${table}"`);
  }
}
