// Policy decisions: in-process (the kernel's evaluatePolicy with a prepared profile) and over
// the bus (the running policy service's `<root>.qry.policy.evaluate`), next to a raw NATS
// request/reply echo of the same payload sizes, in the same run. Not a test: it asserts nothing.
//
// It runs the BUILT policy service (services/policy/dist/main.js) as a child process and imports
// the built kernel, so build first:
//   NX_NO_CLOUD=true npx nx run @writ/policy:build
// then run it with the workspace's Node 24:
//   npx node scripts/bench/policy.bench.mjs [--seq 2000] [--concurrent 20000] [--inflight 32] [--warmup 500] [--rounds 4] [--inprocess 200000] [--no-async-traces]
//                                           [--service-cpu-prof <dir>]   (the service runs with node --cpu-prof, profile written to <dir> at its exit)
//                                           [--service-node-args "<node flags>"]   (extra flags for the service's node, e.g. GC settings)
//                                           [--keep-logs]   (keep the service's log, printed at the end)
// Every option can also come from the environment (BENCH_SEQ, BENCH_CONCURRENT, BENCH_INFLIGHT,
// BENCH_WARMUP, BENCH_ROUNDS, BENCH_INPROCESS, BENCH_NO_ASYNC_TRACES=1), and the server from
// WRIT_NATS_URL (default nats://127.0.0.1:4223).
//
// Measured, over one mix of requests (allowed command, destructive command, write inside and
// outside files_owned, a secret read, a network read) under local_edit_allowed:
//   in-process   evaluatePolicy(request, prepared, facts): decisions/s and p50/p99 per call
//   in-proc uniq the same, each request's paths moved into a directory of its own (`src/u<n>/index.ts`),
//                so the kernel's per-path memo never answers: the cost of paths seen for the first time
//   bus          request to <root>.qry.policy.evaluate answered by the policy service
//   raw echo     request to a bare NATS responder in another process that answers a reply of
//                the policy reply's size at once, from a subscription callback as the policy
//                service's responder does (the floor the bus variant stands on)
// (a) sequential: one request at a time (latency); (b) concurrent: --inflight at once (throughput).
// Rounds rotate the order of bus and raw so drift on the machine hits both alike.
// The service gets its own subject root (bench_<random>), streams and bucket, removed at the end.

import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsConnectOptions } from '@writ/bus';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { BUILTIN_POLICY_DOCUMENTS, evaluatePolicy, preparePolicyProfile, versionPolicyProfile } from '@writ/kernel';
import { benchArgs, integerOption, quantile } from './bench-stats.mjs';

const args = benchArgs(import.meta.url, {
  seq: { type: 'string' },
  concurrent: { type: 'string' },
  inflight: { type: 'string' },
  warmup: { type: 'string' },
  rounds: { type: 'string' },
  inprocess: { type: 'string' },
  'no-async-traces': { type: 'boolean' },
  'keep-logs': { type: 'boolean' },
  'service-cpu-prof': { type: 'string' },
  'service-node-args': { type: 'string' },
});

const option = (name, fallback) => integerOption(args, name, fallback);

