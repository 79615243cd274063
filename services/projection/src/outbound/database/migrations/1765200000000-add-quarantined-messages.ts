import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './1751760000000-create-projection-views.js';

/**
 * The messages of the log the projector passed over as junk (invariant 10),
 * one row per stream sequence, written in the transaction that moves the
 * checkpoint past it. Not a view (a rebuild leaves it in place): it is what
 * `/readyz` and `GET /v1/projections/status` count. The SHA-256 of the bytes,
 * never the bytes.
 */
export class AddQuarantinedMessages1765200000000 implements MigrationInterface {
  name = 'AddQuarantinedMessages1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`CREATE TABLE ${s}."quarantined_messages" (
      "stream_seq" bigint PRIMARY KEY,
      "stream" text NOT NULL,
      "subject" text NOT NULL,
      "reason" text NOT NULL,
      "sha256" char(64) NOT NULL,
      "bytes" integer NOT NULL,
      "detail" text NOT NULL,
      "recorded_at" timestamptz NOT NULL DEFAULT now()
    )`);
    await queryRunner.query(`CREATE INDEX "quarantined_messages_reason_idx" ON ${s}."quarantined_messages" ("reason")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS ${schemaOf(queryRunner)}."quarantined_messages"`);
  }
}
