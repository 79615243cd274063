import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './1751760000000-create-projection-views.js';

/**
 * Which context pack each attempt was proposed under (issue 17, Hermit 15.6): the
 * `context.pack_compiled` the orchestrator records, as three nullable columns of the
 * attempts view. Only the reference: the pack's bytes stay in the artifact store under
 * `context_pack_sha256` (`GET /v1/attempts/<id>/context` fetches and verifies them), so a
 * rebuild from the log yields the same rows without reading the store. A log older than
 * this migration holds no pack events: existing rows stay null, as a rebuild leaves them.
 */
export class AddAttemptContextPacks1767100000000 implements MigrationInterface {
  name = 'AddAttemptContextPacks1767100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE ${s}."attempts" ADD COLUMN "context_pack_sha256" varchar(64), ADD COLUMN "context_pack_uri" text, ADD COLUMN "context_pack_byte_size" integer`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE ${s}."attempts" DROP COLUMN "context_pack_byte_size", DROP COLUMN "context_pack_uri", DROP COLUMN "context_pack_sha256"`);
  }
}
