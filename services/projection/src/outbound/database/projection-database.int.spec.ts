import { uniqueName } from '@writ/testing';
import type { DataSource } from 'typeorm';
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
