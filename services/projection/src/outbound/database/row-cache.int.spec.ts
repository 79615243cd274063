import { uniqueName } from '@writ/testing';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PG_URL, createTestPgRole, type TestPgRole } from '../../../test/projection-rig.js';
import type { CellRow, GrantRow } from '../../application/views/index.js';
import { dropProjectionSchema, openProjectionDatabase } from './projection-database.js';
import { RowCache } from './row-cache.js';

/**
 * The row cache of a projection transaction against the real Postgres (its
 * own schema): a load answers as the database would after each save, and a
 * row kept in memory is the row the database hands back.
 */

const grant = (id: string, changes: Partial<GrantRow> = {}): GrantRow => ({
  grant_id: id,
  task_id: 'task-1',
  step_id: 'step-1',
  attempt_id: 'attempt-1',
  action_class: 'write_local',
  issued_to: 'executor-1',
  issued_by: 'policy',
  issued_at: '2030-01-01T00:00:06.000Z',
  expires_at: '2030-01-01T00:05:06.000Z',
  max_uses: 1,
  uses: 0,
  status: 'active',
  updated_at: '2030-01-01T00:00:06.000Z',
  row_version: 6,
  ...changes,
});

const cell = (participants: CellRow['participants']): CellRow => ({
  cell_id: 'cell-1',
  source: 'cell',
  task_id: null,
  status: 'INVITED',
  director_id: 'director-1',
  backend: null,
  participants,
  active_expires_at: null,
  last_heartbeat_at: null,
  checkpoints: 0,
  last_checkpoint_id: null,
  last_checkpoint_sha256: null,
  closed_reason: null,
  container_id: null,
  image: null,
  image_id: null,
  network_mode: null,
  executions: 0,
  last_execution_outcome: null,
  last_cell_seq: 1,
  last_task_seq: 0,
  last_event_type: 'cell.participant_invited',
  created_at: '2030-01-01T00:00:01.000Z',
  updated_at: '2030-01-01T00:00:01.000Z',
  row_version: 1,
});

describe('RowCache (real Postgres)', () => {
  const schema = uniqueName('rowcache');
  let db: DataSource;
  let role: TestPgRole;

  beforeAll(async () => {
    role = await createTestPgRole(schema);
    db = await openProjectionDatabase({ ...role.connection, schema, poolSize: 2 });
  });

  afterAll(async () => {
    await db?.destroy();
    await dropProjectionSchema(TEST_PG_URL, schema);
    await role?.dispose();
  });

  it('given rows in the database and rows saved in the transaction, when loaded by key or by other columns, then each answer is what the database would give after the saves', async () => {
    await db.transaction(async (manager) => {
      const seed = new RowCache(manager, schema);
      seed.save({ view: 'grants', row: grant('g-b') });
      seed.save({ view: 'grants', row: grant('g-c', { attempt_id: 'attempt-2' }) });
      await seed.flush();
    });
    await db.transaction(async (manager) => {
      const rows = new RowCache(manager, schema);
      await rows.prefetch([{ view: 'grants', locator: { grant_id: 'g-b' } }, { view: 'grants', locator: { grant_id: 'g-nobody' } }]);
      // by key: from the database, then known absent
      expect(await rows.load('grants', { grant_id: 'g-b' })).toEqual(grant('g-b'));
      expect(await rows.load('grants', { grant_id: 'g-nobody' })).toBeUndefined();
      // a saved row is seen before the commit, by key and by other columns; the first match is in key order
      rows.save({ view: 'grants', row: grant('g-a') });
      expect(await rows.load('grants', { task_id: 'task-1', attempt_id: 'attempt-1', status: 'active' })).toEqual(grant('g-a'));
      // a row changed so that it no longer matches is not returned in its old version
      rows.save({ view: 'grants', row: grant('g-a', { status: 'revoked' }) });
      expect(await rows.load('grants', { task_id: 'task-1', attempt_id: 'attempt-1', status: 'active' })).toEqual(grant('g-b'));
      // a column prefetched in full answers from memory, the transaction's changes included
      await rows.prefetch([{ view: 'grants', locator: { attempt_id: 'attempt-2', status: 'active' } }]);
      rows.save({ view: 'grants', row: grant('g-c', { attempt_id: 'attempt-2', uses: 1, status: 'exhausted' }) });
      expect(await rows.load('grants', { attempt_id: 'attempt-2', status: 'active' })).toBeUndefined();
      await rows.flush();
    });
    // and after the commit the database holds exactly the last versions
    const stored: Array<{ grant_id: string; status: string; uses: number }> = await db.query(`SELECT grant_id, status, uses FROM "${schema}"."grants" ORDER BY grant_id`);
    expect(stored).toEqual([
      { grant_id: 'g-a', status: 'revoked', uses: 0 },
      { grant_id: 'g-b', status: 'active', uses: 0 },
      { grant_id: 'g-c', status: 'exhausted', uses: 1 },
    ]);
  });

  it('keeps a saved row exactly as a load from the database returns it (jsonb key order, timestamps, bigints)', async () => {
    const participants = [{ participant_id: 'director-1', principal_id: 'director-1', role: 'director', status: 'accepted' }];
    let inMemory: unknown;
    await db.transaction(async (manager) => {
      const rows = new RowCache(manager, schema);
      rows.save({ view: 'cells', row: { ...cell(participants), active_expires_at: '2030-01-01T04:00:01Z' } });
      inMemory = await rows.load('cells', { cell_id: 'cell-1' });
      await rows.flush();
    });
    let fromDatabase: unknown;
    await db.transaction(async (manager) => {
      fromDatabase = await new RowCache(manager, schema).load('cells', { cell_id: 'cell-1' });
    });
    expect(JSON.stringify(inMemory)).toBe(JSON.stringify(fromDatabase));
    expect((fromDatabase as CellRow).active_expires_at).toBe('2030-01-01T04:00:01.000Z');
    expect(Object.keys((fromDatabase as CellRow).participants[0]!)).toEqual(['role', 'status', 'principal_id', 'participant_id']);
  });

  it('writes nothing when the transaction fails before its flush', async () => {
    await expect(
      db.transaction(async (manager) => {
        const rows = new RowCache(manager, schema);
        rows.save({ view: 'grants', row: grant('g-lost') });
        throw new Error('the commit never happens');
      }),
    ).rejects.toThrow('the commit never happens');
    const lost: unknown[] = await db.query(`SELECT 1 FROM "${schema}"."grants" WHERE grant_id = 'g-lost'`);
    expect(lost).toEqual([]);
  });
});
