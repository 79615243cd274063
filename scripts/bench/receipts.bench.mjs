// Receipts through the running receipt service, and its transparency log, next to raw JetStream
// publish+ack of the same payload sizes in the same run. Not a test: it asserts nothing.
//
// It runs the BUILT receipt service (services/receipt/dist/main.js) as a child process and imports
// the built event store, so build first:
//   NX_NO_CLOUD=true npx nx run @writ/receipt:build
// then run it with the workspace's Node 24:
//   npm run bench:receipts -- [--receipts 500] [--inflight 32] [--rounds 3] [--keep-logs]
//                             [--concurrency n]            (the service's WRIT_RECEIPT_CONCURRENCY; default: its own default)
//                             [--service-cpu-prof <dir>]   (the service runs with node --cpu-prof, profiles written to <dir> at its exits)
//   (or: npx node scripts/bench/receipts.bench.mjs [options])
// Options can also come from the environment (BENCH_RECEIPTS, BENCH_INFLIGHT, BENCH_ROUNDS, BENCH_CONCURRENCY), and the
// server from WRIT_NATS_URL (default nats://127.0.0.1:4223).
//
// Measured:
//   issued      N prepared tasks (each an attempt policy denied), one `receipt.issue` command each,
//               all published at once: receipts/s from the first command to the last `receipt.issued`
//               (read the task stream, build, chain, sign, append), and per receipt the latency from
//               its command's PubAck to its `receipt.issued`, and to its `tlog.entry_appended` (leaf)
//   sequenced   the same N receipts sequenced again from scratch by the service restarted on a new
//               log id (a catch-up: it scans every task event and appends one guarded leaf per
//               receipt): leaves/s from the first leaf to the last
//   raw         js.publish + ack of messages of the sizes measured above, on a stream of its own:
//               `raw receipt` (receipt.issued size, --inflight at once, as the commands are) and
//               `raw leaf` (tlog.entry_appended size, one at a time with expect.lastSubjectSequence,
//               as the sequencer appends)
// Raw runs before and after the service figures (rounds alternate), so drift hits both alike.
// The service gets its own subject root (bench_<random>), streams and key, removed at the end.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsConnectOptions } from '@writ/bus';
import { EventStore } from '@writ/eventstore';
import { benchArgs, integerOption, quantile } from './bench-stats.mjs';

const args = benchArgs(import.meta.url, {
  receipts: { type: 'string' },
  inflight: { type: 'string' },
  rounds: { type: 'string' },
  concurrency: { type: 'string' },
  'service-cpu-prof': { type: 'string' },
  'keep-logs': { type: 'boolean' },
});

const RECEIPTS = integerOption(args, 'receipts', 500);
const INFLIGHT = integerOption(args, 'inflight', 32);
const ROUNDS = integerOption(args, 'rounds', 3);
// Unset: the service's own default (WRIT_RECEIPT_CONCURRENCY, services/receipt/README.md).
const CONCURRENCY = args.concurrency === undefined && process.env.BENCH_CONCURRENCY === undefined ? undefined : integerOption(args, 'concurrency', 1);
const SERVICE_CPU_PROF = args['service-cpu-prof'];
const NATS_URL = process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RECEIPT_MAIN = path.join(REPO_ROOT, 'services/receipt/dist/main.js');
const runId = randomBytes(5).toString('hex');
const root = `bench_${runId}`;
const upper = root.toUpperCase();
const names = { events: `${upper}_EVENTS`, ingress: `${upper}_INGRESS`, commands: `${upper}_COMMANDS`, dlq: `${upper}_DLQ`, raw: `${upper}_RAW` };
const LOG_ID = `bench-${runId}`;
const MiB = 1024 ** 2;

// ---- the prepared tasks -------------------------------------------------------------------------

function draft(taskId, attemptId, stepId, eventType, entityType, entityId, payload) {
  return {
    event_id: `evt-${randomBytes(8).toString('hex')}`,
    schema_version: 1,
    event_type: eventType,
    entity_type: entityType,
    entity_id: entityId,
    step_id: stepId,
    attempt_id: attemptId,
    occurred_at: new Date().toISOString(),
    actor_type: 'service',
    actor_id: 'bench',
    payload,
    causation_id: null,
    correlation_id: taskId,
  };
}

