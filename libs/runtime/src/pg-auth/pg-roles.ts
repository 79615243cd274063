import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { RuntimeError } from '../runtime-errors.js';

/**
 * Postgres roles of Writ's services: each service that uses Postgres logs in
 * as its own role with its own generated password, authenticated with
 * scram-sha-256. Every such role is a member of `writ_services` (NOLOGIN, no
 * privilege of its own): the `pg_hba.conf` rule `scripts/stack-up.sh` places
 * before any other (`host all +writ_services 127.0.0.1/32 scram-sha-256`)
 * names that group, so a Writ role's password is checked even where the
 * machine trusts every other loopback connection. Least privilege: no
 * superuser, CREATEDB, CREATEROLE, REPLICATION or BYPASSRLS; CONNECT and
 * CREATE (schemas: the projection's rebuild makes sibling schemas it then
 * owns) on its database, and ownership of its own deployment's schema —
 * nothing on another deployment's schema. docs/security.md ("Postgres").
 */
export const PG_SERVICE_GROUP = 'writ_services';

/** A Postgres identifier Writ makes (roles, schemas): quoted without escaping. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A password Writ generates: 32 random bytes, base64url (43 characters; nothing SASLprep would change). */
export function generatePgPassword(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The SCRAM-SHA-256 verifier Postgres stores for `password` (RFC 5802/7677,
 * as `pg_authid.rolpassword` holds it): a role's password is set with this, so
 * the plain password never reaches the server, its statement logs or its
 * error messages.
 */
export function scramSha256Verifier(password: string, options: { readonly salt?: Buffer; readonly iterations?: number } = {}): string {
  const salt = options.salt ?? randomBytes(16);
  const iterations = options.iterations ?? 4096;
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** `<schema>_<service>`: the role of one service of one deployment (roles are the cluster's, schemas the database's). */
export function pgServiceRole(schema: string, service: string): string {
  return identifier(`${schema.slice(0, 62 - service.length)}_${service}`);
}

/** The password in a secret file (its first line; Writ writes it with a trailing newline). Never echoed: a failure names the file only. */
export async function readPgPassword(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new RuntimeError('RUNTIME_CONFIG_INVALID', `cannot read the Postgres password file ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const password = text.split(/\r?\n/)[0] ?? '';
  if (password === '') throw new RuntimeError('RUNTIME_CONFIG_INVALID', `the Postgres password file ${file} is empty`);
  return password;
}

/** Runs one statement over an admin connection (a superuser, or a role with CREATEROLE that owns the database). */
export type PgAdminQuery = (sql: string, params?: readonly unknown[]) => Promise<{ readonly rows: readonly Record<string, unknown>[] }>;

export interface PgServiceRoleSpec {
  readonly role: string;
  /** The deployment's schema, owned by the role (created if missing; handed over with its objects if another role owns it). */
  readonly schema: string;
  /** The database the role may connect to and create schemas in. */
  readonly database: string;
  /** The plain password; only its SCRAM verifier is sent. */
  readonly password: string;
}

/** What `ensurePgServiceRole` did. */
export interface PgServiceRoleOutcome {
  readonly role: string;
  readonly created: boolean;
  /** Objects (the schema, its tables and sequences) whose ownership moved to the role (a schema made before roles existed). */
  readonly handedOver: number;
}

const SQLSTATE_DUPLICATE = new Set(['42710', '23505']);

/**
 * Creates or updates a service's role, idempotently: the group, the role
 * (LOGIN, scram password, no superuser / CREATEDB / CREATEROLE / REPLICATION /
 * BYPASSRLS), its grants on the database, its schema. Re-running sets the
 * password again (rotation is this with a new password).
 */
export async function ensurePgServiceRole(query: PgAdminQuery, spec: PgServiceRoleSpec): Promise<PgServiceRoleOutcome> {
  const role = quoted(spec.role);
  const schema = quoted(spec.schema);
  const database = `"${spec.database.replaceAll('"', '""')}"`;
  const verifier = scramSha256Verifier(spec.password);
  if (!/^[A-Za-z0-9+/=$:-]+$/.test(verifier)) throw new RuntimeError('RUNTIME_CONFIG_INVALID', 'unexpected SCRAM verifier');
  await ensureGroup(query);
  const attributes = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT PASSWORD '${verifier}'`;
  let created = false;
  if (await roleExists(query, spec.role)) {
    await query(`ALTER ROLE ${role} ${attributes}`);
  } else {
    try {
      await query(`CREATE ROLE ${role} ${attributes}`);
      created = true;
    } catch (error) {
      if (!SQLSTATE_DUPLICATE.has(sqlstate(error) ?? '')) throw error;
      await query(`ALTER ROLE ${role} ${attributes}`);
    }
  }
  await query(`GRANT ${PG_SERVICE_GROUP} TO ${role}`);
  await query(`GRANT CONNECT, CREATE ON DATABASE ${database} TO ${role}`);
  let handedOver = 0;
  const owner = await query('SELECT pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname = $1', [spec.schema]);
  const current = owner.rows[0]?.['owner'];
  if (current === undefined) {
    try {
      await query(`CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
    } catch (error) {
      if (!SQLSTATE_DUPLICATE.has(sqlstate(error) ?? '') && sqlstate(error) !== '42P06') throw error;
    }
  } else if (current !== spec.role) {
    await query(`ALTER SCHEMA ${schema} OWNER TO ${role}`);
    handedOver += 1;
  }
  // Objects made before the role existed (by the admin): the role must own them to migrate them.
  const objects = await query(
    `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c
       WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1)
         AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
         AND pg_get_userbyid(c.relowner) <> $2
         AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i')))`,
    [spec.schema, spec.role],
  );
  for (const row of objects.rows) {
    const kind = { r: 'TABLE', p: 'TABLE', f: 'FOREIGN TABLE', v: 'VIEW', m: 'MATERIALIZED VIEW', S: 'SEQUENCE' }[String(row['kind'])] ?? 'TABLE';
    await query(`ALTER ${kind} ${schema}."${String(row['name']).replaceAll('"', '""')}" OWNER TO ${role}`);
    handedOver += 1;
  }
  return { role: spec.role, created, handedOver };
}

/** Drops a service's role and whatever it still owns or was granted (tests; decommissioning a deployment). */
export async function dropPgServiceRole(query: PgAdminQuery, role: string): Promise<void> {
  if (!(await roleExists(query, role))) return;
  await query(`DROP OWNED BY ${quoted(role)} CASCADE`);
  await query(`DROP ROLE IF EXISTS ${quoted(role)}`);
}

async function ensureGroup(query: PgAdminQuery): Promise<void> {
  if (await roleExists(query, PG_SERVICE_GROUP)) return;
  try {
    await query(`CREATE ROLE ${PG_SERVICE_GROUP} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS`);
  } catch (error) {
    // Another setup (a parallel test) made it first.
    if (!SQLSTATE_DUPLICATE.has(sqlstate(error) ?? '')) throw error;
  }
}

async function roleExists(query: PgAdminQuery, role: string): Promise<boolean> {
  return (await query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rows.length > 0;
}

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new RuntimeError('RUNTIME_CONFIG_INVALID', `${JSON.stringify(name)} is not a lowercase Postgres identifier (a-z, 0-9, "_", at most 63 characters)`);
  return name;
}

function quoted(name: string): string {
  return `"${identifier(name)}"`;
}

function sqlstate(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** How a Postgres server asks `user` to authenticate, seen from a startup message that sends no password. */
export type PgAuthMethod = 'trust' | 'scram-sha-256' | 'md5' | 'password' | 'other' | 'refused';

/**
 * Sends a startup message as `user` and reads the server's first answer:
 * `trust` (in without any password: AuthenticationOk), `scram-sha-256`
 * (AuthenticationSASL offering SCRAM-SHA-256), `md5`, `password`
 * (cleartext), `refused` (an error, e.g. no pg_hba.conf line), `other`.
 * Sends no password and ends the connection; what `writ doctor` and the
 * tests use to see that a Writ role's password is really asked for.
 */
export async function pgAuthMethod(target: { readonly host: string; readonly port: number; readonly user: string; readonly database: string }, timeoutMs = 3_000): Promise<{ readonly method: PgAuthMethod; readonly detail?: string }> {
  const { connect } = await import('node:net');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.host, port: target.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${target.host}:${target.port} within ${timeoutMs} ms`));
    }, timeoutMs);
    const params = Buffer.from(`user\0${target.user}\0database\0${target.database}\0\0`);
    const startup = Buffer.alloc(8 + params.length);
    startup.writeInt32BE(startup.length, 0);
    startup.writeInt32BE(196_608, 4); // protocol 3.0
    params.copy(startup, 8);
    let received = Buffer.alloc(0);
    const done = (result: { method: PgAuthMethod; detail?: string }) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    socket.on('connect', () => socket.write(startup));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 5) return;
      const length = received.readInt32BE(1);
      if (received.length < 1 + length) return;
      const body = received.subarray(5, 1 + length);
      if (received[0] === 0x45 /* 'E' */) {
        const fields = body.toString('utf8').split('\0');
        done({ method: 'refused', detail: fields.find((field) => field.startsWith('M'))?.slice(1) ?? 'error' });
        return;
      }
      if (received[0] !== 0x52 /* 'R' */) return done({ method: 'other', detail: `message ${String.fromCharCode(received[0] ?? 0)}` });
      const code = body.readInt32BE(0);
      if (code === 0) return done({ method: 'trust' });
      if (code === 3) return done({ method: 'password' });
      if (code === 5) return done({ method: 'md5' });
      if (code === 10) {
        const mechanisms = body.subarray(4).toString('utf8').split('\0').filter((m) => m !== '');
        return done(mechanisms.includes('SCRAM-SHA-256') ? { method: 'scram-sha-256', detail: mechanisms.join(', ') } : { method: 'other', detail: mechanisms.join(', ') });
      }
      return done({ method: 'other', detail: `authentication request ${code}` });
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
