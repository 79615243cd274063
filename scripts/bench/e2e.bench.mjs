// End-to-end benchmark of the governed path. Not a test: it asserts nothing.
//
// It starts the whole of Writ itself with the e2e harness (test/e2e/support/stack.mjs: the
// seven BUILT services as child processes on a subject root, streams, schema, ports, keys and
// cells of their own), so build first:
//   NX_NO_CLOUD=true npx nx run-many -t build
// then, as root (cells chown their workspace), with the workspace's Node 24:
//   npx node scripts/bench/e2e.bench.mjs [--actions 200] [--agents 8] [--denied 200] [--warmup 8] [--keep-logs]
//                                        [--service-env KEY=VALUE]...   (extra environment for every service, e.g. WRIT_EVENTS_READ_CACHE=0)
//                                        [--service-log-level debug]  (every service logs at that level; with --keep-logs)
//                                        [--service-cpu-prof <dir>]   (every service runs with node --cpu-prof; profiles written to <dir> as the stack stops)
//                                        [--nats-monitor http://127.0.0.1:8423]  (nats-server's monitoring, for the message table)
//                                        [--single-process]           (the seven services in ONE process, apps/serve: one memory and CPU row)
//                                        [--service-node-args '--optimize-for-size --max-semi-space-size=4']  (node flags for every service process: A/B runs of V8's heap settings)
// Every option can also come from the environment (BENCH_ACTIONS, BENCH_AGENTS, BENCH_DENIED, BENCH_WARMUP).
// It needs NATS, Postgres (database writ_test) and Docker with the cell image (scripts/build-cell-image.sh).
//
// Measured in the same run:
//   allowed   K agents, closed loop (an agent publishes its next request once the previous one
//             has its receipt), each submitting `sh -c 'echo hello > out.txt'` in a new task
//             (local_edit_allowed): latency from the JetStream publish of the signed request to
//             `receipt.issued` in the log (core subscription on <root>.evt.task.>), and to the
//             settled row on <root>.proj.actions.<id> (the projection may lag: printed apart)
//   raw exec  the same command by raw dockerode exec in one warm container (create, hijacked
//             start, demux, exit-status poll), K at a time, N in all: Writ / raw as a ratio
//   raw run   the same command in a one-shot container per action (create, start, wait, remove;
//             no network, read-only root, cap-drop ALL), K at a time: the floor of a new task's cell
//   denied    the same for a network_write (denied by local_edit_allowed: nothing runs):
//             publish → policy decision → receipt → the denied, receipted projected row
//   raw ack   a JetStream publish and its ack on the same server, K at a time: the floor of one hop
//   auth      what the trust boundary costs, same server, same run: the agents above publish over
//             their own credentials (their own NATS account, through its import of the ingress
//             subject); here a pub+ack over a service's least-privilege credential vs the operator's
//             unrestricted one, and a connection set up with a credential (nonce signed, JWT
//             checked) vs one to the machine's anonymous NATS on 4222 when one runs
//   memory    VmRSS of each service process (/proc/<pid>/status) at idle and its peak under load
//   CPU       for the allowed and the denied phase apart, the CPU time spent from just before the
//             phase's first publish to the moment it settled (every receipt and projected row in),
//             total ms and ms per action of the phase (total / its actions), per row:
//               - each service: utime+stime of its process and of what it spawned, with the time of
//                 the children it reaped (cutime+cstime), from /proc/<pid>/stat (proc-cpu.mjs);
//               - nats-server: the process listening on WRIT_NATS_URL's port (found through the
//                 listening sockets of /proc/net/tcp{,6} and the socket links in /proc/<pid>/fd;
//                 the machine's other servers, such as the anonymous one on 4222, are not counted);
//               - postgres*: every process named postgres, with the postmaster's reaped time (the
//                 backends that exit in the window); below it, informative, the backends of this
//                 stack's projection role (pg_stat_activity);
//               - docker engine*: dockerd, containerd, containerd-shim*, docker-proxy and runc, with
//                 what they reaped (runc runs, exited container processes);
//               - cells: the cgroup CPU of this stack's cells (cell-cpu.mjs; v2 cpu.stat or v1
//                 cpuacct), read at the start, as each starts, every 250 ms and at the end; a cell
//                 closed in the window (a task's cell closes once its task ends) counts up to its
//                 last reading. A process `docker exec` started in a cell and its shim reaped may
//                 count here and in the engine's reaped time too;
//               - the whole stack without Docker (services + nats-server + postgres; the issue's
//                 targets: ≤ 10 ms per denied action, ≤ 30 ms per allowed action) and with it
//                 (+ docker engine + cells).
//             * marks what serves the whole machine (other stacks' work in the window is in it);
//             ≥ marks a lower bound (a process that exited reaped outside the snapshot, a cell
//             closed between readings). nats-server's figure includes the delivery of the events
//             and rows this bench watches; work an action causes after its row (its task's cell
//             closing) falls outside the window for the phase's last actions. /proc counts in
//             clock ticks (getconf CLK_TCK, usually 10 ms), so small phases read coarsely.
//   NATS      per phase, the messages each service's connections published (in: appends, API requests,
//             acks, pulls, commands, row updates) and were sent (out: replies, deliveries), per action,
//             from two readings of nats-server's /connz (--nats-monitor <url>, else the http: of
//             $WRIT_HOME/nats/nats-server.conf): where the server's CPU goes, connection by connection.
// Every allowed action opens a new task, so each runs in a freshly created cell (a container
// per task): the cold start of a cell is part of Writ's figure and of `raw run`, not of `raw exec`.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import Docker from 'dockerode';
import pg from 'pg';
import { benchArgs, integerOption, percentile } from './bench-stats.mjs';
import { trackCells } from './cell-cpu.mjs';
import { clockTicksPerSecond, cpuSpent, pidsListeningOn, snapshotProcesses } from './proc-cpu.mjs';

