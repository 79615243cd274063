import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pgConnectionOptions } from './projection-database.js';

describe('pgConnectionOptions', () => {
  it('parses host, port, role and database from the URL, and reads the password from the file at connection time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'writ-pgconn-'));
    try {
      const file = join(dir, 'projection.password');
      await writeFile(file, 'first\n', { mode: 0o600 });
      const options = pgConnectionOptions({ url: 'postgres://writ_x_projection@db.internal:6543/writ', passwordFile: file });
      expect(options).toMatchObject({ host: 'db.internal', port: 6543, user: 'writ_x_projection', database: 'writ' });
      expect(typeof options.password).toBe('function');
      expect(await (options.password as () => Promise<string>)()).toBe('first');
      // a rotated file is read by the next connection
      await writeFile(file, 'second\n');
      expect(await (options.password as () => Promise<string>)()).toBe('second');
      // nothing enumerable or printable holds it
      expect(JSON.stringify(options)).not.toContain('second');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('defaults the port and takes sslmode and a socket directory', () => {
    expect(pgConnectionOptions('postgres://r@127.0.0.1/writ')).toEqual({ host: '127.0.0.1', port: 5432, user: 'r', database: 'writ' });
    expect(pgConnectionOptions('postgres://r@h/writ?sslmode=require').ssl).toBe(true);
    expect(pgConnectionOptions('postgres://r@h/writ?sslmode=no-verify').ssl).toEqual({ rejectUnauthorized: false });
    expect(pgConnectionOptions('postgres://r@h/writ?sslmode=disable').ssl).toBe(false);
    expect(pgConnectionOptions('postgres://r@localhost/writ?host=/var/run/postgresql').host).toBe('/var/run/postgresql');
  });

  it('given a missing password file, then the failure names the file, not a password', async () => {
    const options = pgConnectionOptions({ url: 'postgres://r@h/writ', passwordFile: '/nonexistent/projection.password' });
    await expect((options.password as () => Promise<string>)()).rejects.toThrow(/cannot read the Postgres password file \/nonexistent\/projection\.password \(ENOENT\)/);
  });

  it('refuses a URL that is not postgres://, without echoing it', () => {
    expect(() => pgConnectionOptions('mysql://u:hunter2@h/db')).toThrow(/must be a postgres:\/\/ URL$/);
    expect(() => pgConnectionOptions('not a url hunter2')).toThrow(/^WRIT_PG_URL is not a URL/);
  });
});