const SEQ = option('seq', 2000);
const CONCURRENT = option('concurrent', 20000);
const INFLIGHT = option('inflight', 32);
const WARMUP = option('warmup', 500);
const ROUNDS = option('rounds', 4);
const IN_PROCESS = option('inprocess', 200000);
const NATS_URL = process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223';
const NO_ASYNC_TRACES = args['no-async-traces'] === true || process.env.BENCH_NO_ASYNC_TRACES === '1';
const TARGET_P99_MS = 2;
// A directory: the policy service runs with --cpu-prof and writes its profile there when it stops.
const SERVICE_CPU_PROF = args['service-cpu-prof'];
// Extra node flags for the policy service, space-separated (e.g. "--trace-gc --max-semi-space-size=4").
const SERVICE_NODE_ARGS = (args['service-node-args'] ?? process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter((arg) => arg.length > 0);

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const POLICY_MAIN = path.join(REPO_ROOT, 'services/policy/dist/main.js');
const runId = randomBytes(5).toString('hex');
const root = `bench_${runId}`;
const upper = root.toUpperCase();
const names = { events: `${upper}_EVENTS`, ingress: `${upper}_INGRESS`, commands: `${upper}_COMMANDS`, dlq: `${upper}_DLQ`, bucket: `${upper}_POLICY` };
const MiB = 1024 ** 2;

// ---- the mix ----------------------------------------------------------------------------------

const PROFILE_ID = 'local_edit_allowed';
const FILES_OWNED = ['src/**', 'build/**', 'out.txt'];

function request(n, actionClass, targets, params) {
  return {
    action_request_id: `ar-bench-${n}`,
    task_id: 'tsk-bench',
    action_class: actionClass,
    target_resources: targets,
    params,
    expected_effects: [],
    reversibility_hint: 'reversible',
    reason: 'Benchmark: a representative request.',
    proposed_by: 'agent-bench',
    proposed_at: '2030-01-01T00:00:00.000Z',
  };
}

const MIX = [
  request(1, 'execute_command', ['out.txt'], { argv: ['sh', '-c', 'echo hello > out.txt'] }),
  request(2, 'execute_command', ['build'], { argv: ['rm', '-rf', 'build'] }),
  request(3, 'write_local', ['src/index.ts'], { path: 'src/index.ts', content: 'export const x = 1;\n' }),
  request(4, 'write_local', ['docs/README.md'], { path: 'docs/README.md', content: 'outside files_owned' }),
  request(5, 'read_local', ['.env'], { path: '.env' }),
  request(6, 'read_local', ['src/index.ts'], { path: 'src/index.ts' }),
  request(7, 'network_read', ['https://example.com/'], { url: 'https://example.com/', method: 'GET' }),
  request(8, 'execute_command', ['src'], { argv: ['sh', '-c', 'cd src && git status && ls -la | head -n 5'] }),
];
const PAYLOADS = MIX.map((action_request) => JSON.stringify({ action_request, profile_id: PROFILE_ID, files_owned: FILES_OWNED }));
// Every request over the bus carries its own action_request_id (`ar-bench-<n>-<slot>`), as real ones
// do: a service that cached answers by payload would gain nothing here. The id is spliced into the
// serialized payload, so building a request costs the client a string concatenation.
const TEMPLATES = PAYLOADS.map((payload, i) => {
  const id = `"ar-bench-${i + 1}"`;
  const at = payload.indexOf(id);
  return [payload.slice(0, at + id.length - 1), payload.slice(at + id.length - 1)];
});
const payloadFor = (slot) => {
  const [head, tail] = TEMPLATES[slot % TEMPLATES.length];
  return `${head}-${slot}${tail}`;
};

// ---- statistics and output ----------------------------------------------------------------------

function summarize(runs) {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const total = runs.reduce((n, r) => n + r.total, 0);
  const elapsed = runs.reduce((ms, r) => ms + r.elapsed, 0);
  return { perSecond: (total / elapsed) * 1000, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1), total };
}

const fmt = (ms) => (ms < 0.1 ? ms.toFixed(4) : ms.toFixed(3)).padStart(9);

function table(title, rows) {
  console.log(`\n${title}`);
  console.log('  variant          decisions/s    p50 ms    p99 ms    max ms   p50 ×raw   p99 ×raw   rate raw/x');
  const raw = rows['raw echo'];
  for (const [name, r] of Object.entries(rows)) {
    const ratio = (a, b) => (raw === undefined || name === 'raw echo' || name.startsWith('in-proc') ? '-'.padStart(9) : `${(a / b).toFixed(2)}×`.padStart(9));
    console.log(
      `  ${name.padEnd(14)} ${r.perSecond.toFixed(0).padStart(13)} ${fmt(r.p50)} ${fmt(r.p99)} ${fmt(r.max)}  ${ratio(r.p50, raw?.p50)}  ${ratio(r.p99, raw?.p99)}  ${ratio(raw?.perSecond, r.perSecond)}`,
    );
  }
}

// ---- in-process ---------------------------------------------------------------------------------

/** `r` with every path it names moved one directory down (`src/index.ts` → `src/u<n>/index.ts`), URLs and argv kept. */
function uniquePaths(r, n) {
  const move = (p) => {
    const slash = p.lastIndexOf('/');
    return slash < 0 ? `u${n}/${p}` : `${p.slice(0, slash)}/u${n}${p.slice(slash)}`;
  };
  const isPath = (p) => !p.includes('://');
  return {
    ...r,
    action_request_id: `ar-bench-u${n}`,
    target_resources: r.target_resources.map((t) => (isPath(t) ? move(t) : t)),
    params: typeof r.params.path === 'string' ? { ...r.params, path: move(r.params.path) } : r.params,
  };
}

