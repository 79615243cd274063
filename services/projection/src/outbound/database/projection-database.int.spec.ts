import { uniqueName } from '@writ/testing';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PG_URL, createTestPgRole, type TestPgRole } from '../../../test/projection-rig.js';
import { MIGRATIONS, dropProjectionSchema, openProjectionDatabase } from './projection-database.js';

/**
 * Replicas of the projection start together on one new schema (a deployment's first start, the
 * e2e replicas scenario): before the migration lock, both ran the first migration and one failed
 * on its own types (SQLSTATE 23505, `pg_type_typname_nsp_index`) and exited.
 */
describe('openProjectionDatabase: replicas starting together on a new schema (real Postgres)', () => {
  const schema = uniqueName('pgm');
  let role: TestPgRole;
  const opened: DataSource[] = [];

  beforeAll(async () => {
    role = await createTestPgRole(schema);
  });

  afterAll(async () => {
    for (const db of opened) await db.destroy().catch(() => undefined);
    await dropProjectionSchema(TEST_PG_URL, schema).catch(() => undefined);
    await role?.dispose();
  });

  it('given a new schema, when three instances open it at once, then each opens and every migration ran once', async () => {
    // when
    const results = await Promise.allSettled([1, 2, 3].map(() => openProjectionDatabase({ ...role.connection, schema, poolSize: 1 })));
    for (const result of results) if (result.status === 'fulfilled') opened.push(result.value);
    // then
    expect(results.map((result) => (result.status === 'rejected' ? String((result.reason as Error).message) : 'opened'))).toEqual(['opened', 'opened', 'opened']);
    const ran = (await opened[0]?.query(`SELECT name FROM "${schema}"."migrations" ORDER BY id`)) as Array<{ name: string }>;
    expect(ran.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
  });
});

/**
 * Upgrading a projection folded before the paged lists: `actions` gains `created_at`, filled from
 * what the table knows (received_at, else the task event that bound the action, else updated_at),
 * so the lists can order every existing row at once.
 */
describe('AddListPagination: an actions table of the previous version (real Postgres)', () => {
  const schema = uniqueName('pgu');
  const migrated = (migrations: typeof MIGRATIONS) =>
    new DataSource({ type: 'postgres', url: TEST_PG_URL, schema, migrations, migrationsRun: true, migrationsTransactionMode: 'all', synchronize: false, logging: false }).initialize();

  afterAll(async () => {
    await dropProjectionSchema(TEST_PG_URL, schema).catch(() => undefined);
  });

  it('given rows folded before, when migrated, then each gets its best known creation time and the lists\' indexes exist', async () => {
    // given: the three earlier migrations and three actions: received by ingress, met first on its task stream, neither
    const admin = new DataSource({ type: 'postgres', url: TEST_PG_URL, logging: false });
    await admin.initialize();
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.destroy();
    const before = await migrated(MIGRATIONS.slice(0, 3));
    const insert = `INSERT INTO "${schema}"."actions" (action_request_id, status, task_id, attempt_id, received_at, updated_at) VALUES ($1, 'succeeded', $2, $3, $4, $5)`;
    await before.query(insert, ['ar-received', 't-1', 'at-1', '2030-01-01T00:00:01.000Z', '2030-01-01T00:09:00.000Z']);
    await before.query(insert, ['ar-bound', 't-2', 'at-2', null, '2030-01-01T00:09:00.000Z']);
    await before.query(insert, ['ar-bare', null, null, null, '2030-01-01T00:07:00.000Z']);
    await before.query(
      `INSERT INTO "${schema}"."task_events" (task_id, task_seq, stream_seq, event_id, event_type, entity_type, entity_id, actor_type, actor_id, payload, occurred_at)
       VALUES ('t-2', 5, 10, 'e-5', 'attempt.awaiting_policy', 'attempt', 'at-2', 'service', 'orchestrator', $1, '2030-01-01T00:00:03.000Z')`,
      [JSON.stringify({ action_request: { action_request_id: 'ar-bound' } })],
    );
    await before.destroy();
    // when
    const after = await migrated(MIGRATIONS);
    try {
      // then
      const rows = (await after.query(`SELECT action_request_id, created_at FROM "${schema}"."actions" ORDER BY action_request_id`)) as Array<{ action_request_id: string; created_at: Date }>;
      expect(rows.map((row) => [row.action_request_id, row.created_at.toISOString()])).toEqual([
        ['ar-bare', '2030-01-01T00:07:00.000Z'],
        ['ar-bound', '2030-01-01T00:00:03.000Z'],
        ['ar-received', '2030-01-01T00:00:01.000Z'],
      ]);
      const nullable = (await after.query(`SELECT is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'actions' AND column_name = 'created_at'`, [schema])) as Array<{ is_nullable: string }>;
      expect(nullable).toEqual([{ is_nullable: 'NO' }]);
      const indexes = (await after.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%created_idx' ORDER BY indexname`, [schema])) as Array<{ indexname: string }>;
      expect(indexes.map((row) => row.indexname)).toEqual([
        'actions_created_idx',
        'actions_principal_created_idx',
        'actions_status_created_idx',
        'beliefs_task_created_idx',
        'cells_created_idx',
        'memory_created_idx',
        'receipts_created_idx',
        'tasks_created_idx',
        'tasks_owner_created_idx',
        'tasks_status_created_idx',
      ]);
    } finally {
      await after.destroy();
    }
  });
});
