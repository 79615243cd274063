import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { EventStore } from '@writ/eventstore';
import { dropPgServiceRole, ensurePgServiceRole, generatePgPassword, pgServiceRole, writeSecret } from '@writ/runtime';
import { createLogger } from '@writ/telemetry';
import { NATS_URL, connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpAudience } from '@writ/contracts';
import { generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { mintHttpToken } from '@writ/runtime';
import { createProjectionApp, type ProjectionApp } from '../src/bootstrap.js';
import { loadProjectionConfig, type ProjectionConfig } from '../src/config.js';
import { dropProjectionSchema, type PgConnectionConfig } from '../src/outbound/database/projection-database.js';
import type { StoryEvent } from './governed-path.fixture.js';

/** The ADMIN connection tests set up and inspect with (as an operator would); the service under test logs in as its own role (`createTestPgRole`). */
export const TEST_PG_URL = process.env['WRIT_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/writ_test';
const MiB = 1024 ** 2;

/** A service role of its own for one test, as `writ pg setup` makes one for a deployment. */
export interface TestPgRole {
  readonly role: string;
  /** `postgres://<role>@<host>/<database>`: no password in it. */
  readonly url: string;
  /** The 0600 file holding the role's generated password. */
  readonly passwordFile: string;
  readonly connection: PgConnectionConfig;
  /** Drops the role and everything it owns (its schemas), and the password file. */
  dispose(): Promise<void>;
}

/** Runs `work` over an admin connection to TEST_PG_URL. */
export async function withTestAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/**
 * Creates `<schema>_projection` (scram-sha-256, a generated password in a 0600
 * file, member of writ_services, owner of `schema`) over the admin connection.
 * The role's password is checked only if `scripts/stack-up.sh` put Writ's
 * pg_hba.conf rule in place; `pg-auth.int.spec.ts` fails with that fix if not.
 */
export async function createTestPgRole(schema: string): Promise<TestPgRole> {
  const role = pgServiceRole(schema, 'projection');
  const admin = new URL(TEST_PG_URL);
  const database = decodeURIComponent(admin.pathname.replace(/^\//, ''));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'writ-pg-'));
  const passwordFile = path.join(dir, 'projection.password');
  const password = generatePgPassword();
  await writeSecret(passwordFile, `${password}\n`);
  await withTestAdmin((client) => ensurePgServiceRole((sql, params) => client.query(sql, params === undefined ? undefined : [...params]), { role, schema, database, password }));
  const url = `postgres://${role}@${admin.host}/${encodeURIComponent(database)}`;
  return {
    role,
    url,
    passwordFile,
    connection: { url, passwordFile },
    async dispose() {
      await withTestAdmin((client) => dropPgServiceRole((sql, params) => client.query(sql, params === undefined ? undefined : [...params]), role)).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One test's own world on the real servers: a subject root, its four streams
 * (small: the server reserves max_bytes), a Postgres schema in writ_test,
 * and the projection service started in-process on a free port.
 */
export interface Rig {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly root: string;
  readonly config: ProjectionConfig;
  /** The test's own writer on the same log (plays ingress, orchestrator, policy, approval, executor, receipt). */
  readonly store: EventStore;
  readonly db: pg.Client;
  readonly table: (name: string) => string;
  start(): Promise<ProjectionApp>;
  /** Appends story events to their aggregates in order; returns the stream sequence of the last one. */
  append(events: readonly StoryEvent[]): Promise<number>;
  /** Appends whole stories, `concurrency` at a time (each in order; stories interleave in the log); returns the log's last stream sequence. */
  appendStories(stories: readonly (readonly StoryEvent[])[], concurrency?: number): Promise<number>;
  /** The live schema's name. */
  readonly schema: string;
  checkpoint(): Promise<number>;
  /** Waits until the projector's checkpoint reaches `streamSeq`. */
  caughtUp(streamSeq: number): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * The tests' reader of the API: the trust anchor's operator (role operator, scope all), whose
 * key signs the bearer token `http()` sends unless a test passes its own `authorization`.
 */
export const TEST_READER = 'test-operator';
const readerKey: Promise<Ed25519SigningKey> = generateEd25519Key({ kid: 'test-operator-k1' });
let anchorFile: string | undefined;
async function testTrustAnchor(): Promise<string> {
  if (anchorFile !== undefined) return anchorFile;
  const file = join(mkdtempSync(join(tmpdir(), 'writ-projection-anchor-')), 'trust-anchor.json');
  writeFileSync(file, JSON.stringify({ principal_id: TEST_READER, keys: [(await readerKey).publicJwk] }));
  anchorFile = file;
  return file;
}

/** `Bearer <token>` for the app's API, signed by `key` as `principalId` (default the test operator). */
export async function bearer(app: { readonly config: ProjectionConfig }, as: { readonly principalId: string; readonly key: Ed25519SigningKey } | undefined = undefined): Promise<string> {
  const signer = as ?? { principalId: TEST_READER, key: await readerKey };
  return `Bearer ${await mintHttpToken({ principalId: signer.principalId, key: signer.key, audience: httpAudience(app.config.subjects.root), now: new Date() })}`;
}

/** `env`: more of the service's variables (they win over the rig's). */
export async function createRig(env: Record<string, string> = {}): Promise<Rig> {
  const nc = await connectTestNats('projection-test');
  const jsm = await jetstreamManager(nc);
  const root = uniqueName('t');
  const streams = { events: uniqueName('EVT'), ingress: uniqueName('ING'), commands: uniqueName('CMD'), dlq: uniqueName('DLQ') };
  const schema = uniqueName('proj');
  const pgRole = await createTestPgRole(schema);
  const config = loadProjectionConfig({
    // The NATS the tests connect to (WRIT_NATS_URL), not the default port.
    WRIT_NATS_URL: NATS_URL,
    WRIT_SUBJECT_ROOT: root,
    WRIT_HTTP_PORT: '0',
    WRIT_HTTP_HOST: '127.0.0.1',
    WRIT_EVENTS_STREAM: streams.events,
    WRIT_INGRESS_STREAM: streams.ingress,
    WRIT_COMMANDS_STREAM: streams.commands,
    WRIT_DLQ_STREAM: streams.dlq,
    WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
    WRIT_BUS_MAX_BYTES: String(16 * MiB),
    // The service logs in as its own role with its password file, as in a deployment.
    WRIT_PG_URL: pgRole.url,
    WRIT_PG_PASSWORD_FILE: pgRole.passwordFile,
    WRIT_PG_SCHEMA: schema,
    WRIT_PG_POOL_SIZE: '4',
    WRIT_UPSTREAM_TIMEOUT_MS: '1000',
    WRIT_BUS_BACKOFF_INITIAL_MS: '50',
    WRIT_BUS_PULL_EXPIRES_MS: '1000',
    WRIT_TRUST_ANCHOR: await testTrustAnchor(),
    ...env,
  });
  const store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: config.subjects.eventsPrefix, maxBytes: 64 * MiB });
  const db = new pg.Client({ connectionString: TEST_PG_URL });
  await db.connect();
  const apps: ProjectionApp[] = [];
  const heads = new Map<string, number>();
  const logger = createLogger('projection-test', { level: (process.env['LOG_LEVEL'] as 'silent' | undefined) ?? 'silent' });
  const table = (name: string) => `"${schema}"."${name}"`;

  const rig: Rig = {
    nc,
    jsm,
    root,
    schema,
    config,
    store,
    db,
    table,
    async start() {
      const app = await createProjectionApp(config, { logger });
      apps.push(app);
      const close = app.close;
      return {
        ...app,
        close: async () => {
          apps.splice(apps.indexOf(app), 1);
          await close();
        },
      };
    },
    async append(events) {
      let last = 0;
      for (const event of events) {
        const key = `${event.aggregate}.${event.aggregateId}`;
        const expected = heads.get(key) ?? 0;
        const result =
          event.aggregate === 'task'
            ? await store.append(event.aggregateId, [event.draft], expected)
            : await store.appendToEntity(event.aggregate, event.aggregateId, [event.draft], expected);
        heads.set(key, result.taskSeq);
        last = result.streamSeq;
      }
      return last;
    },
    async appendStories(stories, concurrency = 8) {
      let next = 0;
      const worker = async () => {
        while (next < stories.length) {
          const story = stories[next++];
          if (story !== undefined) await rig.append(story);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      return (await jsm.streams.info(streams.events)).state.last_seq;
    },
    async checkpoint() {
      const result = await db.query(`SELECT last_seq FROM ${table('checkpoints')} WHERE projector = 'projection'`).catch(() => ({ rows: [] }));
      return Number((result.rows[0] as { last_seq?: string } | undefined)?.last_seq ?? 0);
    },
    async caughtUp(streamSeq) {
      await waitFor(async () => ((await rig.checkpoint()) >= streamSeq ? true : undefined), { what: `checkpoint ${streamSeq}` });
    },
    async dispose() {
      for (const app of [...apps].reverse()) await app.close().catch(() => undefined);
      // What rebuilds leave beside the schema (`<schema>_old_<ts>` with keep_old, a target a failed test left) goes too.
      const left = await db.query(`SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE $1`, [`${schema}\\_%`]).catch(() => ({ rows: [] }));
      await db.end().catch(() => undefined);
      for (const name of [schema, ...(left.rows as Array<{ schema_name: string }>).map((row) => row.schema_name)]) {
        await dropProjectionSchema(TEST_PG_URL, name).catch(() => undefined);
      }
      await pgRole.dispose();
      await deleteStreams(nc, streams.events, streams.ingress, streams.commands, streams.dlq);
      await nc.close();
    },
  };
  return rig;
}

/** GET/POST against the app as the test operator (unless `headers.authorization` says otherwise; '' sends none), returning status, JSON body and its media type. */
export async function http(
  app: ProjectionApp,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; contentType: string | null }> {
  const headers: Record<string, string> = { ...init.headers };
  if (!('authorization' in headers)) headers['authorization'] = await bearer(app);
  if (headers['authorization'] === '') delete headers['authorization']; // '': no credential at all
  const response = await fetch(`${app.url}${path}`, { ...init, headers });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), contentType: response.headers.get('content-type') };
}
