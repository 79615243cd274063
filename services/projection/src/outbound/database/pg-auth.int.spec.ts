import { spawn } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ensurePgServiceRole, generatePgPassword, pgAuthMethod, writeSecret } from '@writ/runtime';
import { connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PG_URL, createTestPgRole, withTestAdmin, type TestPgRole } from '../../../test/projection-rig.js';
import { dropProjectionSchema, openProjectionDatabase, pgConnectionOptions } from './projection-database.js';

// The projection logs in as its own role with a scram-sha-256 password that
// Postgres really checks (docs/security.md, "Postgres"): Writ's pg_hba.conf
// rule (scripts/stack-up.sh) puts every member of writ_services before the
// trust this development machine gives loopback connections.

const MAIN = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));
const HBA_FIX = "run scripts/stack-up.sh: it requires scram-sha-256 of Writ's service roles (+writ_services) in pg_hba.conf, before the machine's trust lines";

async function connectAs(role: TestPgRole, password: string | undefined): Promise<pg.Client> {
  const { host, port, user, database } = pgConnectionOptions(role.url);
  const client = new pg.Client({ host, port, user, database, ...(password === undefined ? {} : { password }) });
  await client.connect();
  return client;
}

async function sqlstateOf(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? `no SQLSTATE: ${(error as Error).message}`;
  }
}

