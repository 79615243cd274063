import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf } from './1751760000000-create-projection-views.js';

/**
 * The conversation views (issue 17, Hermit 13.6, 15.8): the focus of each
 * principal in each conversation, and the session history (one row per
 * free-form message and where it was bound). Not published (no row_version):
 * a conversation is read by its principal over HTTP, never broadcast on
 * `<root>.proj.>`. New tables start empty; a log older than this migration
 * holds no `ingress.recorded` / `ingress.bound`, so there is nothing to
 * backfill, and `writ projections rebuild` fills them from the log.
 */
export class AddConversationViews1767200000000 implements MigrationInterface {
  name = 'AddConversationViews1767200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    const statements = [
      `CREATE TABLE ${s}."conversation_focus" (
        "principal_id" varchar(128) NOT NULL,
        "conversation_id" varchar(128) NOT NULL,
        "stream_id" varchar(128) NOT NULL,
        "bound_focus_task_id" varchar(128),
        "pending_ingress_ids" jsonb NOT NULL DEFAULT '[]',
        "unbound_ingress_ids" jsonb NOT NULL DEFAULT '[]',
        "last_ingress_id" varchar(128),
        "message_count" integer NOT NULL,
        "updated_at" timestamptz NOT NULL,
        PRIMARY KEY ("principal_id", "conversation_id")
      )`,
      // A binding names its stream, not its sender: the fold finds the row by it.
      `CREATE INDEX "conversation_focus_stream_idx" ON ${s}."conversation_focus" ("stream_id")`,
      `CREATE TABLE ${s}."conversation_messages" (
        "ingress_id" varchar(128) PRIMARY KEY,
        "stream_id" varchar(128) NOT NULL,
        "principal_id" varchar(128) NOT NULL,
        "conversation_id" varchar(128) NOT NULL,
        "conversation_seq" integer NOT NULL,
        "source_channel" text NOT NULL,
        "text_sha256" text NOT NULL,
        "explicit_task_ref" text,
        "reply_to_ref" text,
        "recorded_at" timestamptz NOT NULL,
        "resolution" text,
        "task_id" varchar(128),
        "candidates" jsonb NOT NULL DEFAULT '[]',
        "rationale" text,
        "confidence" double precision,
        "bound_at" timestamptz
      )`,
      `CREATE INDEX "conversation_messages_history_idx" ON ${s}."conversation_messages" ("principal_id", "conversation_id", "conversation_seq")`,
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    for (const table of ['conversation_messages', 'conversation_focus']) await queryRunner.query(`DROP TABLE IF EXISTS ${s}."${table}"`);
  }
}
