import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropPgServiceRole, initWritHome, type WritHome } from '@writ/runtime';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type CliIo } from './main.js';

// `writ pg setup` against the machine's Postgres (admin: its postgres superuser on loopback, as
// scripts/writ-up.sh uses it), in database writ_test, for a fresh WRIT_HOME of its own.
const ADMIN_URL = process.env['WRIT_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/writ_test';

let dir: string;
let home: WritHome;

async function writ(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: { WRIT_HOME: home.home, WRIT_PG_ADMIN_URL: ADMIN_URL, ...env }, cwd: dir, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), now: () => new Date() };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function loginAs(role: string, password: string): Promise<string | undefined> {
  const url = new URL(ADMIN_URL);
  const client = new pg.Client({ host: url.hostname, port: Number(url.port || 5432), database: url.pathname.slice(1), user: role, password });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? 'failed';
  } finally {
    await client.end().catch(() => undefined);
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'writ-pg-setup-'));
  home = await initWritHome({ home: join(dir, 'writ') });
});

afterAll(async () => {
  await admin(async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS "${home.pg.schema}" CASCADE`);
    await dropPgServiceRole((sql, params) => client.query(sql, params === undefined ? undefined : [...params]), home.pg.roles.projection);
  }).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

describe('writ pg setup', () => {
  it("given a new deployment, then the projection's role exists with writ init's password (scram-sha-256), owns the schema, and nothing printed holds the password", async () => {
    const password = (await readFile(home.pg.passwordFiles.projection, 'utf8')).trim();
    const result = await writ(['pg', 'setup', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const outcome = JSON.parse(result.stdout) as { schema: string; projectionUrl: string; roles: Array<{ role: string; created: boolean }> };
    expect(outcome.schema).toBe(home.pg.schema);
    expect(outcome.roles[0]).toMatchObject({ role: home.pg.roles.projection, created: true });
    expect(outcome.projectionUrl).toBe(`postgres://${home.pg.roles.projection}@127.0.0.1:5432/writ_test`);
    expect(result.stdout).not.toContain(password);
    const row = await admin(async (client) => (await client.query(`SELECT a.rolpassword LIKE 'SCRAM-SHA-256$%' AS scram, pg_get_userbyid(n.nspowner) AS owner FROM pg_authid a, pg_namespace n WHERE a.rolname = $1 AND n.nspname = $2`, [home.pg.roles.projection, home.pg.schema])).rows[0]);
    expect(row).toEqual({ scram: true, owner: home.pg.roles.projection });
    expect(await loginAs(home.pg.roles.projection, password)).toBeUndefined();
    // and a second run changes nothing but says so
    const again = await writ(['pg', 'setup']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/projection role {2}\S+ \(updated; scram-sha-256/);
  });

  it('given --rotate, then the new password is set and written (0600), the old one is refused, and neither is printed', async () => {
    await writ(['pg', 'setup']);
    const old = (await readFile(home.pg.passwordFiles.projection, 'utf8')).trim();
    const result = await writ(['pg', 'setup', '--rotate']);
    expect(result.code).toBe(0);
    const fresh = (await readFile(home.pg.passwordFiles.projection, 'utf8')).trim();
    expect(fresh).not.toBe(old);
    expect((await stat(home.pg.passwordFiles.projection)).mode & 0o777).toBe(0o600);
    expect(`${result.stdout}${result.stderr}`).not.toContain(fresh);
    expect(`${result.stdout}${result.stderr}`).not.toContain(old);
    expect(await loginAs(home.pg.roles.projection, fresh)).toBeUndefined();
    expect(await loginAs(home.pg.roles.projection, old)).toBe('28P01');
  });

  it("given the role, then writ doctor's postgres_auth check sees scram-sha-256 required and the password file accepted", async () => {
    await writ(['pg', 'setup']);
    const url = new URL(ADMIN_URL);
    const result = await writ(['doctor', '--json', '--host', '127.0.0.9'], { WRIT_NATS_URL: 'nats://127.0.0.9:1', WRIT_PG_URL: `postgres://${home.pg.roles.projection}@${url.host}${url.pathname}`, WRIT_TRUST_ANCHOR: home.trustAnchor });
    const report = JSON.parse(result.stdout) as { checks: Array<{ check: string; ok: boolean; detail: string }> };
    expect(report.checks.find((check) => check.check === 'postgres_auth')).toMatchObject({ ok: true, detail: expect.stringMatching(/scram-sha-256 required/) });
    // a wrong password file fails the check with its next step
    const wrong = await writ(['doctor', '--json', '--host', '127.0.0.9'], { WRIT_NATS_URL: 'nats://127.0.0.9:1', WRIT_PG_URL: `postgres://${home.pg.roles.projection}@${url.host}${url.pathname}`, WRIT_PG_PASSWORD_FILE: home.pg.passwordFiles.admin });
    expect((JSON.parse(wrong.stdout) as typeof report).checks.find((check) => check.check === 'postgres_auth')).toMatchObject({ ok: false });
  });
});
