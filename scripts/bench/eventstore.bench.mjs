// Micro-benchmark of @writ/eventstore appends against raw JetStream publishes
// on the same server, in the same run. Not a test: it asserts nothing.
//
// It imports the BUILT library (libs/eventstore/dist), so build first:
//   NX_NO_CLOUD=true npx nx run @writ/eventstore:build
// then run it with the workspace's Node 24:
//   npx node scripts/bench/eventstore.bench.mjs [--seq 1000] [--concurrent 5000] [--inflight 64] [--warmup 500] [--rounds 8] [--payload 256] [--read-events 50] [--no-async-traces]
// Every option can also come from the environment (BENCH_SEQ, BENCH_CONCURRENT,
// BENCH_INFLIGHT, BENCH_WARMUP, BENCH_ROUNDS, BENCH_PAYLOAD, BENCH_NO_ASYNC_TRACES=1), and the server
// from WRIT_NATS_URL (default nats://127.0.0.1:4223).
//
// Variants, each measured per call (latency) and per run (appends/s):
//   store         EventStore.append(taskId, [draft], expectedSeq): validate, seal, guarded + deduped publish
//   raw           js.publish of a same-sized message, with ack
//   raw+expect    the same with expect.lastSubjectSequence (the store's guard)
//   raw+expect+id the same plus a Nats-Msg-Id (the store's full header set)
// (a) sequential: one task (or subject), one append at a time;
// (b) concurrent: --inflight tasks (or subjects) in parallel, each appended to in turn.
// (c) re-read: EventStore.read of an unchanged task of --read-events events, one read at a time,
//     with the read cache (default) and without it (readCacheEvents 0: every read scans and
//     verifies the whole chain), next to the floor a read cannot go under: one raw message get
//     of the subject's last message (what a cached read costs on the wire).
// --seq and --concurrent count appends per variant per round; rounds rotate the
// order of the variants, so drift and noise on the machine hit all of them alike.
// A fresh stream is created (WRIT_BENCH_<random>) and deleted at the end.

import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsConnectOptions } from '@writ/bus';
import { EventStore } from '@writ/eventstore';
import { benchArgs, integerOption, quantile } from './bench-stats.mjs';

const args = benchArgs(import.meta.url, {
  seq: { type: 'string' },
  concurrent: { type: 'string' },
  inflight: { type: 'string' },
  warmup: { type: 'string' },
  rounds: { type: 'string' },
  payload: { type: 'string' },
  'read-events': { type: 'string' },
  'no-async-traces': { type: 'boolean' },
});

const option = (name, fallback) => integerOption(args, name, fallback);

const SEQ = option('seq', 1000);
const CONCURRENT = option('concurrent', 5000);
const INFLIGHT = option('inflight', 64);
const WARMUP = option('warmup', 500);
const ROUNDS = option('rounds', 8);
const PAYLOAD = option('payload', 256);
const READ_EVENTS = option('read-events', 50);
const NATS_URL = process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223';
// nats.js captures a stack trace (two Error objects) per request unless told not to;
// that costs tens of microseconds per publish, for raw and store alike.
const NO_ASYNC_TRACES = args['no-async-traces'] === true || process.env.BENCH_NO_ASYNC_TRACES === '1';

const runId = randomBytes(5).toString('hex');
const stream = `WRIT_BENCH_${runId}`;
const prefix = `bench.${runId}`;
const note = 'x'.repeat(PAYLOAD);
let counter = 0;

function draft(taskId) {
  return {
    event_id: randomUUID(),
    schema_version: 1,
    event_type: 'task.note_added',
    entity_type: 'task',
    entity_id: taskId,
    occurred_at: '2026-11-25T12:00:00.000Z',
    actor_type: 'agent',
    actor_id: 'bench-agent',
    payload: { note },
    causation_id: null,
    correlation_id: `bench-${runId}`,
  };
}

/** A variant appends to one aggregate: `next()` performs one timed operation. */
function storeVariant(store) {
  return (key) => {
    const taskId = `t-${runId}-${key}-${counter++}`;
    let seq = 0;
    return {
      prepare: () => [draft(taskId)],
      run: async (drafts) => {
        seq = (await store.append(taskId, drafts, seq)).taskSeq;
      },
    };
  };
}

function rawVariant(js, body, { expect, msgId }) {
  return (key) => {
    const subject = `${prefix}.raw.r-${key}-${counter++}`;
    let last = 0;
    return {
      prepare: () => undefined,
      run: async () => {
        const opts = {};
        if (expect) opts.expect = { lastSubjectSequence: last };
        if (msgId) opts.msgID = randomUUID();
        last = (await js.publish(subject, body, opts)).seq;
      },
    };
  };
}

/** `workers` aggregates appended to in parallel, one append at a time each, `total` appends in all. */
async function measure(variant, total, workers) {
  const latencies = new Float64Array(total);
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const target = variant(w);
      for (;;) {
        const slot = issued++;
        if (slot >= total) return;
        const input = target.prepare();
        const t0 = performance.now();
        await target.run(input);
        latencies[slot] = performance.now() - t0;
      }
    }),
  );
  const elapsed = performance.now() - started;
  return { latencies: Array.from(latencies), elapsed, total };
}