function inProcess() {
  const document = BUILTIN_POLICY_DOCUMENTS[PROFILE_ID];
  const version = `sha256:${sha256Hex(canonicalJson(document))}`;
  const prepared = preparePolicyProfile(versionPolicyProfile(document, version));
  const facts = { files_owned: FILES_OWNED };
  const outcomes = {};
  for (const r of MIX) {
    const outcome = evaluatePolicy(r, prepared, facts).outcome;
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  for (let i = 0; i < WARMUP * MIX.length; i++) evaluatePolicy(MIX[i % MIX.length], prepared, facts);
  const latencies = new Float64Array(IN_PROCESS);
  const started = performance.now();
  for (let i = 0; i < IN_PROCESS; i++) {
    const t0 = performance.now();
    evaluatePolicy(MIX[i % MIX.length], prepared, facts);
    latencies[i] = performance.now() - t0;
  }
  const elapsed = performance.now() - started;

  // Paths never seen before: the request is built outside the timed call, so the rate is over the calls alone.
  const fresh = new Float64Array(IN_PROCESS);
  let busy = 0;
  for (let i = 0; i < IN_PROCESS; i++) {
    const r = uniquePaths(MIX[i % MIX.length], i);
    const t0 = performance.now();
    evaluatePolicy(r, prepared, facts);
    fresh[i] = performance.now() - t0;
    busy += fresh[i];
  }
  return {
    summary: summarize([{ latencies: Array.from(latencies), elapsed, total: IN_PROCESS }]),
    unique: summarize([{ latencies: Array.from(fresh), elapsed: busy, total: IN_PROCESS }]),
    outcomes,
    version,
  };
}

// ---- over the bus -------------------------------------------------------------------------------

/** `total` requests to `subject`, `workers` at a time, cycling through the mix. */
async function measure(nc, subject, total, workers) {
  const latencies = new Float64Array(total);
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (;;) {
        const slot = issued++;
        if (slot >= total) return;
        const payload = payloadFor(slot);
        const t0 = performance.now();
        const reply = await nc.request(subject, payload, { timeout: 10_000 });
        latencies[slot] = performance.now() - t0;
        if (reply.headers?.get('Writ-Error-Code')) throw new Error(`${subject} refused: ${reply.string()}`);
      }
    }),
  );
  return { latencies: Array.from(latencies), elapsed: performance.now() - started, total };
}

async function scenario(nc, title, subjects, total, workers, extra = {}) {
  const variants = Object.keys(subjects);
  for (const name of variants) await measure(nc, subjects[name], Math.min(WARMUP, total), workers);
  const runs = Object.fromEntries(variants.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]);
    for (const name of order) runs[name].push(await measure(nc, subjects[name], total, workers));
  }
  const rows = { ...extra, ...Object.fromEntries(variants.map((name) => [name, summarize(runs[name])])) };
  table(title, rows);
  return rows;
}

// ---- child processes ----------------------------------------------------------------------------

function inheritedEnvironment() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('WRIT_') || key.startsWith('OTEL_') || key === 'NODE_OPTIONS' || key === 'LOG_LEVEL') continue;
    if (value !== undefined) env[key] = value;
  }
  return env;
}

function startChild(args, env, logFile) {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...inheritedEnvironment(), ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  return child;
}

async function stopChild(child) {
  if (child === undefined || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, delay(10_000).then(() => child.kill('SIGKILL'))]);
}