const args = benchArgs(import.meta.url, {
  actions: { type: 'string' },
  agents: { type: 'string' },
  denied: { type: 'string' },
  warmup: { type: 'string' },
  'keep-logs': { type: 'boolean' },
  'service-env': { type: 'string', multiple: true },
  'service-cpu-prof': { type: 'string' },
  'service-log-level': { type: 'string' },
  'nats-monitor': { type: 'string' },
  'single-process': { type: 'boolean' },
  'service-node-args': { type: 'string' },
});

const harness = await import(new URL('../../test/e2e/support/stack.mjs', import.meta.url).href).catch((error) => {
  console.error('[bench] cannot load the e2e harness: build every project first (NX_NO_CLOUD=true npx nx run-many -t build)');
  throw error;
});
const { startStack, residentBytes } = harness;

/** `--service-env KEY=VALUE`, repeatable: the same settings for every service of the stack (A/B runs of one setting). */
const SERVICE_ENV = Object.fromEntries(
  (args['service-env'] ?? []).map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0 || !pair.startsWith('WRIT_')) throw new Error(`--service-env takes WRIT_NAME=value, got ${JSON.stringify(pair)}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

// `--service-cpu-prof <dir>`: every service runs with node --cpu-prof and writes its profile into <dir> when the stack stops.
if (args['service-cpu-prof'] !== undefined) SERVICE_ENV.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${path.resolve(args['service-cpu-prof'])}`;
// `--service-node-args '<flags>'`: node flags for every service process (V8's heap settings, for the memory table; some, like
// --optimize-for-size, NODE_OPTIONS refuses).
const NODE_ARGS = (args['service-node-args'] ?? '').split(/\s+/).filter(Boolean);
// `--service-log-level debug` (with --keep-logs): e.g. the projection's group commits, their sizes and judge/apply times.
if (args['service-log-level'] !== undefined) SERVICE_ENV.LOG_LEVEL = args['service-log-level'];

const option = (name, fallback, min = 1) => integerOption(args, name, fallback, min);

const ACTIONS = option('actions', 200);
const AGENTS = option('agents', 8);
const DENIED = option('denied', ACTIONS, 0);
const WARMUP = option('warmup', AGENTS, 0);
const ACTION_TIMEOUT_MS = 180_000;
const MiB = 1024 ** 2;
const decoder = new TextDecoder();
const docker = new Docker();

// ---- statistics and output ------------------------------------------------------------------------

function summary(samples, wallMs) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), mean, max: sorted.at(-1) ?? NaN, perSecond: (sorted.length / wallMs) * 1000 };
}

const ms = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : 'n/a');
function line(name, s) {
  return `${name.padEnd(24)} n=${String(s.n).padStart(4)}  ${s.perSecond.toFixed(1).padStart(7)}/s  p50 ${ms(s.p50).padStart(10)}  p95 ${ms(s.p95).padStart(10)}  p99 ${ms(s.p99).padStart(10)}  mean ${ms(s.mean).padStart(10)}  max ${ms(s.max).padStart(10)}`;
}
function ratio(name, a, b) {
  const r = (x, y) => (Number.isFinite(x / y) ? `${(x / y).toFixed(1)}x` : 'n/a');
  return `${name.padEnd(24)} p50 ${r(a.p50, b.p50)}, p95 ${r(a.p95, b.p95)}, p99 ${r(a.p99, b.p99)}, throughput ${r(b.perSecond, a.perSecond)} lower`;
}
const mb = (bytes) => (bytes === null || bytes === undefined ? 'gone' : `${(bytes / MiB).toFixed(0)} MB`);

// ---- machine ----------------------------------------------------------------------------------------

async function machineInfo(stack) {
  const cpus = os.cpus();
  const engine = await docker.version().catch(() => ({ Version: '?', ApiVersion: '?' }));
  const lines = [
    `host      ${os.hostname()} ${os.type()} ${os.release()} ${os.arch()}`,
    `cpus      ${cpus.length} x ${cpus[0]?.model ?? '?'}`,
    `memory    ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB total, ${(os.freemem() / 1024 ** 3).toFixed(1)} GiB free`,
    `load      ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (1, 5, 15 min)`,
    `node      ${process.version}`,
    `docker    Engine ${engine.Version} (API ${engine.ApiVersion})`,
    `nats      nats-server ${stack.nc.info?.version ?? '?'} (JetStream ${stack.nc.info?.jetstream ? 'on' : 'off'})`,
  ];
  return lines;
}

// ---- memory sampling --------------------------------------------------------------------------------

/**
 * The stack's service processes: one per service, or with --single-process the one that runs all
 * seven (`serve`); what the memory and CPU tables have a row for.
 */
