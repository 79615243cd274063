import pg from 'pg';
import { DataSource } from 'typeorm';
import { ProjectionError, isWritCoded } from '../../application/projection-errors.js';
import { ENTITIES } from './entities.js';
import { CreateProjectionViews1751760000000 } from './migrations/1751760000000-create-projection-views.js';
import { AddQueueCatalogTimelineCellViews1764150000000 } from './migrations/1764150000000-add-queue-catalog-timeline-cell-views.js';
import { AddQuarantinedMessages1765200000000 } from './migrations/1765200000000-add-quarantined-messages.js';

export interface ProjectionDatabaseConfig {
  readonly url: string;
  /** The Postgres schema holding the views (created if missing). */
  readonly schema: string;
  readonly poolSize: number;
}

export const MIGRATIONS = [CreateProjectionViews1751760000000, AddQueueCatalogTimelineCellViews1764150000000, AddQuarantinedMessages1765200000000];

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function quoted(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `schema ${JSON.stringify(schema)} must be a lowercase Postgres identifier`);
  }
  return `"${schema}"`;
}

/** Any failure of Postgres as a coded error; a Writ error passes through unchanged (a driver's SQLSTATE code is not one). */
export function databaseError(operation: string, error: unknown): unknown {
  if (isWritCoded(error)) return error;
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : undefined;
  return new ProjectionError('PROJECTION_DB_UNAVAILABLE', `Postgres failed to ${operation}${code === undefined ? '' : ` (SQLSTATE ${code})`}; check WRIT_PG_URL and the database`, {
    cause: error,
    details: { operation, ...(code === undefined ? {} : { sqlstate: code }) },
  });
}

async function withClient<T>(url: string, operation: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'writ-projection' });
  try {
    await client.connect();
    return await work(client);
  } catch (error) {
    throw databaseError(operation, error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Opens the projection database: creates the schema if needed (typeorm keeps
 * its migrations table inside it, so it must exist first), then initializes
 * typeorm with `migrationsRun` — the migrations are the only way tables are
 * made; `synchronize` is never on.
 */
export async function openProjectionDatabase(config: ProjectionDatabaseConfig): Promise<DataSource> {
  const schema = quoted(config.schema);
  await withClient(config.url, 'create the projection schema', (client) => client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`));
  const dataSource = new DataSource({
    type: 'postgres',
    url: config.url,
    schema: config.schema,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: true,
    migrationsTransactionMode: 'all',
    synchronize: false,
    logging: false,
    poolSize: config.poolSize,
    applicationName: 'writ-projection',
  });
  try {
    await dataSource.initialize();
  } catch (error) {
    throw databaseError('open the projection database and run its migrations', error);
  }
  return dataSource;
}

/** Whether `schema` exists (a rebuild refuses to reuse one). */
export async function schemaExists(url: string, schema: string): Promise<boolean> {
  quoted(schema);
  return withClient(url, 'look up a schema', async (client) => {
    const result = await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    return (result.rowCount ?? 0) > 0;
  });
}

/** Drops a projection schema and everything in it (tests, rebuild targets). */
export async function dropProjectionSchema(url: string, schema: string): Promise<void> {
  const name = quoted(schema);
  await withClient(url, 'drop a projection schema', (client) => client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`));
}