/** Waits until something answers `subject` (any reply, error replies included). */
async function answering(nc, subject, child, logFile, what) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited: ${readFileSync(logFile, 'utf8').slice(-2_000)}`);
    const reply = await nc.request(subject, '{}', { timeout: 1_000 }).catch(() => undefined);
    if (reply !== undefined) return;
    if (Date.now() > deadline) throw new Error(`${what} did not answer ${subject} within 60 s (log ${logFile})`);
    await delay(100);
  }
}

// A bare responder in its own process: replies `REPLY_BYTES` bytes to anything, at once, from a
// subscription callback like the policy service's DryRunResponder (an async iterator costs more).
const ECHO = `
import { connect } from '@nats-io/transport-node';
import { natsConnectOptions } from '@writ/bus';
const nc = await connect({ servers: process.env.BENCH_NATS_URL, name: 'policy-bench-echo', ...natsConnectOptions() });
const reply = new Uint8Array(Number(process.env.BENCH_REPLY_BYTES)).fill(120);
nc.subscribe(process.env.BENCH_SUBJECT, { queue: 'echo', callback: (error, m) => { if (error === null) m.respond(reply); } });
process.once('SIGTERM', () => void nc.drain().then(() => process.exit(0)));
`;

// ---- run ----------------------------------------------------------------------------------------

const dir = await mkdtemp(path.join(os.tmpdir(), `writ-${root}-`));
const nc = await connect({ servers: NATS_URL, name: 'policy-bench', noAsyncTraces: NO_ASYNC_TRACES, ...natsConnectOptions() });
const jsm = await jetstreamManager(nc);
let policy;
let echo;
try {
  const cpus = os.cpus();
  console.log('policy decision benchmark');
  console.log(`  node ${process.version} on ${os.platform()} ${os.arch()}, ${cpus.length} cpus (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  console.log(`  nats-server ${nc.info?.version ?? '?'} at ${NATS_URL}; subject root ${root}; nats.js async traces ${NO_ASYNC_TRACES ? 'off' : 'on (default)'}`);
  if (SERVICE_NODE_ARGS.length > 0) console.log(`  policy service node flags: ${SERVICE_NODE_ARGS.join(' ')}`);
  console.log(`  mix: ${MIX.length} requests under ${PROFILE_ID}, files_owned ${JSON.stringify(FILES_OWNED)}; warm-up ${WARMUP}; ${ROUNDS} rounds alternating bus and raw`);

  const local = inProcess();
  console.log(`  mix outcomes: ${Object.entries(local.outcomes).map(([o, n]) => `${o} ${n}`).join(', ')}; profile version ${local.version.slice(0, 19)}…`);

  const profiling = SERVICE_CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(SERVICE_CPU_PROF)}`];
  policy = startChild([...profiling, ...SERVICE_NODE_ARGS, POLICY_MAIN], {
    WRIT_NATS_URL: NATS_URL,
    WRIT_SUBJECT_ROOT: root,
    WRIT_EVENTS_STREAM: names.events,
    WRIT_INGRESS_STREAM: names.ingress,
    WRIT_COMMANDS_STREAM: names.commands,
    WRIT_DLQ_STREAM: names.dlq,
    WRIT_POLICY_BUCKET: names.bucket,
    WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
    WRIT_BUS_MAX_BYTES: String(16 * MiB),
    WRIT_POLICY_BUCKET_MAX_BYTES: String(8 * MiB),
    WRIT_HTTP_HOST: '127.0.0.1',
    WRIT_HTTP_PORT: '0',
    WRIT_BUS_PULL_EXPIRES_MS: '1000',
    OTEL_SDK_DISABLED: 'true',
    LOG_LEVEL: 'warn',
  }, path.join(dir, 'policy.log'));
  const busSubject = `${root}.qry.policy.evaluate`;
  await answering(nc, busSubject, policy, path.join(dir, 'policy.log'), 'the policy service');

  const sample = await nc.request(busSubject, PAYLOADS[0], { timeout: 5_000 });
  if (sample.headers?.get('Writ-Error-Code')) throw new Error(`the policy service refused the mix: ${sample.string()}`);
  const replyBytes = Math.round(
    (await Promise.all(PAYLOADS.map((p) => nc.request(busSubject, p, { timeout: 5_000 })))).reduce((n, m) => n + m.data.byteLength, 0) / PAYLOADS.length,
  );
  const requestBytes = Math.round(PAYLOADS.reduce((n, p) => n + Buffer.byteLength(p), 0) / PAYLOADS.length);
  const echoSubject = `${root}.bench.echo`;
  echo = startChild(['--input-type=module', '-e', ECHO], { BENCH_NATS_URL: NATS_URL, BENCH_SUBJECT: echoSubject, BENCH_REPLY_BYTES: String(replyBytes) }, path.join(dir, 'echo.log'));
  await answering(nc, echoSubject, echo, path.join(dir, 'echo.log'), 'the echo responder');
  console.log(`  request ${requestBytes} bytes, reply ${replyBytes} bytes on average (the echo replies as much)`);

  const subjects = { bus: busSubject, 'raw echo': echoSubject };
  const inproc = { 'in-process': local.summary, 'in-proc uniq': local.unique };
  const sequential = await scenario(nc, `(a) sequential: ${SEQ} requests per round, one at a time`, subjects, SEQ, 1, inproc);
  await scenario(nc, `(b) concurrent: ${CONCURRENT} requests per round, ${INFLIGHT} in flight`, subjects, CONCURRENT, INFLIGHT, inproc);

  const p99 = sequential.bus.p99;
  console.log(`\n  target: p99 over the bus < ${TARGET_P99_MS} ms (sequential): ${p99.toFixed(3)} ms — ${p99 < TARGET_P99_MS ? 'met' : 'NOT met'}`);
  console.log(`  bus/in-process p50: ${(sequential.bus.p50 / local.summary.p50).toFixed(0)}× (the bus round trip dominates a decision)`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} at end`);
} finally {
  await stopChild(echo);
  await stopChild(policy);
  for (const stream of [names.events, names.ingress, names.commands, names.dlq, `KV_${names.bucket}`]) await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
  if (args['keep-logs'] === true) console.log(`  logs kept in ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}