function serviceProcesses(stack) {
  if (stack.singleProcess) return [{ name: 'serve', pid: stack.services.projection.pid }];
  return Object.values(stack.services).map((service) => ({ name: service.name, pid: service.pid }));
}

/**
 * Proportional memory of a process (`Pss` of /proc/<pid>/smaps_rollup): its resident pages, each
 * shared one divided among the processes sharing it (the node binary's pages are shared by every
 * service process, and counted whole in each one's VmRSS); null once it is gone.
 */
function proportionalBytes(pid) {
  try {
    const match = /^Pss:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** The PSS of each service process by name (`serviceProcesses`). */
function proportionalMemory(stack) {
  return Object.fromEntries(serviceProcesses(stack).map(({ name, pid }) => [name, proportionalBytes(pid)]));
}

/** Peak VmRSS of each service process, and of their sum at one sample (`total`). */
function memorySampler(stack) {
  const peak = {};
  const sample = () => {
    let total = 0;
    for (const { name, pid } of serviceProcesses(stack)) {
      const rss = residentBytes(pid);
      if (rss !== null) peak[name] = Math.max(peak[name] ?? 0, rss);
      total += rss ?? 0;
    }
    peak.total = Math.max(peak.total ?? 0, total);
  };
  sample();
  const timer = setInterval(sample, 200);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

// ---- CPU per phase ------------------------------------------------------------------------------------

const TICKS_PER_SECOND = clockTicksPerSecond();
const NATS = 'nats-server';
const POSTGRES = 'postgres';
const DOCKER = 'docker engine';
// Processes the Docker engine started that are not the engine itself (container processes):
// snapshotted so that one reaped in the window by its shim counts only its window's part in
// the engine's reaped time; never printed (the cells' share is the cgroup row).
const CONTAINER_PROCESSES = 'container processes';
const DOCKER_ENGINE_COMM = /^(dockerd|containerd|containerd-shim.*|docker-proxy|runc.*)$/;

/** The nats-server this stack talks to: the process listening on the port of WRIT_NATS_URL (not the machine's other servers). */
function writNatsServer() {
  const url = new URL(process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223');
  const port = Number(url.port || 4222);
  const pids = pidsListeningOn(port);
  return { port, pid: pids.length === 1 ? pids[0] : null, candidates: pids };
}

/**
 * Where nats-server's monitoring answers: `--nats-monitor`, else the `http:` of `$WRIT_HOME/nats/nats-server.conf`
 * (writ init writes it), else null (the message table is then left out).
 */
const natsMonitor = natsMonitorUrl();

function natsMonitorUrl() {
  if (args['nats-monitor'] !== undefined) return args['nats-monitor'];
  const home = process.env.WRIT_HOME;
  if (home === undefined) return null;
  try {
    const match = /^\s*http\s*:\s*"?([^"\s]+)"?/m.exec(readFileSync(path.join(home, 'nats', 'nats-server.conf'), 'utf8'));
    return match === null ? null : `http://${match[1]}`;
  } catch {
    return null;
  }
}

/** Messages each connection of the server published (in) and was sent (out) so far, by connection name (`/connz`); null when the server does not answer. */
async function natsTraffic(monitor) {
  if (monitor === null) return null;
  try {
    const response = await fetch(`${monitor}/connz?limit=4096`, { signal: AbortSignal.timeout(5_000) });
    const connz = await response.json();
    const byName = new Map();
    for (const connection of connz.connections ?? []) {
      const name = connection.name ?? `cid ${connection.cid}`;
      const seen = byName.get(name) ?? { cids: new Map() };
      seen.cids.set(connection.cid, { in: connection.in_msgs, out: connection.out_msgs });
      byName.set(name, seen);
    }
    return byName;
  } catch {
    return null;
  }
}

/**
 * The messages of a phase per connection group (a service's connections, the bench's own), from two `/connz`
 * readings: what each published (appends, API requests, acks, pulls, commands) and was sent (replies,
 * deliveries, acks of its appends). A connection opened in the window counts from zero; one closed in it is missed.
 */
function printNatsTraffic(title, actions, before, after, stack) {
  if (before === null || after === null) {
    console.log(`\nNATS messages, ${title}: not measured (no monitoring endpoint: --nats-monitor <url>)`);
    return;
  }
  const services = Object.keys(stack.services).sort((a, b) => b.length - a.length);
  const totals = new Map();
  for (const [name, { cids }] of after) {
    const group = services.find((service) => name.includes(service)) ?? (name.includes(stack.root) ? 'bench (agents, watchers)' : null);
    if (group === null) continue;
    const sum = totals.get(group) ?? { in: 0, out: 0 };
    for (const [cid, counts] of cids) {
      const was = before.get(name)?.cids.get(cid) ?? { in: 0, out: 0 };
      sum.in += counts.in - was.in;
      sum.out += counts.out - was.out;
    }
    totals.set(group, sum);
  }
  console.log(`\nNATS messages, ${title}: per action, by the server's /connz (in: published by the connection, out: sent to it)`);
  let all = { in: 0, out: 0 };
  for (const [group, sum] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${group.padEnd(40)} in ${(sum.in / actions).toFixed(1).padStart(7)}   out ${(sum.out / actions).toFixed(1).padStart(7)}`);
    all = { in: all.in + sum.in, out: all.out + sum.out };
  }
  console.log(`  ${'all of the above'.padEnd(40)} in ${(all.in / actions).toFixed(1).padStart(7)}   out ${(all.out / actions).toFixed(1).padStart(7)}`);
}

/**
 * Which printed group a process belongs to: a service (the process the harness started, and
 * whatever it spawns), Writ's nats-server, PostgreSQL (every process named postgres, so the
 * postmaster's reaped time covers the backends that exit), the Docker engine; null for the rest.
 */
function processGroups(stack, natsPid) {
  const services = new Map(serviceProcesses(stack).map((service) => [service.pid, service.name]));
  return (stat, byPid) => {
    let ancestor = stat; // the process itself first, then its parents
    for (let hops = 0; ancestor !== undefined && hops < 64; hops += 1) {
      const service = services.get(ancestor.pid);
      if (service !== undefined) return service;
      if (ancestor.pid === natsPid) return NATS;
      if (ancestor.comm === 'postgres') return POSTGRES;
      if (DOCKER_ENGINE_COMM.test(ancestor.comm)) return ancestor === stat ? DOCKER : CONTAINER_PROCESSES;
      ancestor = byPid.get(ancestor.ppid);
    }
    return null;
  };
}

/** The pids of this stack's own PostgreSQL backends (the projection's role), from pg_stat_activity; null when the server does not answer (it may be restarting). */
async function stackBackends(admin, stack) {
  try {
    const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE usename = $1', [stack.pgRole]);
    return new Set(rows.map((row) => Number(row.pid)));
  } catch {
    return null;
  }
}

/**
 * Starts a phase's CPU window: the Docker and PostgreSQL look-ups first, then the processes'
 * snapshot, so the look-ups' own work falls outside it; `stop()` snapshots first, then looks up.
 */
async function cpuWindow(stack, nats, admin) {
  const groupOf = processGroups(stack, nats.pid);
  const cells = await trackCells(docker, { cellsRoot: stack.cellsRoot, executorId: stack.env.WRIT_EXECUTOR_ID });
  const backendsBefore = await stackBackends(admin, stack);
  const trafficBefore = await natsTraffic(natsMonitor);
  const before = snapshotProcesses(groupOf);
  const startedAt = performance.now();
  return {
    async stop() {
      const after = snapshotProcesses(groupOf);
      const wallMs = performance.now() - startedAt;
      const cellsSpent = await cells.stop();
      const backendsAfter = await stackBackends(admin, stack);
      const traffic = { before: trafficBefore, after: await natsTraffic(natsMonitor) };
      const backends = backendsBefore === null || backendsAfter === null ? null : new Set([...backendsBefore, ...backendsAfter]);
      const onlyBackends = (snapshot) => ({ processes: new Map([...snapshot.processes].filter(([, stat]) => stat.group === POSTGRES && backends.has(stat.pid))) });
      return {
        wallMs,
        groups: cpuSpent(before, after),
        backends: backends === null ? null : (cpuSpent(onlyBackends(before), onlyBackends(after)).get(POSTGRES) ?? NO_PROCESS),
        cells: cellsSpent,
        traffic,
      };
    },
  };
}

const cpuMs = (ticks) => (ticks * 1000) / TICKS_PER_SECOND;
const NO_PROCESS = { ticks: 0, live: 0, started: 0, reaped: 0, lost: 0, lostPids: [] };

/**
 * A phase's CPU table: total and per action for each service, nats-server, PostgreSQL, the
 * Docker engine and the cells, then the stack without and with Docker; the issue's target
 * (`target`: ms per action of the stack without Docker) printed next to its row.
 */
function printCpu(title, actions, spent, stack, nats, target) {
  const lines = [];
  const row = (name, ms, { note = '', lowerBound = false } = {}) => {
    const mark = lowerBound ? '≥' : ' ';
    lines.push(`  ${name.padEnd(40)} ${mark}${ms.toFixed(0).padStart(7)} ms ${mark}${(ms / actions).toFixed(2).padStart(7)} ms/action${note === '' ? '' : `   ${note}`}`);
  };
  const absent = (name, why) => lines.push(`  ${name.padEnd(40)}  ${why}`);
  const group = (name) => spent.groups.get(name) ?? NO_PROCESS;
  const notes = (g) =>
    [g.live === 0 ? 'no process at the end' : '', g.lost > 0 ? `${g.lost} exited in the window, reaped outside it: their time after the start is missing` : ''].filter(Boolean).join('; ');
  const partial = (g) => g.live === 0 || g.lost > 0;
  const sum = { excl: 0, incl: 0, exclLower: false, inclLower: false };
  const add = (ms, lowerBound, { docker }) => {
    if (!docker) {
      sum.excl += ms;
      sum.exclLower ||= lowerBound;
    }
    sum.incl += ms;
    sum.inclLower ||= lowerBound;
  };

  for (const { name } of serviceProcesses(stack)) {
    const g = group(name);
    row(name, cpuMs(g.ticks), { note: notes(g), lowerBound: partial(g) });
    add(cpuMs(g.ticks), partial(g), { docker: false });
  }
  if (nats.pid === null) {
    const why = nats.candidates.length === 0 ? 'nothing here listens on it, or its fds are unreadable (run as root)' : `pids ${nats.candidates.join(', ')} listen on it`;
    absent(`nats-server :${nats.port}`, `not found: ${why}; not in the sums`);
    sum.exclLower = sum.inclLower = true;
  } else {
    const g = group(NATS);
    row(`nats-server (pid ${nats.pid}, :${nats.port})`, cpuMs(g.ticks), { note: notes(g), lowerBound: partial(g) });
    add(cpuMs(g.ticks), partial(g), { docker: false });
  }
  const postgres = group(POSTGRES);
  row(`postgres* (${postgres.live} processes)`, cpuMs(postgres.ticks), { note: notes(postgres), lowerBound: postgres.lost > 0 });
  add(cpuMs(postgres.ticks), postgres.lost > 0, { docker: false });
  if (spent.backends === null) absent("  of which this stack's backends", 'unknown: pg_stat_activity did not answer');
  else row(`  of which this stack's backends (${spent.backends.live})`, cpuMs(spent.backends.ticks), { note: `role ${stack.pgRole}; not added again`, lowerBound: spent.backends.lost > 0 });
  const engine = group(DOCKER);
  row(`docker engine* (${engine.live} processes)`, cpuMs(engine.ticks), { note: notes(engine), lowerBound: engine.lost > 0 });
  add(cpuMs(engine.ticks), engine.lost > 0, { docker: true });
  const cells = spent.cells;
  if (cells.unreadable > 0) {
    absent('cells (container work)', `not attributable: the cgroups of ${cells.unreadable} running cells were not found (not root, or a cgroup layout this does not know); not in the sums`);
  } else {
    const partialCells = cells.stopped > 0 || cells.missed > 0;
    const note = [
      `${cells.cells} cells, ${cells.created} started in the window; ${cells.source || 'no cell ran'}`,
      cells.stopped > 0 ? `${cells.stopped} stopped in the window: counted up to their last reading (≤ ${cells.intervalMs} ms before)` : '',
      cells.missed > 0 ? `${cells.missed} started and stopped between readings: not counted` : '',
    ].filter(Boolean).join('; ');
    row('cells (container work)', cells.usec / 1000, { note, lowerBound: partialCells });
    add(cells.usec / 1000, partialCells, { docker: true });
  }
  const verdict = sum.excl / actions <= target.msPerAction ? 'met' : 'OVER';
  row('whole stack excl. Docker', sum.excl, { note: `target ≤ ${target.msPerAction} ms/action ${target.what}: ${verdict}`, lowerBound: sum.exclLower });
  row('whole stack incl. Docker', sum.incl, { lowerBound: sum.inclLower });

  console.log(`\nCPU time, ${title}: ${actions} actions, window ${(spent.wallMs / 1000).toFixed(1)} s (first publish → last projected row); /proc utime+stime with reaped children, 1 tick = ${(1000 / TICKS_PER_SECOND).toFixed(0)} ms`);
  for (const text of lines) console.log(text);
  console.log("  * serves the whole machine: other stacks' work in the window is in it.  ≥: a lower bound (see the note)");
}

// ---- the governed path ------------------------------------------------------------------------------

/** Watches receipts in the log and rows on <root>.proj.actions.>, resolving per-action waiters. */
function watch(stack) {
  const receipts = new Map(); // task id → { resolve, at }
  const rows = new Map(); // action id → { predicate, resolve }
  const early = { receipts: new Map(), rows: new Map() };
  const evt = stack.nc.subscribe(stack.subject('evt.task.>'), {
    callback: (_error, msg) => {
      const event = JSON.parse(decoder.decode(msg.data));
      if (event.event_type !== 'receipt.issued') return;
      const at = performance.now();
      const waiter = receipts.get(event.task_id);
      const value = { at, result_code: event.payload?.receipt?.result_code };
      if (waiter) {
        receipts.delete(event.task_id);
        waiter(value);
      } else early.receipts.set(event.task_id, value);
    },
  });
  const proj = stack.nc.subscribe(stack.subject('proj.actions.>'), {
    callback: (_error, msg) => {
      const row = JSON.parse(decoder.decode(msg.data));
      const at = performance.now();
      const waiter = rows.get(row.action_request_id);
      if (waiter && waiter.predicate(row)) {
        rows.delete(row.action_request_id);
        waiter.resolve({ at, row });
      }
    },
  });
  return {
    receipt(taskId) {
      const seen = early.receipts.get(taskId);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => receipts.set(taskId, resolve));
    },
    row(actionId, predicate) {
      return new Promise((resolve) => rows.set(actionId, { predicate, resolve }));
    },
    close() {
      evt.unsubscribe();
      proj.unsubscribe();
    },
  };
}

const withTimeout = (promise, what) =>
  Promise.race([promise, delay(ACTION_TIMEOUT_MS, undefined, { ref: false }).then(() => ({ timedOut: what }))]);

/** The task ingress opens for `<principal>:<idempotency key>` (docs/governed-path.md step 1). */
const taskIdOf = (principalId, key) => `tsk-${createHash('sha256').update(`${principalId}:${key}`).digest('hex').slice(0, 32)}`;

/**
 * Publishes one signed request and resolves once its receipt is in the log (what paces an
 * agent's loop); `row` resolves when the projection publishes the settled row, which may lag.
 */
async function governedAction(stack, watcher, agent, request, rowSettled) {
  const taskId = taskIdOf(agent.id, request.action_request_id);
  const receipt = watcher.receipt(taskId);
  const row = watcher.row(request.action_request_id, rowSettled);
  const jws = await stack.sign(agent, request);
  const t0 = performance.now();
  await stack.submit(agent, request, { body: jws });
  const issued = await withTimeout(receipt, 'receipt');
  return {
    receiptMs: issued.timedOut ? null : issued.at - t0,
    outcome: issued.timedOut ? 'timed out' : issued.result_code,
    row: withTimeout(row, 'row').then((projected) => (projected.timedOut ? { rowMs: null, status: 'timed out' } : { rowMs: projected.at - t0, status: projected.row.status })),
  };
}

const allowedAction = (stack, watcher, agent) =>
  governedAction(stack, watcher, agent, stack.actionRequest(agent), (r) => ['succeeded', 'failed', 'denied', 'unknown_outcome'].includes(r.status) && r.receipt_id !== null);

const deniedAction = (stack, watcher, agent) =>
  governedAction(
    stack,
    watcher,
    agent,
    stack.deniedActionRequest(agent, { reason: 'benchmark: a denied action' }),
    (r) => (r.status === 'denied' && r.receipt_id !== null) || ['succeeded', 'failed', 'rejected'].includes(r.status),
  );

/** The projected rows of a phase, once all are in (or timed out): latencies and statuses. */
async function projected(phase) {
  const rows = await Promise.all(phase.results.map((result) => result.row));
  return { rows, caughtUpMs: performance.now() - phase.startedAt };
}

/** `total` runs of `one(agent)` spread over the agents, each agent one at a time (closed loop). */
async function load(agents, total, one) {
  const results = [];
  let next = 0;
  const t0 = performance.now();
  const startedAt = t0;
  await Promise.all(
    agents.map(async (agent) => {
      while (next < total) {
        next += 1;
        results.push(await one(agent));
      }
    }),
  );
  return { results, wallMs: performance.now() - t0, startedAt };
}

// ---- auth ---------------------------------------------------------------------------------------------

/**
 * The trust boundary's own costs: a JetStream pub+ack over the orchestrator's least-privilege
 * credential (permission lists checked by the server on every publish) against the operator's
 * unrestricted one, K at a time; and sequential connection set-ups with a credential (the server's
 * nonce signed with the nkey, the user JWT verified against the operator) against anonymous ones
 * to the machine's own NATS, when one listens on 4222.
 */
async function authCosts(stack, total) {
  const { NatsAuthority, busLayout, servicePermissions, userInbox } = await import('@writ/runtime');
  const { connect, credsAuthenticator } = await import('@nats-io/transport-node');
  const { jetstream } = await import('@nats-io/jetstream');
  const home = process.env.WRIT_HOME ?? new URL('../../var/writ', import.meta.url).pathname;
  const authority = await NatsAuthority.load(home);
  const layout = busLayout({ root: stack.root, eventsPrefix: stack.subject('evt'), streams: stack.streams });
  const creds = new TextEncoder().encode(await authority.writUserCreds('svc-orchestrator', servicePermissions('orchestrator', layout)));
  const servers = process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223';
  const service = await connect({ servers, authenticator: credsAuthenticator(creds), inboxPrefix: userInbox('svc-orchestrator') });
  const js = jetstream(service);
  const subject = stack.subject('cmd.bench.noop');
  const operator = await rawConcurrent(total, AGENTS, () => stack.publishCommand('cmd.bench.noop', { n: 1 }));
  const viaService = await rawConcurrent(total, AGENTS, () => js.publish(subject, JSON.stringify({ n: 1 })));
  await service.close();
  const connections = Math.min(total, 100);
  const connectOnce = (options) => async () => (await connect({ ...options, reconnect: false })).close();
  const connectStats = await rawConcurrent(connections, 1, connectOnce({ servers, authenticator: credsAuthenticator(creds) }));
  const anonymousReachable = await connect({ servers: 'nats://127.0.0.1:4222', reconnect: false, timeout: 1_000 }).then((nc) => nc.close().then(() => true), () => false);
  const anonymous = anonymousReachable ? await rawConcurrent(connections, 1, connectOnce({ servers: 'nats://127.0.0.1:4222' })) : null;
  return { operator, service: viaService, connect: connectStats, anonymous };
}

// ---- raw building blocks ----------------------------------------------------------------------------

async function warmContainer(label) {
  const container = await docker.createContainer({
    Image: 'writ/cell:latest',
    Cmd: ['/bin/sh', '-c', 'trap "exit 0" TERM INT; while :; do sleep 2147483647 & wait; done'],
    User: '10001:10001',
    WorkingDir: '/workspace',
    Labels: { 'writ.bench': label },
    NetworkDisabled: true,
    HostConfig: { NetworkMode: 'none', ReadonlyRootfs: true, Tmpfs: { '/workspace': 'rw,size=16m,uid=10001,gid=10001' }, LogConfig: { Type: 'none', Config: {} } },
  });
  await container.start();
  return container;
}

/** The whole life of a one-shot container running the same command: create, start, wait, remove (a new cell per task). */
async function rawRun(label) {
  const container = await docker.createContainer({
    Image: 'writ/cell:latest',
    Cmd: ['sh', '-c', 'echo hello > out.txt'],
    User: '10001:10001',
    WorkingDir: '/workspace',
    Labels: { 'writ.bench': label },
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Tmpfs: { '/workspace': 'rw,size=16m,uid=10001,gid=10001' },
      LogConfig: { Type: 'none', Config: {} },
    },
  });
  try {
    await container.start();
    const { StatusCode } = await container.wait();
    if (StatusCode !== 0) throw new Error(`raw run exited ${StatusCode}`);
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

async function rawExec(container) {
  const exec = await container.exec({ Cmd: ['sh', '-c', 'echo hello > out.txt'], AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = await exec.start({ hijack: true, stdin: false });
  const sink = new PassThrough();
  sink.resume();
  docker.modem.demuxStream(stream, sink, sink);
  await new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  let info = await exec.inspect();
  while (info.Running) {
    await delay(5);
    info = await exec.inspect();
  }
  if (info.ExitCode !== 0) throw new Error(`raw exec exited ${info.ExitCode}`);
}

async function rawConcurrent(total, concurrency, one) {
  const samples = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next += 1;
        const start = performance.now();
        await one();
        samples.push(performance.now() - start);
      }
    }),
  );
  return summary(samples, performance.now() - t0);
}

// ---- run ----------------------------------------------------------------------------------------------

function outcomes(results) {
  const counts = {};
  for (const result of results) counts[result.outcome] = (counts[result.outcome] ?? 0) + 1;
  return Object.entries(counts).map(([outcome, n]) => `${outcome} ${n}`).join(', ');
}

const stack = await startStack({ prefix: 'bench', maxBytes: 256 * MiB, env: SERVICE_ENV, singleProcess: args['single-process'] === true, nodeArgs: NODE_ARGS, log: (text) => console.log(text) });
if (NODE_ARGS.length > 0) console.log(`service node flags: ${NODE_ARGS.join(' ')}`);
if (Object.keys(SERVICE_ENV).length > 0) console.log(`service environment: ${Object.entries(SERVICE_ENV).map(([key, value]) => `${key}=${value}`).join(' ')}`);
let keepLogs = args['keep-logs'] === true;
let raw;
// The bench's own connection, to find this stack's backends in pg_stat_activity (outside the CPU windows).
const pgAdmin = new pg.Client({ connectionString: stack.layout.pgUrl });
pgAdmin.on('error', () => undefined); // a PostgreSQL restart ends it; the look-ups then say unknown
try {
  await pgAdmin.connect();
  const nats = writNatsServer();
  console.log('\nmachine');
  for (const text of await machineInfo(stack)) console.log(`  ${text}`);
  console.log(`\n[bench] ${ACTIONS} allowed and ${DENIED} denied actions from ${AGENTS} concurrent agents (closed loop), ${WARMUP} warm-up actions; root ${stack.root}`);

  const idle = stack.residentMemory();
  const idlePss = proportionalMemory(stack);
  const agents = [];
  for (let i = 0; i < AGENTS; i += 1) agents.push(await stack.registerPrincipal({ id: `${stack.root.replaceAll('_', '-')}-agent-${i}` }));
  const watcher = watch(stack);
  await stack.nc.flush();

  if (WARMUP > 0) {
    const warm = await load(agents, WARMUP, (agent) => allowedAction(stack, watcher, agent));
    await projected(warm);
    console.log(`[bench] warm-up: ${outcomes(warm.results)} in ${(warm.wallMs / 1000).toFixed(1)} s`);
  }

  const allowedCpu = await cpuWindow(stack, nats, pgAdmin);
  const allowedMemory = memorySampler(stack);
  const allowed = await load(agents, ACTIONS, (agent) => allowedAction(stack, watcher, agent));
  const allowedRows = await projected(allowed);
  const allowedCpuSpent = await allowedCpu.stop();
  const allowedPeak = allowedMemory.stop();

  const container = await warmContainer(stack.root);
  raw = container;
  for (let i = 0; i < 10; i += 1) await rawExec(container);
  const rawStats = await rawConcurrent(ACTIONS, AGENTS, () => rawExec(container));
  // Each allowed action is a new task, so a new cell: a one-shot container per action is the other floor.
  const rawRunStats = await rawConcurrent(ACTIONS, AGENTS, () => rawRun(stack.root));

  const deniedCpu = DENIED > 0 ? await cpuWindow(stack, nats, pgAdmin) : null;
  const deniedMemory = memorySampler(stack);
  const denied = DENIED > 0 ? await load(agents, DENIED, (agent) => deniedAction(stack, watcher, agent)) : { results: [], wallMs: 1, startedAt: performance.now() };
  const deniedRows = await projected(denied);
  const deniedCpuSpent = await deniedCpu?.stop();
  const deniedPeak = deniedMemory.stop();

  const ackStats = await rawConcurrent(Math.max(ACTIONS, DENIED), AGENTS, () => stack.publishCommand('cmd.bench.noop', { n: 1 }));
  const auth = await authCosts(stack, Math.max(ACTIONS, DENIED));
  watcher.close();

  const latencies = (list, key) => list.filter((r) => r[key] !== null).map((r) => r[key]);
  const allowedReceipts = summary(latencies(allowed.results, 'receiptMs'), allowed.wallMs);
  const allowedProjected = summary(latencies(allowedRows.rows, 'rowMs'), allowedRows.caughtUpMs);
  const deniedReceipts = summary(latencies(denied.results, 'receiptMs'), denied.wallMs);
  const deniedProjected = summary(latencies(deniedRows.rows, 'rowMs'), deniedRows.caughtUpMs);
  const rowOutcomes = (rows) => outcomes(rows.map((row) => ({ outcome: row.status })));

  console.log(`\nallowed execute_command \`sh -c 'echo hello > out.txt'\`, ${AGENTS} agents (receipts: ${outcomes(allowed.results)}; rows: ${rowOutcomes(allowedRows.rows)}):`);
  console.log(line('publish → receipt', allowedReceipts));
  console.log(line('publish → projected row', allowedProjected));
  console.log(line('raw docker exec', rawStats));
  console.log(ratio('receipt / raw exec', allowedReceipts, rawStats));
  console.log(line('raw docker run (one-shot)', rawRunStats));
  console.log(ratio('receipt / raw run', allowedReceipts, rawRunStats));
  console.log(`  the projection caught up ${((allowedRows.caughtUpMs - allowed.wallMs) / 1000).toFixed(1)} s after the last receipt`);

  console.log(`\ndenied network_write, nothing executed, ${AGENTS} agents (receipts: ${outcomes(denied.results)}; rows: ${rowOutcomes(deniedRows.rows)}):`);
  console.log(line('publish → receipt', deniedReceipts));
  console.log(line('publish → projected row', deniedProjected));
  console.log(line('raw JetStream pub+ack', ackStats));
  console.log(ratio('row / raw pub+ack', deniedProjected, ackStats));
  console.log(`  the projection caught up ${((deniedRows.caughtUpMs - denied.wallMs) / 1000).toFixed(1)} s after the last receipt`);

  console.log('\nauth: what the trust boundary costs (same server, same run)');
  console.log(line('pub+ack, operator', auth.operator));
  console.log(line('pub+ack, service cred', auth.service));
  console.log(ratio('service / operator', auth.service, auth.operator));
  console.log(line('connect, credential', auth.connect));
  if (auth.anonymous !== null) {
    console.log(line('connect, anonymous 4222', auth.anonymous));
    console.log(ratio('credential / anonymous', auth.connect, auth.anonymous));
  } else console.log('  (no anonymous NATS on 127.0.0.1:4222 to compare the connection set-up with)');

  printCpu('allowed phase', ACTIONS, allowedCpuSpent, stack, nats, { msPerAction: 30, what: 'excluding Docker and the container\'s own work' });
  if (deniedCpuSpent !== undefined) printCpu('denied phase', DENIED, deniedCpuSpent, stack, nats, { msPerAction: 10, what: 'for the whole stack (nothing runs in Docker)' });
  printNatsTraffic('allowed phase', ACTIONS, allowedCpuSpent.traffic.before, allowedCpuSpent.traffic.after, stack);
  if (deniedCpuSpent !== undefined) printNatsTraffic('denied phase', DENIED, deniedCpuSpent.traffic.before, deniedCpuSpent.traffic.after, stack);

  const processes = serviceProcesses(stack);
  console.log(`\nresident memory (VmRSS) per service process${stack.singleProcess ? ' (--single-process: every service in one)' : ''}: idle → peak under the allowed load / the denied load (aim: < 150 MB a service)`);
  const after = stack.residentMemory();
  const afterPss = proportionalMemory(stack);
  for (const { name } of processes) {
    const peak = Math.max(allowedPeak[name] ?? 0, deniedPeak[name] ?? 0);
    const flag = !stack.singleProcess && peak > 150 * MiB ? '  OVER 150 MB' : '';
    console.log(`  ${name.padEnd(13)} ${mb(idle[name]).padStart(7)} → ${mb(allowedPeak[name]).padStart(7)} / ${mb(deniedPeak[name]).padStart(7)}   after ${mb(after[name])}   PSS idle ${mb(idlePss[name])}, after ${mb(afterPss[name])}${flag}`);
  }
  const sum = (memory) => Object.values(memory).reduce((total, bytes) => total + (bytes ?? 0), 0);
  if (processes.length > 1) console.log(`  ${'all (sum)'.padEnd(13)} ${mb(sum(idle)).padStart(7)} → ${mb(allowedPeak.total).padStart(7)} / ${mb(deniedPeak.total).padStart(7)}   after ${mb(sum(after))}   PSS idle ${mb(sum(idlePss))}, after ${mb(sum(afterPss))}   (the peak is of the sum at one sample)`);
  console.log('  (VmRSS counts the pages a process shares with others, the node binary\'s first, whole in each; PSS divides them among the sharers)');
  console.log(`\n[bench] load average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} catch (error) {
  keepLogs = true;
  console.error('[bench] failed:', error);
  stack.printLogTails(30);
  process.exitCode = 1;
} finally {
  if (raw) await raw.remove({ force: true }).catch(() => undefined);
  await pgAdmin.end().catch(() => undefined);
  const problems = await stack.stop({ keepLogs });
  if (problems.length > 0) console.log(`[bench] stop: ${problems.join('; ')}`);
  if (keepLogs) console.log(`[bench] service logs kept in ${stack.logDir}`);
}
