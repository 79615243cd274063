import { readPgPassword } from '@writ/runtime';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { ProjectionError, isWritCoded } from '../../application/projection-errors.js';
import { ENTITIES } from './entities.js';
import { CreateProjectionViews1751760000000 } from './migrations/1751760000000-create-projection-views.js';
import { AddQueueCatalogTimelineCellViews1764150000000 } from './migrations/1764150000000-add-queue-catalog-timeline-cell-views.js';
import { AddQuarantinedMessages1765200000000 } from './migrations/1765200000000-add-quarantined-messages.js';
import { AddRowVersions1766000000000 } from './migrations/1766000000000-add-row-versions.js';
import { AddListPagination1766100000000 } from './migrations/1766100000000-add-list-pagination.js';
import { AddKnowledgeViews1767000000000 } from './migrations/1767000000000-add-knowledge-views.js';
import { AddAttemptContextPacks1767100000000 } from './migrations/1767100000000-add-attempt-context-packs.js';
import { AddConversationViews1767200000000 } from './migrations/1767200000000-add-conversation-views.js';
import { AddMemoryView1767300000000 } from './migrations/1767300000000-add-memory-view.js';

/**
 * Where Postgres is and who logs in: `url` names host, port, database and
 * role (`postgres://<role>@<host>:<port>/<db>`); the password comes from
 * `passwordFile` (0600, read on every new connection, so a rotated password
 * is picked up without a restart), never from the URL of a service.
 */
export interface PgConnectionConfig {
  readonly url: string;
  readonly passwordFile?: string;
}

export interface ProjectionDatabaseConfig extends PgConnectionConfig {
  /** The Postgres schema holding the views (created if missing). */
  readonly schema: string;
  readonly poolSize: number;
}

export const MIGRATIONS = [
  CreateProjectionViews1751760000000,
  AddQueueCatalogTimelineCellViews1764150000000,
  AddQuarantinedMessages1765200000000,
  AddRowVersions1766000000000,
  AddListPagination1766100000000,
  AddKnowledgeViews1767000000000,
  AddAttemptContextPacks1767100000000,
  AddConversationViews1767200000000,
  AddMemoryView1767300000000,
];

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function quoted(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `schema ${JSON.stringify(schema)} must be a lowercase Postgres identifier`);
  }
  return `"${schema}"`;
}

/** First key of the migration lock (`pg_advisory_lock(int4, int4)`): "WRMG"; the second is `hashtext(<schema>)`. */
const MIGRATION_LOCK_CLASS = 0x57524d47;

/** Any failure of Postgres as a coded error; a Writ error passes through unchanged (a driver's SQLSTATE code is not one). */
export function databaseError(operation: string, error: unknown): unknown {
  if (isWritCoded(error)) return error;
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : undefined;
  return new ProjectionError('PROJECTION_DB_UNAVAILABLE', `Postgres failed to ${operation}${code === undefined ? '' : ` (SQLSTATE ${code})`}; check WRIT_PG_URL, WRIT_PG_PASSWORD_FILE and the database`, {
    cause: error,
    details: { operation, ...(code === undefined ? {} : { sqlstate: code }) },
  });
}

/** The connection's parts, parsed here (never handed to a driver as a string, so no driver error can echo it). */
export interface PgConnectionOptions {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  readonly password?: string | (() => Promise<string>);
  /** From `?sslmode=`: `disable` → false, `no-verify` → no certificate check, `require` / `verify-ca` / `verify-full` → verified TLS. */
  readonly ssl?: boolean | { readonly rejectUnauthorized: false };
}

/** A URL (`postgres[ql]://[user[:password]@]host[:port]/database[?host=/socket/dir]`) and a password file as driver options. */
export function pgConnectionOptions(connection: string | PgConnectionConfig): PgConnectionOptions {
  const { url, passwordFile } = typeof connection === 'string' ? { url: connection, passwordFile: undefined } : connection;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'WRIT_PG_URL is not a URL (postgres://<role>@<host>:<port>/<database>)');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'WRIT_PG_URL must be a postgres:// URL');
  }
  const password = passwordFile !== undefined ? () => readPgPassword(passwordFile) : parsed.password === '' ? undefined : decodeURIComponent(parsed.password);
  const sslmode = parsed.searchParams.get('sslmode');
  const ssl = sslmode === null || sslmode === 'prefer' || sslmode === 'allow' ? undefined : sslmode === 'disable' ? false : sslmode === 'no-verify' ? ({ rejectUnauthorized: false } as const) : true;
  return {
    host: parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname) || '127.0.0.1'),
    port: parsed.port === '' ? 5432 : Number(parsed.port),
    user: decodeURIComponent(parsed.username) || 'postgres',
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres',
    ...(password === undefined ? {} : { password }),
    ...(ssl === undefined ? {} : { ssl }),
  };
}

async function withClient<T>(connection: string | PgConnectionConfig, operation: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  let client: pg.Client | undefined;
  try {
    client = new pg.Client({ ...pgConnectionOptions(connection), application_name: 'writ-projection' });
    await client.connect();
    return await work(client);
  } catch (error) {
    throw databaseError(operation, error);
  } finally {
    await client?.end().catch(() => undefined);
  }
}

/**
 * Opens the projection database: creates the schema if needed (typeorm keeps
 * its migrations table inside it, so it must exist first), then initializes
 * typeorm with `migrationsRun` — the migrations are the only way tables are
 * made; `synchronize` is never on. Both under an advisory lock per schema, so
 * replicas starting together migrate one after the other.
 */
export async function openProjectionDatabase(config: ProjectionDatabaseConfig): Promise<DataSource> {
  const schema = quoted(config.schema);
  const { user, ...connection } = pgConnectionOptions(config);
  const dataSource = new DataSource({
    type: 'postgres',
    ...connection,
    username: user,
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
  // Neither CREATE SCHEMA IF NOT EXISTS nor typeorm's migrations take a lock: two instances starting on a new
  // schema both created its types and one failed (23505). One at a time per schema; the lock goes with the session.
  await withClient(config, 'lock the projection schema for its migrations', async (client) => {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [MIGRATION_LOCK_CLASS, config.schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    try {
      await dataSource.initialize();
    } catch (error) {
      throw databaseError('open the projection database and run its migrations', error);
    }
  });
  return dataSource;
}

/** Whether `schema` exists (a rebuild refuses to reuse one). */
export async function schemaExists(connection: string | PgConnectionConfig, schema: string): Promise<boolean> {
  quoted(schema);
  return withClient(connection, 'look up a schema', async (client) => {
    // pg_namespace, not information_schema: a schema the role may not see (another deployment's) exists too.
    const result = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    return (result.rowCount ?? 0) > 0;
  });
}

/** Drops a projection schema and everything in it (tests, rebuild targets). */
export async function dropProjectionSchema(connection: string | PgConnectionConfig, schema: string): Promise<void> {
  const name = quoted(schema);
  await withClient(connection, 'drop a projection schema', (client) => client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`));
}
