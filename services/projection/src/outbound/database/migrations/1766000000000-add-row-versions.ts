import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './1751760000000-create-projection-views.js';

/** The views whose rows are published (`<root>.proj.<view>.<id>`) and served by the changes feed. */
const PUBLISHED = ['actions', 'tasks', 'approvals', 'grants', 'receipts', 'principals', 'steps', 'attempts', 'artifacts', 'decisions', 'cells'] as const;

/**
 * `row_version` on every published view (issue 16): the log sequence of the
 * last event applied to the row, set by the projector in the transaction that
 * applies it. `GET /v1/changes?since=<v>` reads rows with `row_version > v` in
 * version order, hence an index per view.
 *
 * Rows that exist before this migration have no known version: they get the
 * checkpoint (every event that touched them is at or below it), so a reader
 * starting from 0 still sees them, and the versions that follow are exact.
 * A `writ projections rebuild --force` afterwards gives them their exact
 * versions (until then a rebuild reports these views as differing).
 */
export class AddRowVersions1766000000000 implements MigrationInterface {
  name = 'AddRowVersions1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    for (const view of PUBLISHED) {
      await queryRunner.query(`ALTER TABLE ${s}."${view}" ADD COLUMN "row_version" bigint`);
      await queryRunner.query(`UPDATE ${s}."${view}" SET "row_version" = GREATEST(COALESCE((SELECT max(last_seq) FROM ${s}."checkpoints"), 1), 1)`);
      await queryRunner.query(`ALTER TABLE ${s}."${view}" ALTER COLUMN "row_version" SET NOT NULL`);
      await queryRunner.query(`CREATE INDEX "${view}_row_version_idx" ON ${s}."${view}" ("row_version")`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    for (const view of PUBLISHED) await queryRunner.query(`ALTER TABLE ${s}."${view}" DROP COLUMN IF EXISTS "row_version"`);
  }
}
