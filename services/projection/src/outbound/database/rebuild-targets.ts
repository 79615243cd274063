import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { RebuildTarget, RebuildTargets } from '../../application/ports.js';
import { ProjectionError } from '../../application/projection-errors.js';
import type { ViewName } from '../../application/views/index.js';
import { databaseError, dropProjectionSchema, openProjectionDatabase, schemaExists, type ProjectionDatabaseConfig } from './projection-database.js';
import { PROJECTOR_NAME, TypeormProjectionStore } from './typeorm-projection-store.js';

/** How long the swap waits for a lock (the projector's transaction, readers of a swapped table) before it gives up and swaps nothing. */
export const SWAP_LOCK_TIMEOUT_MS = 30_000;

/** `<schema>_old_<UTC yyyymmddhhmmss>`: where `--keep-old` keeps the replaced tables. */
export function oldSchemaName(liveSchema: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${liveSchema.slice(0, 40)}_old_${stamp}`;
}

const q = (name: string) => `"${name}"`;

/**
 * Fresh schemas beside the live one (`<schema>_rebuild_<hex>`, migrated like
 * the live one) and the swap: table by table, in one transaction on the live
 * database that first takes the live checkpoint table in EXCLUSIVE mode. That
 * mode conflicts with the projector's row lock and update of the checkpoint
 * (so no event is applied while the swap runs) but not with plain SELECTs,
 * so reads go on until a table they read is moved (ACCESS EXCLUSIVE, for the
 * instant of the commit). A reader sees the old table or the new one, never
 * a half-built one; a projector statement that waited on the lock resolves
 * the table names again once it gets it, so it lands on the rebuilt tables.
 */
export class PostgresRebuildTargets implements RebuildTargets {
  constructor(
    private readonly live: DataSource,
    private readonly config: ProjectionDatabaseConfig,
    private readonly lockTimeoutMs: number = SWAP_LOCK_TIMEOUT_MS,
  ) {}

  async create(): Promise<RebuildTarget> {
    const schema = `${this.config.schema.slice(0, 40)}_rebuild_${randomBytes(4).toString('hex')}`;
    if (await schemaExists(this.config, schema)) {
      throw new ProjectionError('PROJECTION_REBUILD_TARGET_INVALID', `schema ${schema} exists already; retry the rebuild`);
    }
    const dataSource = await openProjectionDatabase({ ...this.config, schema, poolSize: 2 });
    return new PostgresRebuildTarget(this.live, this.config, schema, dataSource, this.lockTimeoutMs);
  }
}

class PostgresRebuildTarget implements RebuildTarget {
  readonly store: TypeormProjectionStore;

  constructor(
    private readonly live: DataSource,
    private readonly config: ProjectionDatabaseConfig,
    readonly schema: string,
    private readonly dataSource: DataSource,
    private readonly lockTimeoutMs: number,
  ) {
    this.store = new TypeormProjectionStore(dataSource);
  }

  async swapIn(
    views: readonly ViewName[],
    options: { readonly keepOld: boolean; readonly at: Date },
    settle: (liveCheckpoint: number) => Promise<void>,
  ): Promise<{ readonly checkpoint: number; readonly oldSchema: string | null }> {
    const liveSchema = q(this.config.schema);
    const oldSchema = options.keepOld ? oldSchemaName(this.config.schema, options.at) : null;
    const runner = this.live.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
      await runner.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(this.lockTimeoutMs))}`);
      await runner.query(`LOCK TABLE ${liveSchema}."checkpoints" IN EXCLUSIVE MODE`);
      const rows: Array<{ last_seq: string }> = await runner.query(`SELECT last_seq FROM ${liveSchema}."checkpoints" WHERE projector = $1`, [PROJECTOR_NAME]);
      const checkpoint = rows[0] === undefined ? 0 : Number(rows[0].last_seq);
      await settle(checkpoint);
      const reached = await this.store.checkpoint();
      if (reached !== checkpoint) {
        throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the rebuilt views reached stream seq ${reached}, not the live checkpoint ${checkpoint}; nothing was swapped`);
      }
      if (oldSchema !== null) await runner.query(`CREATE SCHEMA ${q(oldSchema)}`);
      for (const view of views) {
        if (oldSchema === null) await runner.query(`DROP TABLE ${liveSchema}.${q(view)}`);
        else await runner.query(`ALTER TABLE ${liveSchema}.${q(view)} SET SCHEMA ${q(oldSchema)}`);
        await runner.query(`ALTER TABLE ${q(this.schema)}.${q(view)} SET SCHEMA ${liveSchema}`);
      }
      await runner.commitTransaction();
      return { checkpoint, oldSchema };
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw databaseError('swap the rebuilt views in', error);
    } finally {
      await runner.release().catch(() => undefined);
    }
  }

  async discard(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy().catch(() => undefined);
    await dropProjectionSchema(this.config, this.schema);
  }
}
