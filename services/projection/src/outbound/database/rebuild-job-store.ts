import { ProjectionRebuildJob, safeParseContract } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { RebuildJobStore, RebuildLock } from '../../application/ports.js';
import { databaseError, pgConnectionOptions, type PgConnectionConfig } from './projection-database.js';

/** First key of the rebuild lock (`pg_try_advisory_lock(int4, int4)`): "WRIT"; the second is `hashtext(<live schema>)`. */
const LOCK_CLASS = 0x57524954;

/**
 * Rebuild jobs in the live schema's `rebuild_jobs` table (never swapped, so
 * a job outlives the tables it replaces and any instance answers for it),
 * and the one-rebuild-at-a-time lock: a Postgres advisory lock per live
 * schema, held by a connection of its own for as long as the job runs, so
 * that it is released when the process dies and a job still recorded as
 * running without it is known to be abandoned.
 */
export class PostgresRebuildJobStore implements RebuildJobStore {
  private readonly schema: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly connection: PgConnectionConfig,
    private readonly logger: Logger,
  ) {
    this.schema = String((dataSource.options as { schema?: string }).schema ?? 'public');
  }

  private get table(): string {
    return `"${this.schema}"."rebuild_jobs"`;
  }

  async tryLock(): Promise<RebuildLock | undefined> {
    let client: pg.Client | undefined;
    try {
      client = new pg.Client({ ...pgConnectionOptions(this.connection), application_name: 'writ-projection-rebuild' });
      // A connection lost while the job runs loses the lock with it; it must not crash the process.
      client.on('error', (error) => this.logger.warn({ err: error }, 'the rebuild lock connection failed; the lock is released'));
      await client.connect();
      const result = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', [LOCK_CLASS, this.schema]);
      if (result.rows[0]?.locked !== true) {
        await client.end().catch(() => undefined);
        return undefined;
      }
    } catch (error) {
      await client?.end().catch(() => undefined);
      throw databaseError('take the rebuild lock', error);
    }
    const held = client;
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        await held.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, this.schema]).catch(() => undefined);
        await held.end().catch(() => undefined);
      },
    };
  }

  async locked(): Promise<boolean> {
    return this.run('look up the rebuild lock', async () => {
      // The two-key form shows up as classid = key 1, objid = key 2 (as an unsigned oid), objsubid = 2.
      const rows: Array<{ n: number }> = await this.dataSource.query(
        `SELECT count(*)::int AS n FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND classid::bigint = $1 AND objid::bigint = (hashtext($2)::bigint & 4294967295) AND objsubid = 2`,
        [LOCK_CLASS, this.schema],
      );
      return (rows[0]?.n ?? 0) > 0;
    });
  }

  async save(job: ProjectionRebuildJob): Promise<void> {
    await this.run('record a rebuild job', () =>
      this.dataSource.query(
        `INSERT INTO ${this.table} (job_id, state, job, started_at, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (job_id) DO UPDATE SET state = EXCLUDED.state, job = EXCLUDED.job, updated_at = EXCLUDED.updated_at`,
        [job.job_id, job.state, JSON.stringify(job), job.started_at, job.updated_at],
      ),
    );
  }

  async get(jobId: string): Promise<ProjectionRebuildJob | undefined> {
    const rows = await this.run('read a rebuild job', (): Promise<Array<{ job: unknown }>> => this.dataSource.query(`SELECT job FROM ${this.table} WHERE job_id = $1`, [jobId]));
    return this.parse(rows[0]?.job);
  }

  async latest(): Promise<ProjectionRebuildJob | undefined> {
    const rows = await this.run('read the last rebuild job', (): Promise<Array<{ job: unknown }>> =>
      this.dataSource.query(`SELECT job FROM ${this.table} ORDER BY started_at DESC, job_id DESC LIMIT 1`),
    );
    return this.parse(rows[0]?.job);
  }

  async running(): Promise<ProjectionRebuildJob[]> {
    const rows = await this.run('read running rebuild jobs', (): Promise<Array<{ job: unknown }>> =>
      this.dataSource.query(`SELECT job FROM ${this.table} WHERE state = 'running' ORDER BY started_at`),
    );
    return rows.flatMap((row) => {
      const job = this.parse(row.job);
      return job === undefined ? [] : [job];
    });
  }

  /** A record this version cannot read (written by another one) is treated as absent, and logged. */
  private parse(value: unknown): ProjectionRebuildJob | undefined {
    if (value === undefined) return undefined;
    const parsed = safeParseContract('ProjectionRebuildJob', ProjectionRebuildJob, value);
    if (parsed.ok) return parsed.value;
    this.logger.warn({ code: parsed.error.code }, 'a recorded rebuild job does not match ProjectionRebuildJob; ignored');
    return undefined;
  }

  private async run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw databaseError(operation, error);
    }
  }
}
