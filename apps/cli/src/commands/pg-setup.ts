import { readFile, rename } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ensurePgServiceRole, fileExists, generatePgPassword, pgServiceRole, readPgPassword, writeSecret } from '@writ/runtime';
import pg from 'pg';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';

/** The machine's Postgres as its superuser over loopback (the development machines trust that; an operator's admin connection). */
export const DEFAULT_PG_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/writ';

export interface PgSetupOptions {
  /** The deployment's directory (default WRIT_HOME, else ./var/writ): its writ.env names the schema, pg/ holds the passwords. */
  readonly home?: string;
  /** An admin connection (default WRIT_PG_ADMIN_URL, else postgres://postgres@127.0.0.1:5432/writ); its database is the one the roles get. */
  readonly adminUrl?: string;
  /** A new password for every service role: the role is altered first, then the file replaced (live connections stay; new ones use the new one). */
  readonly rotate?: boolean;
  readonly json?: boolean;
}

export interface PgSetupResult {
  readonly database: string;
  readonly schema: string;
  readonly roles: ReadonlyArray<{ readonly service: string; readonly role: string; readonly passwordFile: string; readonly created: boolean; readonly rotated: boolean }>;
  /** The URL a service is given (no password; the file carries it). */
  readonly projectionUrl: string;
}

/**
 * `writ pg setup`: as a Postgres admin, creates (or brings up to date) the
 * role of each Writ service that uses Postgres — today the projection —
 * with the password `writ init` generated under `<home>/pg/` (0600), set as
 * a SCRAM-SHA-256 verifier so the password itself never crosses the wire;
 * gives it its deployment's schema (handing over a schema made before roles
 * existed). Idempotent. `--rotate` generates a new password. Prints paths and
 * role names, never a password.
 */
export async function pgSetup(options: PgSetupOptions, io: CliIo): Promise<PgSetupResult> {
  const home = resolve(io.cwd, options.home ?? (io.env['WRIT_HOME'] || 'var/writ'));
  const adminUrl = options.adminUrl ?? (io.env['WRIT_PG_ADMIN_URL'] || DEFAULT_PG_ADMIN_URL);
  const schema = await deploymentSchema(home);
  let parsed: URL;
  try {
    parsed = new URL(adminUrl);
  } catch {
    throw new CliError('CLI_USAGE', 'the admin URL (--admin-url / WRIT_PG_ADMIN_URL) is not a postgres:// URL');
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres';
  const passwordFile = join(home, 'pg', 'projection.password');
  if (!(await fileExists(passwordFile))) throw new CliError('CLI_FILE_UNREADABLE', `${passwordFile} is missing: run writ init --home ${home} first (it generates the password)`);
  const role = pgServiceRole(schema, 'projection');
  const password = options.rotate === true ? generatePgPassword() : await readPgPassword(passwordFile);

  const client = new pg.Client({ connectionString: adminUrl, application_name: 'writ-pg-setup' });
  let outcome;
  try {
    await client.connect();
    outcome = await ensurePgServiceRole((sql, params) => client.query(sql, params === undefined ? undefined : [...params]), { role, schema, database, password });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // The driver's message (never the URL, so never an admin password in it) and the SQLSTATE.
    throw new CliError('CLI_PG_SETUP_FAILED', `Postgres refused to set up the role ${role}: ${(error as Error).message}${typeof code === 'string' ? ` (SQLSTATE ${code})` : ''}; is Postgres up (scripts/stack-up.sh) and the admin URL a superuser's?`);
  } finally {
    await client.end().catch(() => undefined);
  }
  if (options.rotate === true) {
    // Atomic replace: a reader sees the old file or the new one.
    await writeSecret(`${passwordFile}.new`, `${password}\n`);
    await rename(`${passwordFile}.new`, passwordFile);
  }
  const projectionUrl = `postgres://${role}@${parsed.host}/${encodeURIComponent(database)}`;
  const result: PgSetupResult = {
    database,
    schema,
    roles: [{ service: 'projection', role, passwordFile, created: outcome.created, rotated: options.rotate === true }],
    projectionUrl,
  };
  if (options.json === true) {
    io.stdout(JSON.stringify(result));
    return result;
  }
  io.stdout(
    [
      `database         ${database} (schema ${schema})`,
      `projection role  ${role} (${outcome.created ? 'created' : 'updated'}${options.rotate === true ? ', password rotated' : ''}; scram-sha-256; password file ${passwordFile}, 0600)`,
      `projection env   WRIT_PG_URL=${projectionUrl} WRIT_PG_PASSWORD_FILE=${passwordFile} WRIT_PG_SCHEMA=${schema}`,
    ].join('\n'),
  );
  return result;
}

/** `WRIT_PG_SCHEMA` of the deployment's writ.env (written by `writ init`). */
async function deploymentSchema(home: string): Promise<string> {
  const envFile = join(home, 'writ.env');
  let text: string;
  try {
    text = await readFile(envFile, 'utf8');
  } catch {
    throw new CliError('CLI_FILE_UNREADABLE', `${envFile} is missing: run writ init --home ${home} first`);
  }
  const schema = /^WRIT_PG_SCHEMA=([a-z_][a-z0-9_]*)$/m.exec(text)?.[1];
  if (schema === undefined) throw new CliError('CLI_FILE_UNREADABLE', `${envFile} names no WRIT_PG_SCHEMA: it was written by an older writ init; move it aside and run writ init again`);
  return schema;
}
