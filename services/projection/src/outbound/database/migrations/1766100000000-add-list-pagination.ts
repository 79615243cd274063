import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './1751760000000-create-projection-views.js';

/**
 * The list endpoints (`GET /v1/tasks|actions|approvals|receipts|cells`) page
 * by keyset on a column that never changes once the row exists, newest (or,
 * for the approval inbox, oldest) first, and filter by owner, status and time.
 *
 * `actions` had no such column (`received_at` is null for an action first met
 * on its task stream, and may be set later), so it gets `created_at`: when the
 * projection first saw the action. Rows folded before this version get the
 * best the table knows: `received_at`, else the time of the task event that
 * bound the action, else `updated_at`. A rebuild computes it from the log, so
 * for such a row it can differ: `writ projections rebuild --view actions`
 * reports it, `--force` takes the log's value.
 *
 * The indexes serve each list's order and its selective filters (the owner
 * filter, which is also an agent's own scope, goes through `tasks`).
 */
export class AddListPagination1766100000000 implements MigrationInterface {
  name = 'AddListPagination1766100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    const statements = [
      `ALTER TABLE ${s}."actions" ADD COLUMN "created_at" timestamptz`,
      `UPDATE ${s}."actions" a SET "created_at" = coalesce(
        a."received_at",
        (SELECT min(e."occurred_at") FROM ${s}."task_events" e
          WHERE e."task_id" = a."task_id" AND e."event_type" = 'attempt.awaiting_policy'
            AND e."payload"->'action_request'->>'action_request_id' = a."action_request_id"),
        a."updated_at")`,
      `ALTER TABLE ${s}."actions" ALTER COLUMN "created_at" SET NOT NULL`,
      `CREATE INDEX "actions_created_idx" ON ${s}."actions" ("created_at", "action_request_id")`,
      `CREATE INDEX "actions_principal_created_idx" ON ${s}."actions" ("principal_id", "created_at", "action_request_id")`,
      `CREATE INDEX "actions_status_created_idx" ON ${s}."actions" ("status", "created_at", "action_request_id")`,
      `CREATE INDEX "tasks_created_idx" ON ${s}."tasks" ("created_at", "task_id")`,
      `CREATE INDEX "tasks_owner_created_idx" ON ${s}."tasks" ("owner_principal_id", "created_at", "task_id")`,
      `CREATE INDEX "tasks_status_created_idx" ON ${s}."tasks" ("status", "created_at", "task_id")`,
      `CREATE INDEX "approvals_requested_idx" ON ${s}."approvals" ("requested_at", "approval_id")`,
      `CREATE INDEX "receipts_created_idx" ON ${s}."receipts" ("created_at", "receipt_id")`,
      `CREATE INDEX "cells_created_idx" ON ${s}."cells" ("created_at", "cell_id")`,
      `CREATE INDEX "cells_task_idx" ON ${s}."cells" ("task_id")`,
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    for (const index of [
      'cells_task_idx',
      'cells_created_idx',
      'receipts_created_idx',
      'approvals_requested_idx',
      'tasks_status_created_idx',
      'tasks_owner_created_idx',
      'tasks_created_idx',
      'actions_status_created_idx',
      'actions_principal_created_idx',
      'actions_created_idx',
    ]) {
      await queryRunner.query(`DROP INDEX IF EXISTS ${s}."${index}"`);
    }
    await queryRunner.query(`ALTER TABLE ${s}."actions" DROP COLUMN IF EXISTS "created_at"`);
  }
}