function summarize(runs) {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const total = runs.reduce((n, r) => n + r.total, 0);
  const elapsed = runs.reduce((ms, r) => ms + r.elapsed, 0);
  return { perSecond: (total / elapsed) * 1000, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), total };
}

function table(title, results) {
  const store = results.store;
  console.log(`\n${title}`);
  console.log('  variant          appends/s    p50 ms    p99 ms   store/raw p50   store/raw p99   raw/store rate');
  for (const [name, r] of Object.entries(results)) {
    const ratio = (a, b) => (name === 'store' ? '       -' : (a / b).toFixed(2).padStart(8) + '×');
    console.log(
      `  ${name.padEnd(14)} ${r.perSecond.toFixed(0).padStart(10)} ${r.p50.toFixed(3).padStart(9)} ${r.p99.toFixed(3).padStart(9)}` +
        `   ${ratio(store.p50, r.p50).padStart(13)}   ${ratio(store.p99, r.p99).padStart(13)}   ${ratio(r.perSecond, store.perSecond).padStart(13)}`,
    );
  }
}

async function scenario(title, variants, total, workers) {
  const names = Object.keys(variants);
  for (const name of names) await measure(variants[name], Math.min(WARMUP, total), workers);
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order each round so no variant always runs first.
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) runs[name].push(await measure(variants[name], total, workers));
  }
  table(title, Object.fromEntries(names.map((n) => [n, summarize(runs[n])])));
}

const nc = await connect({ servers: NATS_URL, name: 'eventstore-bench', noAsyncTraces: NO_ASYNC_TRACES, ...natsConnectOptions() });
const jsm = await jetstreamManager(nc);
try {
  const store = await EventStore.open(nc, { stream, subjectPrefix: prefix, maxBytes: 2 * 1024 ** 3 });
  // Raw messages are as large as the store's envelopes.
  const sampleTask = `t-${runId}-sample`;
  await store.append(sampleTask, [draft(sampleTask)], 0);
  const [sample] = await store.read(sampleTask);
  const body = new TextEncoder().encode(JSON.stringify(sample.event));
  const js = jetstream(nc);

  const cpus = os.cpus();
  console.log('eventstore micro-benchmark');
  console.log(`  node ${process.version} on ${os.platform()} ${os.arch()}, ${cpus.length} cpus (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  console.log(`  nats-server ${nc.info?.version ?? '?'} at ${NATS_URL}; stream ${stream} (file storage, 1 replica); nats.js async traces ${NO_ASYNC_TRACES ? 'off' : 'on (default)'}`);
  console.log(`  event ${body.byteLength} bytes; warm-up ${WARMUP} per variant; ${ROUNDS} rounds alternating variants`);

  const variants = {
    store: storeVariant(store),
    raw: rawVariant(js, body, { expect: false, msgId: false }),
    'raw+expect': rawVariant(js, body, { expect: true, msgId: false }),
    'raw+expect+id': rawVariant(js, body, { expect: true, msgId: true }),
  };
  await scenario(`(a) sequential: ${SEQ} appends per round to one task, one at a time`, variants, SEQ, 1);
  await scenario(`(b) concurrent: ${CONCURRENT} appends per round over ${INFLIGHT} tasks in parallel (${INFLIGHT} in flight)`, variants, CONCURRENT, INFLIGHT);

  // (c) a task read again by a service that read it before (the orchestrator, executor, receipt and approval
  // services read the whole task before each decision), nothing appended in between.
  const readTask = `t-${runId}-read`;
  for (let at = 0; at < READ_EVENTS; at += 25) {
    const batch = Array.from({ length: Math.min(25, READ_EVENTS - at) }, () => draft(readTask));
    await store.append(readTask, batch, at);
  }
  const uncached = await EventStore.open(nc, { stream, subjectPrefix: prefix, maxBytes: 2 * 1024 ** 3, readCacheEvents: 0 });
  const readSubject = `${prefix}.task.${readTask}`;
  const reader = (target) => () => ({ prepare: () => undefined, run: () => target.read(readTask) });
  const reads = {
    store: reader(store),
    'store uncached': reader(uncached),
    'raw last get': () => ({ prepare: () => undefined, run: () => jsm.streams.getMessage(stream, { last_by_subj: readSubject }) }),
  };
  await scenario(`(c) re-read: a ${READ_EVENTS}-event task read ${Math.min(SEQ, 500)} times per round, nothing appended in between`, reads, Math.min(SEQ, 500), 1);
  console.log('\n  (c) reads: the "appends/s" column is reads/s; store/raw compares with one raw message get, the floor of a cached read.');
  console.log('\n  store/raw p50 is the store\'s overhead at the median (aim: < 1.30× over raw publish with ack).');
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at end`);
} finally {
  await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
}
