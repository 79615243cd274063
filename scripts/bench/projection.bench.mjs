// Projection rebuild speed against raw PostgreSQL batched inserts, same server,
// same run. Not a test: it asserts nothing.
//
// It starts the BUILT projection service in-process (services/projection/dist) and
// generates its log with the projection tests' governed-path fixture (TypeScript,
// loaded through Node 24's type stripping), so build first:
//   NX_NO_CLOUD=true npx nx run @writ/projection:build
// then run it with the workspace's Node 24:
//   npx node scripts/bench/projection.bench.mjs [--events 10000] [--rounds 3] [--batch 500]
// Options may also come from the environment (BENCH_EVENTS, BENCH_ROUNDS, BENCH_BATCH);
// NATS from WRIT_NATS_URL (default nats://127.0.0.1:4223), Postgres from
// WRIT_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/writ_test): an ADMIN connection
// that makes the projection its own role (scram-sha-256, a generated password in a 0600 file, as
// `writ pg setup` does), which the service logs in as; the raw inserts run on the admin connection.
//
// What it measures, each round alternating the two:
//   rebuild  `writ projections rebuild` as the CLI drives it (request/reply on
//            <root>.qry.projection.rebuild, polled to its end): replay of the whole log
//            into a fresh schema with the live folds, checksums of all views, swap.
//            Events/s = events replayed / wall time of the job, and the job's own rate.
//   raw      the building block: one row per event (text key + the event's JSON as jsonb,
//            so rows as large as the events), INSERTed --batch rows per statement, one
//            transaction per statement, into a fresh table.
// Before the rounds it prints how fast the live service folded the same log at boot
// (its catch-up). Everything lives under a fresh subject root, stream and schema
// (bench_<random>), removed at the end.

import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsConnectOptions } from '@writ/bus';
import { EventStore } from '@writ/eventstore';
import { dropPgServiceRole, ensurePgServiceRole, generatePgPassword, pgServiceRole, writeSecret } from '@writ/runtime';
import { createProjectionApp, loadProjectionConfig } from '@writ/projection';
import { createLogger } from '@writ/telemetry';
import pg from 'pg';
import { benchArgs, integerOption, quantile } from './bench-stats.mjs';

const args = benchArgs(import.meta.url, { events: { type: 'string' }, rounds: { type: 'string' }, batch: { type: 'string' } });
const EVENTS = integerOption(args, 'events', 10_000);
const ROUNDS = integerOption(args, 'rounds', 3);
const BATCH = integerOption(args, 'batch', 500);
const NATS_URL = process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223';
const PG_URL = process.env.WRIT_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/writ_test';

const fixture = await import(new URL('../../services/projection/test/governed-path.fixture.ts', import.meta.url).href);

const id = randomBytes(5).toString('hex');
const root = `bench_${id}`;
const schema = `bench_proj_${id}`;
const streams = { events: `BENCH_EVT_${id}`, ingress: `BENCH_ING_${id}`, commands: `BENCH_CMD_${id}`, dlq: `BENCH_DLQ_${id}` };
const MiB = 1024 ** 2;

const db = new pg.Client({ connectionString: PG_URL });
await db.connect();
const adminQuery = (sql, params) => db.query(sql, params === undefined ? undefined : [...params]);
const pgAdmin = new URL(PG_URL);
const pgDatabase = decodeURIComponent(pgAdmin.pathname.slice(1));
const pgRole = pgServiceRole(schema, 'projection');
const pgDir = await mkdtemp(path.join(tmpdir(), 'writ-bench-pg-'));
const pgPasswordFile = path.join(pgDir, 'projection.password');
const pgPassword = generatePgPassword();
await writeSecret(pgPasswordFile, `${pgPassword}\n`);
await ensurePgServiceRole(adminQuery, { role: pgRole, schema, database: pgDatabase, password: pgPassword });

