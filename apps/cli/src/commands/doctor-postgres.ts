import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pgAuthMethod, pgServiceRole, readPgPassword } from '@writ/runtime';
import pg from 'pg';
import type { CliIo } from '../cli-io.js';
import { DEFAULT_PG_ADMIN_URL } from './pg-setup.js';

/** One finding (the shape of doctor.ts's `DoctorCheck`, declared here so the two files import in one direction only). */
interface PostgresCheck {
  readonly check: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly fix?: string;
}

/**
 * `writ doctor`'s Postgres check: the projection's role (`<WRIT_PG_SCHEMA>_projection`)
 * is asked for a scram-sha-256 password (a startup message that sends none; never
 * `trust`), and the password file `writ init` wrote lets it in. Reads only.
 * Where: WRIT_PG_URL (the projection's), else the host and database of
 * WRIT_PG_ADMIN_URL (default 127.0.0.1:5432/writ); the password from
 * WRIT_PG_PASSWORD_FILE, else `<home>/pg/projection.password`.
 */
export async function postgresAuthCheck(io: CliIo): Promise<PostgresCheck> {
  const check = 'postgres_auth';
  const home = resolve(io.cwd, io.env['WRIT_HOME'] || 'var/writ');
  const schema = io.env['WRIT_PG_SCHEMA'] || (await readFile(resolve(home, 'writ.env'), 'utf8').then((text) => /^WRIT_PG_SCHEMA=(\S+)$/m.exec(text)?.[1], () => undefined));
  if (schema === undefined) return { check, ok: false, detail: `no WRIT_PG_SCHEMA (env, or ${home}/writ.env)`, fix: 'run writ init, then . var/writ/writ.env' };
  let url: URL;
  try {
    url = new URL(io.env['WRIT_PG_URL'] || io.env['WRIT_PG_ADMIN_URL'] || DEFAULT_PG_ADMIN_URL);
  } catch {
    return { check, ok: false, detail: 'WRIT_PG_URL / WRIT_PG_ADMIN_URL is not a URL', fix: 'set it to postgres://<role>@<host>:<port>/<database>' };
  }
  const role = io.env['WRIT_PG_URL'] ? decodeURIComponent(url.username) : pgServiceRole(schema, 'projection');
  const target = { host: decodeURIComponent(url.hostname) || '127.0.0.1', port: url.port === '' ? 5432 : Number(url.port), user: role, database: decodeURIComponent(url.pathname.slice(1)) || 'writ' };
  const where = `${target.host}:${target.port}/${target.database}`;
  let method;
  try {
    method = await pgAuthMethod(target);
  } catch (error) {
    return { check, ok: false, detail: `no Postgres at ${where}: ${(error as Error).message}`, fix: 'start it: scripts/stack-up.sh' };
  }
  if (method.method !== 'scram-sha-256') {
    return {
      check,
      ok: false,
      detail: `${where} answers role ${role} with ${method.method}${method.detail === undefined ? '' : ` (${method.detail})`}, not a scram-sha-256 password request`,
      fix: "scripts/stack-up.sh puts Writ's pg_hba.conf rule (scram-sha-256 for +writ_services) before the machine's own lines",
    };
  }
  const passwordFile = resolve(io.cwd, io.env['WRIT_PG_PASSWORD_FILE'] || resolve(home, 'pg', 'projection.password'));
  const client = new pg.Client({ ...target, password: () => readPgPassword(passwordFile), application_name: 'writ-doctor' });
  try {
    await client.connect();
    return { check, ok: true, detail: `role ${role} at ${where}: scram-sha-256 required, its password file ${passwordFile} lets it in` };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return {
      check,
      ok: false,
      detail: `role ${role} at ${where}: scram-sha-256 required, but the password file ${passwordFile} does not let it in (${typeof code === 'string' ? `SQLSTATE ${code}` : (error as Error).message})`,
      fix: 'writ pg setup (creates the role, or sets the password the file holds)',
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}
