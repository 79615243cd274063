import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './1751760000000-create-projection-views.js';

/**
 * The memory view (issue 17, Hermit 8.7, 15.5): one row per durable memory
 * record, folded from its own stream (`<events>.memory.<memory_id>`) plus the
 * receipts of the actions that promoted and invalidated it. Published, so it
 * carries `row_version` with its index. A log older than this migration holds
 * no memory events: nothing to backfill (`writ projections rebuild --view memory`
 * fills it from the whole log anyway).
 */
export class AddMemoryView1767300000000 implements MigrationInterface {
  name = 'AddMemoryView1767300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    const statements = [
      `CREATE TABLE ${s}."memory" (
        "memory_id" varchar(128) PRIMARY KEY,
        "task_id" varchar(128) NOT NULL,
        "claim" text,
        "claim_withheld" boolean NOT NULL,
        "scope" text NOT NULL,
        "trust_tier" text NOT NULL,
        "status" text NOT NULL,
        "evidence_refs" jsonb NOT NULL DEFAULT '[]',
        "promotion_reason" text,
        "source_kind" text,
        "source_id" varchar(128),
        "invalidation_mode" text,
        "expires_at" timestamptz,
        "retention_class" text,
        "promoted_by" varchar(128),
        "policy_result_ref" text,
        "approval_ref" text,
        "receipt_ref" text,
        "attempt_id" varchar(128),
        "invalidation_attempt_id" varchar(128),
        "invalidation_receipt_ref" text,
        "supersedes" varchar(128),
        "superseded_by" varchar(128),
        "invalidated_by" varchar(128),
        "invalidation_reason" text,
        "invalidated_at" timestamptz,
        "sensitivity" text,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz NOT NULL,
        "row_version" bigint NOT NULL
      )`,
      `CREATE INDEX "memory_row_version_idx" ON ${s}."memory" ("row_version")`,
      `CREATE INDEX "memory_created_idx" ON ${s}."memory" ("created_at", "memory_id")`,
      `CREATE INDEX "memory_attempt_idx" ON ${s}."memory" ("attempt_id")`,
      `CREATE INDEX "memory_invalidation_attempt_idx" ON ${s}."memory" ("invalidation_attempt_id")`,
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS ${schemaOf(queryRunner)}."memory"`);
  }
}