const config = loadProjectionConfig({
  WRIT_NATS_URL: NATS_URL,
  WRIT_SUBJECT_ROOT: root,
  WRIT_HTTP_PORT: '0',
  WRIT_HTTP_HOST: '127.0.0.1',
  WRIT_EVENTS_STREAM: streams.events,
  WRIT_INGRESS_STREAM: streams.ingress,
  WRIT_COMMANDS_STREAM: streams.commands,
  WRIT_DLQ_STREAM: streams.dlq,
  WRIT_EVENTS_MAX_BYTES: String(512 * MiB),
  WRIT_BUS_MAX_BYTES: String(16 * MiB),
  WRIT_PG_URL: `postgres://${pgRole}@${pgAdmin.host}/${encodeURIComponent(pgDatabase)}`,
  WRIT_PG_PASSWORD_FILE: pgPasswordFile,
  WRIT_PG_SCHEMA: schema,
  WRIT_PG_POOL_SIZE: '4',
});

const nc = await connect({ servers: NATS_URL, name: 'projection-bench', ...natsConnectOptions() });
const jsm = await jetstreamManager(nc);
let app;

async function append(store, stories, concurrency = 16) {
  const heads = new Map();
  let next = 0;
  const sizes = [];
  const worker = async () => {
    while (next < stories.length) {
      const story = stories[next++];
      for (const event of story) {
        const key = `${event.aggregate}.${event.aggregateId}`;
        const result =
          event.aggregate === 'task'
            ? await store.append(event.aggregateId, [event.draft], heads.get(key) ?? 0)
            : await store.appendToEntity(event.aggregate, event.aggregateId, [event.draft], heads.get(key) ?? 0);
        heads.set(key, result.taskSeq);
        sizes.push(JSON.stringify(event.draft).length);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return sizes;
}

async function checkpoint() {
  const result = await db.query(`SELECT last_seq FROM "${schema}"."checkpoints" WHERE projector = 'projection'`).catch(() => ({ rows: [] }));
  return Number(result.rows[0]?.last_seq ?? 0);
}

async function request(subject, payload) {
  const reply = await nc.request(subject, JSON.stringify(payload), { timeout: 15_000 });
  const body = reply.json();
  const code = reply.headers?.get('Writ-Error-Code');
  if (code) throw new Error(`${code}: ${body.message}`);
  return body;
}

async function rebuildRound() {
  const started = performance.now();
  const job = await request(config.subjects.rebuild, {});
  for (;;) {
    const current = await request(config.subjects.rebuildStatus, { job_id: job.job_id });
    if (current.state !== 'running') {
      const ms = performance.now() - started;
      if (current.state !== 'swapped') throw new Error(`rebuild ended ${current.state}: ${current.error?.code} ${current.error?.message}`);
      return { ms, events: current.replayed, jobRate: current.events_per_second, rows: undefined };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function rawRound(docs, round) {
  const table = `"${schema}"."raw_${round}"`;
  await db.query(`CREATE TABLE ${table} (id text PRIMARY KEY, doc jsonb NOT NULL)`);
  const started = performance.now();
  for (let i = 0; i < docs.length; i += BATCH) {
    const slice = docs.slice(i, i + BATCH);
    const values = slice.map((_, j) => `($${2 * j + 1}, $${2 * j + 2})`).join(', ');
    await db.query('BEGIN');
    await db.query(`INSERT INTO ${table} (id, doc) VALUES ${values}`, slice.flatMap((doc, j) => [`${round}-${i + j}`, doc]));
    await db.query('COMMIT');
  }
  const ms = performance.now() - started;
  await db.query(`DROP TABLE ${table}`);
  return { ms, events: docs.length };
}

try {
  const store = await EventStore.open(nc, { stream: streams.events, subjectPrefix: config.subjects.eventsPrefix, maxBytes: 512 * MiB });
  const stories = fixture.governedLog(`b${id}`, EVENTS);
  const sizes = await append(store, stories);
  const last = (await jsm.streams.info(streams.events)).state.last_seq;
  const docs = stories.flat().map((event) => JSON.stringify(event.draft));

  const cpus = os.cpus();
  console.log('projection rebuild benchmark');
  console.log(`  node ${process.version} on ${os.platform()} ${os.arch()}, ${cpus.length} cpus (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  console.log(`  nats-server ${nc.info?.version ?? '?'}; postgres ${(await db.query('SHOW server_version')).rows[0].server_version}; schema ${schema}`);
  console.log(`  log: ${last} events in ${stories.length} stories (governed paths with artifacts, approvals granted and denied, cell lifecycles), median draft ${quantile([...sizes].sort((a, b) => a - b), 0.5)} bytes`);

  const bootStarted = performance.now();
  app = await createProjectionApp(config, { logger: createLogger('projection-bench', { level: 'warn' }) });
  while ((await checkpoint()) < last) await new Promise((resolve) => setTimeout(resolve, 50));
  const bootMs = performance.now() - bootStarted;
  const rows = await db.query(
    `SELECT sum(n)::int AS n FROM (${['actions', 'tasks', 'task_events', 'approvals', 'grants', 'receipts', 'principals', 'steps', 'attempts', 'artifacts', 'decisions', 'cells']
      .map((t) => `SELECT count(*) AS n FROM "${schema}"."${t}"`)
      .join(' UNION ALL ')}) c`,
  );
  console.log(`  live fold at boot (catch-up, batched): ${last} events in ${(bootMs / 1000).toFixed(1)} s = ${((last / bootMs) * 1000).toFixed(0)} events/s, ${rows.rows[0].n} rows in 12 views`);

  const results = { rebuild: [], raw: [] };
  await rawRound(docs.slice(0, Math.min(docs.length, 1_000)), 'warm');
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['rebuild', 'raw'] : ['raw', 'rebuild'];
    for (const name of order) results[name].push(name === 'rebuild' ? await rebuildRound() : await rawRound(docs, round));
  }

  const rate = (r) => (r.events / r.ms) * 1000;
  const summary = Object.fromEntries(
    Object.entries(results).map(([name, runs]) => {
      const rates = runs.map(rate).sort((a, b) => a - b);
      return [name, { median: quantile(rates, 0.5), min: rates[0], max: rates.at(-1) }];
    }),
  );
  console.log(`\n  ${ROUNDS} rounds, alternating; events/s (median, min..max)`);
  console.log(`  rebuild (replay + 12 checksums + swap)   ${summary.rebuild.median.toFixed(0).padStart(8)}  (${summary.rebuild.min.toFixed(0)}..${summary.rebuild.max.toFixed(0)}); job's own replay rate ${results.rebuild.map((r) => r.jobRate).join(', ')}`);
  console.log(`  raw batched INSERT (${BATCH} rows/statement)  ${summary.raw.median.toFixed(0).padStart(8)}  (${summary.raw.min.toFixed(0)}..${summary.raw.max.toFixed(0)})`);
  console.log(`  ratio raw / rebuild: ${(summary.raw.median / summary.rebuild.median).toFixed(1)}x (the rebuild writes ${(rows.rows[0].n / last).toFixed(2)} rows per event, each after a read and a fold)`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at end`);
} finally {
  await app?.close().catch(() => undefined);
  await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  const left = await db.query(`SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE $1`, [`${schema}\\_%`]).catch(() => ({ rows: [] }));
  for (const row of left.rows) await db.query(`DROP SCHEMA IF EXISTS "${row.schema_name}" CASCADE`).catch(() => undefined);
  await dropPgServiceRole(adminQuery, pgRole).catch(() => undefined);
  await db.end().catch(() => undefined);
  await rm(pgDir, { recursive: true, force: true });
  for (const stream of Object.values(streams)) await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
}