/** A task whose one attempt policy denied: the history a `policy_denied` receipt is built from. */
async function prepareTask(store, n) {
  const taskId = `tsk-${runId}-${n}`;
  const stepId = `stp-${runId}-${n}`;
  const attemptId = `att-${runId}-${n}`;
  const now = new Date().toISOString();
  const request = {
    action_request_id: `ar-${runId}-${n}`,
    task_id: taskId,
    action_class: 'execute_command',
    target_resources: ['src'],
    params: { argv: ['make', 'deploy'], cwd: 'src' },
    expected_effects: ['a deployment'],
    reversibility_hint: 'irreversible',
    reason: 'Benchmark: a representative denied request.',
    proposed_by: 'agent-bench',
    proposed_at: now,
  };
  const policyResultId = `pr-${runId}-${n}`;
  const policy = {
    policy_result: {
      policy_result_id: policyResultId,
      task_id: taskId,
      step_id: stepId,
      attempt_id: attemptId,
      action_request_id: request.action_request_id,
      outcome: 'deny',
      action_class: 'execute_command',
      risk_band: 'high',
      action_summary: 'execute_command: make deploy',
      risk_summary: 'deploys',
      policy_profile_ref: 'policy:local_edit_allowed',
      policy_version: 'v1',
      affected_resources: ['src'],
      reasoning_summary: 'make is not on the allowlist',
      matched_rules: ['commands'],
      witness_required: false,
      revalidation_conditions: [],
      evaluated_at: now,
      evaluated_by: 'writ-policy',
    },
    decision: {
      decision_id: `dec-${runId}-${n}`,
      task_id: taskId,
      step_id: stepId,
      attempt_id: attemptId,
      decision_type: 'execution',
      summary: 'policy deny',
      rationale: 'profile rules',
      evidence_refs: [],
      risk_level: 'high',
      decided_by: 'writ-policy',
      reversible: true,
      created_at: now,
    },
  };
  await store.append(
    taskId,
    [
      draft(taskId, attemptId, stepId, 'attempt.awaiting_policy', 'attempt', attemptId, { action_request: request, at: now }),
      draft(taskId, attemptId, stepId, 'policy.evaluated', 'policy', policyResultId, policy),
    ],
    0,
  );
  return { task_id: taskId, step_id: stepId, attempt_id: attemptId, cause: 'policy_denied' };
}

// ---- statistics and output ----------------------------------------------------------------------

const fmt = (ms) => (Number.isNaN(ms) ? '-' : ms < 0.1 ? ms.toFixed(4) : ms.toFixed(2)).padStart(9);

function summary(latencies, total, elapsedMs) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { perSecond: (total / elapsedMs) * 1000, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? NaN, total };
}

function row(name, r) {
  console.log(`  ${name.padEnd(42)} ${r.perSecond.toFixed(0).padStart(8)} ${fmt(r.p50)} ${fmt(r.p99)} ${fmt(r.max)}`);
}

// ---- raw JetStream ------------------------------------------------------------------------------

/** `total` publishes of `bytes`-byte messages, `inflight` at a time, each awaited for its ack; `guarded`: one subject, expect.lastSubjectSequence. */
async function raw(js, bytes, total, inflight, guarded) {
  const body = new Uint8Array(bytes).fill(120);
  const subject = `${root}.raw.${randomBytes(4).toString('hex')}`;
  const latencies = new Float64Array(total);
  let issued = 0;
  let last = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: guarded ? 1 : inflight }, async () => {
      for (;;) {
        const slot = issued++;
        if (slot >= total) return;
        const t0 = performance.now();
        const ack = await js.publish(guarded ? subject : `${subject}.${slot % inflight}`, body, guarded ? { expect: { lastSubjectSequence: last } } : {});
        last = ack.seq;
        latencies[slot] = performance.now() - t0;
      }
    }),
  );
  return summary(latencies, total, performance.now() - started);
}

// ---- child process ------------------------------------------------------------------------------

function inheritedEnvironment() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('WRIT_') || key.startsWith('OTEL_') || key === 'NODE_OPTIONS' || key === 'LOG_LEVEL') continue;
    if (value !== undefined) env[key] = value;
  }
  return env;
}