describe('Postgres: each Writ service role logs in with its own scram-sha-256 password (real Postgres)', () => {
  const database = pgConnectionOptions(TEST_PG_URL).database;
  let mine: TestPgRole;
  let other: TestPgRole;
  const mySchema = uniqueName('pga');
  const otherSchema = uniqueName('pgb');

  beforeAll(async () => {
    mine = await createTestPgRole(mySchema);
    other = await createTestPgRole(otherSchema);
  });

  afterAll(async () => {
    for (const schema of [mySchema, otherSchema]) await dropProjectionSchema(TEST_PG_URL, schema).catch(() => undefined);
    await mine?.dispose();
    await other?.dispose();
  });

  const passwordOf = async (role: TestPgRole) => (await readFile(role.passwordFile, 'utf8')).trim();

  it("given Writ's pg_hba.conf rule, then the server demands SCRAM of a Writ role before anything else (the machine's trust does not reach it)", async () => {
    const { host, port } = pgConnectionOptions(TEST_PG_URL);
    expect(await pgAuthMethod({ host, port, user: mine.role, database }), HBA_FIX).toMatchObject({ method: 'scram-sha-256' });
  });

  it('given the password file, then the projection role connects, migrates its own schema, and is nothing more than that role', async () => {
    const db = await openProjectionDatabase({ ...mine.connection, schema: mySchema, poolSize: 1 });
    try {
      const rows: Array<{ user: string; owner: string }> = await db.query(
        'SELECT current_user AS user, pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname = $1',
        [mySchema],
      );
      expect(rows[0]).toEqual({ user: mine.role, owner: mine.role });
    } finally {
      await db.destroy();
    }
    const attributes = await withTestAdmin(async (admin) => (await admin.query('SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = $1', [mine.role])).rows[0]);
    expect(attributes).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false, rolreplication: false, rolbypassrls: false, rolcanlogin: true });
    expect((await stat(mine.passwordFile)).mode & 0o777).toBe(0o600);
  });

  it('given a wrong password, or none, then Postgres refuses the login', async () => {
    expect(await sqlstateOf(connectAs(mine, 'not-the-password')), HBA_FIX).toBe('28P01');
    expect(await sqlstateOf(connectAs(mine, await passwordOf(other))), HBA_FIX).toBe('28P01');
    expect(await sqlstateOf(connectAs(mine, ''))).not.toBeUndefined();
    expect(await sqlstateOf(connectAs(mine, undefined))).not.toBeUndefined();
  });

  it('given the projection role, then it can create neither a database nor a role, nor read, write or drop another deployment\'s schema', async () => {
    await withTestAdmin((admin) => admin.query(`CREATE TABLE IF NOT EXISTS "${otherSchema}"."secrets" (v text); ALTER TABLE "${otherSchema}"."secrets" OWNER TO "${other.role}"`));
    const client = await connectAs(mine, await passwordOf(mine));
    try {
      expect(await sqlstateOf(client.query(`CREATE DATABASE "${uniqueName('stolen')}"`))).toBe('42501');
      expect(await sqlstateOf(client.query(`CREATE ROLE "${uniqueName('stolen')}"`))).toBe('42501');
      expect(await sqlstateOf(client.query(`ALTER ROLE "${mine.role}" SUPERUSER`))).toBe('42501');
      expect(await sqlstateOf(client.query(`SELECT * FROM "${otherSchema}"."secrets"`))).toBe('42501');
      expect(await sqlstateOf(client.query(`INSERT INTO "${otherSchema}"."secrets" VALUES ('x')`))).toBe('42501');
      expect(await sqlstateOf(client.query(`CREATE TABLE "${otherSchema}"."planted" (v text)`))).toBe('42501');
      expect(await sqlstateOf(client.query(`DROP SCHEMA "${otherSchema}" CASCADE`))).toBe('42501');
      expect(await sqlstateOf(client.query(`GRANT USAGE ON SCHEMA "${otherSchema}" TO "${mine.role}"`))).toBe('42501');
      // Its own schema is its own.
      expect(await sqlstateOf(client.query(`CREATE TABLE "${mySchema}"."mine" (v text); INSERT INTO "${mySchema}"."mine" VALUES ('ok')`))).toBeUndefined();
    } finally {
      await client.end();
    }
  });

  it('given a rotated password (role first, then the file), then the running pool logs in again with the new one, without a restart, and the old one is refused', async () => {
    const db = await openProjectionDatabase({ ...mine.connection, schema: mySchema, poolSize: 1 });
    try {
      const old = await passwordOf(mine);
      const fresh = generatePgPassword();
      await withTestAdmin((admin) => ensurePgServiceRole((sql, params) => admin.query(sql, params === undefined ? undefined : [...params]), { role: mine.role, schema: mySchema, database, password: fresh }));
      await writeSecret(mine.passwordFile, `${fresh}\n`);
      // the live session survives a rotation; end it, as a revocation would
      await withTestAdmin((admin) => admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [mine.role]));
      let rows: Array<{ user: string }> | undefined;
      for (let attempt = 0; attempt < 5 && rows === undefined; attempt += 1) {
        rows = await db.query('SELECT current_user AS user').catch(() => undefined);
      }
      expect(rows).toEqual([{ user: mine.role }]);
      expect(await sqlstateOf(connectAs(mine, old))).toBe('28P01');
    } finally {
      await db.destroy();
    }
  });

  it('given a schema the admin made before roles existed (tables, sequences), then setting the role up hands it over and the role migrates and writes it', async () => {
    const legacy = uniqueName('pgl');
    const before = await openProjectionDatabase({ url: TEST_PG_URL, schema: legacy, poolSize: 1 });
    await before.destroy();
    const role = await createTestPgRole(legacy);
    try {
      const db = await openProjectionDatabase({ ...role.connection, schema: legacy, poolSize: 1 });
      try {
        await db.query(`INSERT INTO "${legacy}"."checkpoints" (projector, last_seq) VALUES ('handover-test', 1)`);
        const owners: Array<{ owner: string }> = await db.query(
          `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1)`,
          [legacy],
        );
        expect(owners).toEqual([{ owner: role.role }]);
      } finally {
        await db.destroy();
      }
    } finally {
      await dropProjectionSchema(TEST_PG_URL, legacy).catch(() => undefined);
      await role.dispose();
    }
  });

  it('given a wrong password file, then the service fails with PROJECTION_DB_UNAVAILABLE and neither the error nor any log line holds a password', async () => {
    const wrong = `${mine.passwordFile}.wrong`;
    const wrongPassword = `wrong-${uniqueName('pw')}`;
    await writeFile(wrong, `${wrongPassword}\n`, { mode: 0o600 });
    const secrets = [wrongPassword, await passwordOf(mine)];

    let failure: unknown;
    try {
      await openProjectionDatabase({ url: mine.url, passwordFile: wrong, schema: mySchema, poolSize: 1 });
    } catch (error) {
      failure = error;
    }
    expect((failure as { code?: string }).code).toBe('PROJECTION_DB_UNAVAILABLE');
    expect((failure as { details?: { sqlstate?: string } }).details?.sqlstate).toBe('28P01');
    const described = JSON.stringify({ message: (failure as Error).message, details: (failure as { details?: unknown }).details, cause: String((failure as Error).cause), stack: (failure as Error).stack });
    for (const secret of secrets) expect(described).not.toContain(secret);

    // The built service, as writ-up.sh starts it: it exits, and its output names the failure, never a password.
    const nc = await connectTestNats('pg-auth-test');
    const root = uniqueName('t');
    const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
    try {
      const env: Record<string, string> = {
        PATH: process.env['PATH'] ?? '',
        ...(process.env['WRIT_NATS_URL'] === undefined ? {} : { WRIT_NATS_URL: process.env['WRIT_NATS_URL'] }),
        ...(process.env['WRIT_NATS_CREDS'] === undefined ? {} : { WRIT_NATS_CREDS: process.env['WRIT_NATS_CREDS'] }),
        WRIT_SUBJECT_ROOT: root,
        WRIT_EVENTS_STREAM: streams.events,
        WRIT_INGRESS_STREAM: streams.ingress,
        WRIT_COMMANDS_STREAM: streams.commands,
        WRIT_DLQ_STREAM: streams.dlq,
        WRIT_EVENTS_MAX_BYTES: String(8 * 1024 ** 2),
        WRIT_BUS_MAX_BYTES: String(8 * 1024 ** 2),
        WRIT_HTTP_PORT: '0',
        WRIT_PG_URL: mine.url,
        WRIT_PG_PASSWORD_FILE: wrong,
        WRIT_PG_SCHEMA: mySchema,
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'debug',
      };
      const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const status = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      expect(status, output).not.toBe(0);
      expect(output).toContain('PROJECTION_DB_UNAVAILABLE');
      expect(output).toContain('28P01');
      for (const secret of secrets) expect(output).not.toContain(secret);
    } finally {
      await deleteStreams(nc, streams.events, streams.ingress, streams.commands, streams.dlq);
      await nc.close();
    }
  }, 60_000);
});