function startService(dir, logId) {
  const logFile = path.join(dir, `receipt-${logId}.log`);
  const fd = openSync(logFile, 'a');
  const profiling = SERVICE_CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(SERVICE_CPU_PROF)}`];
  const child = spawn(process.execPath, [...profiling, RECEIPT_MAIN], {
    cwd: REPO_ROOT,
    env: {
      ...inheritedEnvironment(),
      WRIT_NATS_URL: NATS_URL,
      WRIT_SUBJECT_ROOT: root,
      WRIT_EVENTS_STREAM: names.events,
      WRIT_INGRESS_STREAM: names.ingress,
      WRIT_COMMANDS_STREAM: names.commands,
      WRIT_DLQ_STREAM: names.dlq,
      WRIT_EVENTS_MAX_BYTES: String(256 * MiB),
      WRIT_BUS_MAX_BYTES: String(64 * MiB),
      WRIT_HTTP_HOST: '127.0.0.1',
      WRIT_HTTP_PORT: '0',
      WRIT_BUS_PULL_EXPIRES_MS: '1000',
      WRIT_RECEIPT_KEY_FILE: path.join(dir, 'receipt.jwk.json'),
      WRIT_TLOG_ID: logId,
      ...(CONCURRENCY === undefined ? {} : { WRIT_RECEIPT_CONCURRENCY: String(CONCURRENCY) }),
      OTEL_SDK_DISABLED: 'true',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  return { child, logFile };
}

async function stopService(service) {
  if (service === undefined || service.child.exitCode !== null) return;
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  await Promise.race([exited, delay(10_000).then(() => service.child.kill('SIGKILL'))]);
}

/** Waits until the service answers its tree-head query (started, log rebuilt, sequencer running). */
async function answering(nc, service) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (service.child.exitCode !== null) throw new Error(`the receipt service exited: ${readFileSync(service.logFile, 'utf8').slice(-2_000)}`);
    const reply = await nc.request(`${root}.qry.receipt.tree-head`, '{}', { timeout: 1_000 }).catch(() => undefined);
    if (reply !== undefined) return;
    if (Date.now() > deadline) throw new Error(`the receipt service did not answer within 60 s (log ${service.logFile})`);
    await delay(100);
  }
}

/** Resolves with the arrival time of each message on `subject` whose JSON has event_type `type`, keyed by `keyOf`, once there are `count`. */
function collect(nc, subject, type, count, keyOf) {
  const seen = new Map();
  let bytes = 0;
  let first = NaN;
  const sub = nc.subscribe(subject);
  const done = (async () => {
    for await (const message of sub) {
      const event = message.json();
      if (event.event_type !== type) continue;
      const at = performance.now();
      if (Number.isNaN(first)) first = at;
      const key = keyOf(event);
      if (!seen.has(key)) {
        seen.set(key, at);
        bytes += message.data.byteLength;
      }
      if (seen.size >= count) break;
    }
    sub.unsubscribe();
    return { seen, first, last: Math.max(...seen.values()), meanBytes: Math.round(bytes / seen.size) };
  })();
  return { done, stop: () => sub.unsubscribe() };
}

// ---- run ----------------------------------------------------------------------------------------

const dir = await mkdtemp(path.join(os.tmpdir(), `writ-${root}-`));
const nc = await connect({ servers: NATS_URL, name: 'receipts-bench', ...natsConnectOptions() });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);
let service;
try {
  const cpus = os.cpus();
  console.log('receipts and transparency log benchmark');
  console.log(`  node ${process.version} on ${os.platform()} ${os.arch()}, ${cpus.length} cpus (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  console.log(
    `  nats-server ${nc.info?.version ?? '?'} at ${NATS_URL}; subject root ${root}; ${RECEIPTS} receipts; service concurrency ${CONCURRENCY ?? 'default'}; raw: ${ROUNDS} rounds, ${INFLIGHT} in flight`,
  );

  const store = await EventStore.open(nc, { stream: names.events, subjectPrefix: `${root}.evt`, maxBytes: 256 * MiB });
  await jsm.streams.add({ name: names.raw, subjects: [`${root}.raw.>`], max_bytes: 256 * MiB });
  const commands = [];
  for (let n = 0; n < RECEIPTS; n++) commands.push(await prepareTask(store, n));
  console.log(`  prepared ${RECEIPTS} tasks (each: attempt.awaiting_policy, policy.evaluated deny)`);

  service = startService(dir, LOG_ID);
  await answering(nc, service);

  // (1) issued: every command at once; receipt.issued and the leaves observed on their subjects.
  const receipts = collect(nc, `${root}.evt.task.>`, 'receipt.issued', RECEIPTS, (event) => event.task_id);
  const leaves = collect(nc, `${root}.evt.transparency_log.${LOG_ID}`, 'tlog.entry_appended', RECEIPTS, (event) => event.payload.task_id);
  const acked = new Map();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      for (;;) {
        const slot = next++;
        if (slot >= commands.length) return;
        const command = commands[slot];
        await js.publish(`${root}.cmd.receipt.issue`, JSON.stringify(command), { msgID: `${command.attempt_id}:receipt` });
        acked.set(command.task_id, performance.now());
      }
    }),
  );
  const issued = await receipts.done;
  const sequenced = await leaves.done;
  const issueLatency = [...issued.seen].map(([task, at]) => at - (acked.get(task) ?? at));
  const leafLatency = [...sequenced.seen].map(([task, at]) => at - (acked.get(task) ?? at));
  const issuedRow = summary(issueLatency, RECEIPTS, issued.last - started);
  const leafRow = summary(leafLatency, RECEIPTS, sequenced.last - started);
  console.log(`  receipt.issued ${issued.meanBytes} bytes, tlog.entry_appended ${sequenced.meanBytes} bytes on average`);
  await stopService(service);

  // (2) sequenced: the same receipts again, from scratch, by the service on a new log id.
  const catchUpLog = `${LOG_ID}-catchup`;
  const catchUp = collect(nc, `${root}.evt.transparency_log.${catchUpLog}`, 'tlog.entry_appended', RECEIPTS, (event) => event.payload.task_id);
  service = startService(dir, catchUpLog);
  const replayed = await catchUp.done;
  const catchUpRow = summary([], RECEIPTS - 1, replayed.last - replayed.first);
  await stopService(service);

  // raw, before-and-after in alternating rounds
  const rawRuns = { receipt: [], leaf: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['receipt', 'leaf'] : ['leaf', 'receipt'];
    for (const kind of order) {
      rawRuns[kind].push(kind === 'receipt' ? await raw(js, issued.meanBytes, RECEIPTS, INFLIGHT, false) : await raw(js, sequenced.meanBytes, RECEIPTS, 1, true));
    }
  }
  const mean = (runs) => ({
    perSecond: runs.reduce((n, r) => n + r.perSecond, 0) / runs.length,
    p50: runs.reduce((n, r) => n + r.p50, 0) / runs.length,
    p99: runs.reduce((n, r) => n + r.p99, 0) / runs.length,
    max: Math.max(...runs.map((r) => r.max)),
  });
  const rawReceipt = mean(rawRuns.receipt);
  const rawLeaf = mean(rawRuns.leaf);

  console.log(`\n  ${'variant'.padEnd(42)} ${'per s'.padStart(8)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)}`);
  row(`issued (command → receipt.issued)`, issuedRow);
  row(`issued → leaf (command → tlog)`, leafRow);
  row(`sequenced (catch-up, leaves)`, catchUpRow);
  row(`raw receipt (${issued.meanBytes} B, ${INFLIGHT} in flight)`, rawReceipt);
  row(`raw leaf (${sequenced.meanBytes} B, guarded, 1 at a time)`, rawLeaf);
  console.log(`\n  receipts issued/s: ${issuedRow.perSecond.toFixed(0)} = 1/${(rawReceipt.perSecond / issuedRow.perSecond).toFixed(1)} of raw publish+ack of the same size`);
  console.log(`  leaves sequenced/s (catch-up): ${catchUpRow.perSecond.toFixed(0)} = 1/${(rawLeaf.perSecond / catchUpRow.perSecond).toFixed(1)} of raw guarded publish+ack of the same size`);
  console.log(`  a leaf trails its receipt.issued by p50 ${(leafRow.p50 - issuedRow.p50).toFixed(2)} ms`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at end`);
} finally {
  await stopService(service);
  for (const stream of Object.values(names)) await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
  if (args['keep-logs'] === true) console.log(`  logs kept in ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}
