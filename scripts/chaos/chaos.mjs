#!/usr/bin/env node
// Whole-stack chaos, checked from outside (issue 13). Against the stack scripts/writ-up.sh
// started, N agents publish signed ActionRequests over their own bus credentials — allowed
// commands, commands that wait for a director (granted or denied by a registered director
// through `writ approve` / `writ deny`), and network writes the policy denies — while this
// script SIGKILLs a random Writ service every few seconds and restarts it exactly as it ran
// (same command line, environment and directory, read from /proc before the kill), and, on a
// schedule, kills and restarts Writ's nats-server and restarts PostgreSQL (immediate mode).
// Every command that runs appends one token unique to its action to `chaos.txt` in its task's
// workspace, so a side effect that ran twice, or a receipt that says something that did not
// happen, shows on disk.
//
// At the end, from outside: every published action terminal (none stuck), every one receipted,
// no token twice, no receipt statement contradicted by the workspace (succeeded ⇒ ran once;
// failed / refused / cancelled ⇒ never "ran" for a command that did not), every task verifies
// (`writ verify --task`), and the projections rebuild equal to the live views
// (`writ projections rebuild`). Prints the figures; exits 1 on any loss or false statement.
//
//   . var/writ/writ.env && node scripts/chaos/chaos.mjs [--agents 6] [--actions 400]
//        [--kill-every 3] [--nats-restarts 3] [--pg-restarts 3] [--rate 4]
//        [--approval-share 0.1] [--denied-share 0.1] [--settle-timeout 900] [--verify-sample all|N]
//        [--verify-concurrency 2] [--partitions 0] [--partition-seconds 20] [--node-down-seconds 5]
//        [--repair-replicas] [--partition-leaders] [--services projection,ingress,...] [--json]
//
// On the loopback cluster (WRIT_NATS_NODES=3 scripts/writ-up.sh) a nats-server restart is one node
// SIGKILLed, left down --node-down-seconds and started again (each node in turn), and --partitions
// cuts one node's route links for --partition-seconds (its clients stay on the minority side).
// The node cut leads no stream: its stream leaderships are stepped down first, because nats-server
// 2.9.10 lets a partitioned stream leader keep a write no quorum accepted, a copy diverged for good
// that can lead again and take writes on top of it (docs/operations.md, "Replicas that diverge"): a
// server bug Writ detects (`writ streams replicas`) but no client can undo. --partition-leaders cuts
// the node whatever it leads, as the long runs in docs/operations.md do.
// After each such fault every stream's replicas are compared (`writ streams replicas`); a diverged
// copy is reported, and with --repair-replicas replaced and the views rebuilt once the faults are
// over, as docs/operations.md tells the operator.
//
// Needs: the stack up (scripts/writ-up.sh, which leaves var/run/<service>.pid), the operator's
// environment (. var/writ/writ.env), root (it reads the cells' workspaces under WRIT_CELLS_ROOT,
// default WRIT_HOME/cells as scripts/writ-up.sh sets it, and restarts PostgreSQL with pg_ctlcluster). HTTP reads carry the
// operator's bearer token (`writ http token`), or WRIT_HTTP_AUTHORIZATION when it is set. Progress
// every 10 s on stderr; the report on stdout.

import { execFile, spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { openSync } from 'node:fs';
import { mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, headers } from '@nats-io/transport-node';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const WRIT_CLI = path.join(REPO, 'apps', 'cli', 'bin', 'writ.mjs');
const SERVICES = ['projection', 'ingress', 'orchestrator', 'policy', 'approval', 'executor', 'receipt'];
const APPROVAL_CONCURRENCY = 4;
const TERMINAL = new Set(['rejected', 'succeeded', 'failed', 'denied', 'unknown_outcome', 'cancelled', 'superseded']);

const { values: flags } = parseArgs({
  options: {
    agents: { type: 'string', default: '6' },
    actions: { type: 'string', default: '400' },
    'kill-every': { type: 'string', default: '3' },
    'nats-restarts': { type: 'string', default: '3' },
    'pg-restarts': { type: 'string', default: '3' },
    partitions: { type: 'string', default: '0' },
    'partition-seconds': { type: 'string', default: '20' },
    'node-down-seconds': { type: 'string', default: '5' },
    rate: { type: 'string', default: '4' },
    'approval-share': { type: 'string', default: '0.1' },
    'denied-share': { type: 'string', default: '0.1' },
    'settle-timeout': { type: 'string', default: '900' },
    'verify-sample': { type: 'string', default: 'all' },
    'verify-concurrency': { type: 'string', default: '2' },
    services: { type: 'string', default: SERVICES.join(',') },
    'repair-replicas': { type: 'boolean', default: false },
    'partition-leaders': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (flags.help) {
  // The usage is this file's opening comment.
  const source = await readFile(fileURLToPath(import.meta.url), 'utf8');
  const lines = source.split('\n').slice(1);
  const usage = lines.slice(0, lines.findIndex((line) => !line.startsWith('//')));
  process.stdout.write(`${usage.map((line) => line.replace(/^\/\/ ?/, '')).join('\n')}\n`);
  process.exit(0);
}
const number = (name, min) => {
  const value = Number(flags[name]);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} ${flags[name]}: a number ≥ ${min}`);
  return value;
};
const settings = {
  agents: number('agents', 1),
  actions: number('actions', 1),
  killEveryMs: number('kill-every', 0) * 1000,
  natsRestarts: number('nats-restarts', 0),
  pgRestarts: number('pg-restarts', 0),
  partitions: number('partitions', 0),
  partitionMs: number('partition-seconds', 1) * 1000,
  nodeDownMs: number('node-down-seconds', 0) * 1000,
  rate: number('rate', 0.1),
  approvalShare: number('approval-share', 0),
  deniedShare: number('denied-share', 0),
  settleTimeoutMs: number('settle-timeout', 1) * 1000,
  verifySample: flags['verify-sample'] === 'all' ? Infinity : number('verify-sample', 0),
  verifyConcurrency: number('verify-concurrency', 1),
  services: flags.services.split(',').filter((name) => name !== ''),
  repairReplicas: flags['repair-replicas'],
  partitionLeaders: flags['partition-leaders'],
};
for (const name of settings.services) if (!SERVICES.includes(name)) throw new Error(`--services: ${name} is not a Writ service (${SERVICES.join(', ')})`);

const env = process.env;
const HOME = env.WRIT_HOME ?? path.join(REPO, 'var', 'writ');
const API = (env.WRIT_URL ?? `http://127.0.0.1:${env.WRIT_HTTP_PORT_BASE ?? 8080}`).replace(/\/+$/, '');
const NATS_URL = env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223';
const ROOT = env.WRIT_SUBJECT_ROOT ?? 'writ';
// Where scripts/writ-up.sh put the deployment's cells.
const CELLS_ROOT = env.WRIT_CELLS_ROOT ?? path.join(HOME, 'cells');
const CLUSTER = path.join(REPO, 'scripts', 'nats-cluster', 'cluster.mjs');
const CLUSTER_STATE = path.join(HOME, 'nats', 'cluster', 'state.json');
const started = Date.now();
const log = (text) => process.stderr.write(`[chaos +${((Date.now() - started) / 1000).toFixed(0)}s] ${text}\n`);

if (env.WRIT_OPERATOR_KEY === undefined || env.WRIT_NATS_CREDS === undefined) {
  console.error('[chaos] the operator environment is not set: . var/writ/writ.env first (and the stack up: scripts/writ-up.sh)');
  process.exit(2);
}

// ---- the CLI, as an operator or a director --------------------------------------------------------

async function writ(args, extraEnv = {}, timeoutMs = 120_000) {
  const { stdout } = await run(process.execPath, [WRIT_CLI, ...args], { env: { ...env, WRIT_URL: API, ...extraEnv }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Why a CLI call failed, in one line: its timeout, else the last line it wrote to stderr. */
function cliFailure(error, timeoutMs) {
  if (error.killed) return `timed out after ${Math.round(timeoutMs / 1000)} s`;
  return String(error.stderr || error.message).trim().split('\n').at(-1);
}

/** A rebuild replays the whole log (73,000 events: 3 min at ~380 a second after a 2,000-action run). */
const REBUILD_TIMEOUT_MS = 30 * 60_000;

/** The operator's bearer token for the HTTP reads (`writ http token`), renewed before its 15 minutes run out; WRIT_HTTP_AUTHORIZATION wins. */
let bearer = { value: env.WRIT_HTTP_AUTHORIZATION, until: env.WRIT_HTTP_AUTHORIZATION ? Infinity : 0 };
async function authorization() {
  if (Date.now() >= bearer.until) bearer = { value: (await writ(['http', 'token', '--ttl', '15m'])).trim(), until: Date.now() + 10 * 60_000 };
  return bearer.value;
}

async function httpGet(pathname) {
  const response = await fetch(`${API}${pathname}`, { headers: { authorization: await authorization() }, signal: AbortSignal.timeout(5_000) });
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`GET ${pathname}: HTTP ${response.status}`);
  return response.json();
}

// ---- principals: agents with their own keys and bus credentials, one director -----------------------

function newKey(kid) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { kid, privateKey, publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' }, privateJwk: { ...privateKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' } };
}

async function registerPrincipals(dir) {
  const suffix = randomUUID().slice(0, 8);
  const agents = [];
  for (let index = 0; index < settings.agents; index++) {
    const id = `chaos-agent-${suffix}-${index}`;
    const key = newKey(`${id}-k1`);
    const jwkFile = path.join(dir, `${id}.pub.json`);
    await writeFile(jwkFile, JSON.stringify(key.publicJwk));
    await writ(['principal', 'add', '--id', id, '--type', 'agent', '--role', 'executor', '--jwk', jwkFile, '--creds-out', path.join(dir, `${id}.creds`)]);
    agents.push({ id, key, creds: await readFile(path.join(dir, `${id}.creds`)) });
  }
  const directorId = `chaos-director-${suffix}`;
  const director = newKey(`${directorId}-k1`);
  await writeFile(path.join(dir, 'director.pub.json'), JSON.stringify(director.publicJwk));
  await writeFile(path.join(dir, 'director.jwk.json'), JSON.stringify(director.privateJwk), { mode: 0o600 });
  await writ(['principal', 'add', '--id', directorId, '--type', 'user', '--role', 'director', '--jwk', path.join(dir, 'director.pub.json'), '--no-creds']);
  return { agents, director: { id: directorId, keyFile: path.join(dir, 'director.jwk.json') } };
}

// ---- actions ----------------------------------------------------------------------------------------

const b64url = (data) => Buffer.from(data).toString('base64url');
function signRequest(agent, request) {
  const signingInput = `${b64url(JSON.stringify({ alg: 'EdDSA', kid: agent.key.kid }))}.${b64url(JSON.stringify(request))}`;
  return `${signingInput}.${b64url(sign(null, Buffer.from(signingInput), agent.key.privateKey))}`;
}

/** One action of the mix: `allowed`, `approval` (granted or denied by the director) or `denied` (network write). */
function planAction(agent, index) {
  const token = `chaos-${randomUUID()}`;
  const roll = (index * 0.6180339887) % 1; // evenly spread, reproducible mix
  const kind = roll < settings.deniedShare ? 'denied' : roll < settings.deniedShare + settings.approvalShare ? 'approval' : 'allowed';
  const base = {
    action_request_id: `ar-${randomUUID()}`,
    task: { title: `chaos ${index}`, goal: 'survive the chaos', policy_profile: 'local_edit_allowed', files_owned: ['**'] },
    reason: 'chaos run',
    proposed_by: agent.id,
    proposed_at: new Date().toISOString(),
  };
  const request =
    kind === 'denied'
      ? { ...base, step: { kind: 'publish_result', title: 'post' }, action_class: 'network_write', target_resources: ['https://example.com/chaos'], params: { url: 'https://example.com/chaos', method: 'POST', body: token }, expected_effects: ['posted'], reversibility_hint: 'irreversible' }
      : kind === 'approval'
        ? { ...base, step: { kind: 'edit', title: 'destructive' }, action_class: 'execute_command', target_resources: ['build', 'chaos.txt'], params: { argv: ['sh', '-c', `echo ${token} >> chaos.txt; rm -rf build`] }, expected_effects: ['build/ is gone'], reversibility_hint: 'irreversible' }
        : { ...base, step: { kind: 'edit', title: 'append a token' }, action_class: 'execute_command', target_resources: ['chaos.txt'], params: { argv: ['sh', '-c', `echo ${token} >> chaos.txt`] }, expected_effects: ['chaos.txt holds the token'], reversibility_hint: 'reversible' };
  return { id: request.action_request_id, agent, kind, token, request, grant: kind === 'approval' ? index % 2 === 0 : undefined, published: false, row: undefined, resolved: false };
}

/**
 * An agent's own connection, as a demanding agent keeps one: reconnecting forever, through
 * authentication errors too (a nats-server restarting under load refused valid credentials
 * for a moment, and the client library closes for good after two in a row by default).
 */
function connectAgent(agent) {
  return connect({
    servers: NATS_URL.split(',').map((url) => url.trim()),
    name: agent.id,
    authenticator: credsAuthenticator(agent.creds),
    maxReconnectAttempts: -1,
    ignoreAuthErrorAbort: true,
    reconnectTimeWait: 250,
  });
}

/** Publishes until JetStream acknowledges it: across a NATS restart an agent retries with the same idempotency key. */
async function publish(connection, action) {
  const subject = `${ROOT}.ingress.action.${action.agent.id}`;
  const h = headers();
  h.set('Writ-Idempotency-Key', action.id);
  // Proposed when it is sent (ingress refuses a request proposed too long ago: INGRESS_STALE), and the
  // same bytes on every retry of this publish (the idempotency key holds the same request).
  action.request.proposed_at = new Date().toISOString();
  const body = signRequest(action.agent, action.request);
  for (let attempt = 1; ; attempt++) {
    try {
      await jetstream(connection.nc).publish(subject, body, { headers: h, timeout: 5_000 });
      action.published = true;
      return;
    } catch (error) {
      if (attempt % 10 === 0) log(`${action.id}: publish still failing (${error.message}); retrying`);
      // Closed for good all the same (the library gave up): a new connection, as the agent would open.
      if (connection.nc.isClosed()) {
        connection.reopening ??= connectAgent(action.agent)
          .then((nc) => (connection.nc = nc))
          .catch(() => undefined)
          .finally(() => (connection.reopening = undefined));
        await connection.reopening;
      }
      await delay(500);
    }
  }
}

// ---- the killer -----------------------------------------------------------------------------------

async function processOf(pid) {
  const [cmdline, environ, cwd] = await Promise.all([readFile(`/proc/${pid}/cmdline`, 'utf8'), readFile(`/proc/${pid}/environ`, 'utf8'), readlink(`/proc/${pid}/cwd`)]);
  const argv = cmdline.split('\0').filter((part) => part !== '');
  const processEnv = Object.fromEntries(environ.split('\0').filter((line) => line.includes('=')).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
  return { argv, env: processEnv, cwd };
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitGone(pid) {
  for (let i = 0; i < 200 && alive(pid); i++) await delay(50);
}

// ---- recovery times: from a kill to every affected service answering /readyz 200 again ----------

const SERVICE_PORTS = Object.fromEntries(SERVICES.map((name, index) => [name, Number(env.WRIT_HTTP_PORT_BASE ?? 8080) + index]));
const generations = {};

async function ready(port) {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

/**
 * Records how long `names` take to be ready again after `since` (each /readyz 200), under
 * `counts.recovery[kind]`. A single service's measurement is dropped when it is killed again
 * before it is ready (it would measure two outages as one); after a nats-server or PostgreSQL
 * restart the figure is kept even when a service kill fell inside it (an upper bound).
 */
function measureRecovery(counts, kind, names, since) {
  const single = names.length === 1;
  const marks = names.map((name) => [name, single ? (generations[name] = (generations[name] ?? 0) + 1) : undefined]);
  counts.pendingRecoveries.push(
    (async () => {
      for (const [name, generation] of marks) {
        while (!(await ready(SERVICE_PORTS[name]))) {
          if (single && generations[name] !== generation) return;
          if (Date.now() - since > 600_000) return log(`${kind}: ${name} not ready 600 s after it; not measured`);
          await delay(100);
        }
      }
      (counts.recovery[kind] ??= []).push(Date.now() - since);
    })(),
  );
}

function summary(samples = []) {
  if (samples.length === 0) return { n: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50_ms: at(0.5), p95_ms: at(0.95), max_ms: sorted.at(-1) };
}

/**
 * SIGKILLs a service. Under its supervisor (scripts/writ-up.sh runs each service through
 * scripts/writ-service.sh) the supervisor starts it again, as in production; a service
 * started without one is started again here as it ran (command line, environment, directory).
 */
async function killService(name, counts) {
  const pidFile = path.join(REPO, 'var', 'run', `${name}.pid`);
  const readPid = async (file) => Number((await readFile(file, 'utf8').catch(() => '')).trim());
  const pid = await readPid(pidFile);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return log(`${name}: no running process in ${pidFile} (its supervisor may be restarting it); skipped`);
  const supervisor = await readPid(path.join(REPO, 'var', 'run', `${name}.supervisor.pid`));
  if (Number.isInteger(supervisor) && supervisor > 0 && alive(supervisor)) {
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    await waitGone(pid);
    counts.kills[name] = (counts.kills[name] ?? 0) + 1;
    measureRecovery(counts, `service kill (${name})`, [name], killedAt);
    return;
  }
  const proc = await processOf(pid);
  const killedAt = Date.now();
  process.kill(pid, 'SIGKILL');
  await waitGone(pid);
  const logFd = openSync(path.join(REPO, 'var', 'log', `${name}.log`), 'a');
  const child = spawn(proc.argv[0], proc.argv.slice(1), { cwd: proc.cwd, env: proc.env, detached: true, stdio: ['ignore', logFd, logFd] });
  child.unref();
  await writeFile(pidFile, `${child.pid}\n`);
  counts.kills[name] = (counts.kills[name] ?? 0) + 1;
  measureRecovery(counts, `service kill (${name})`, [name], killedAt);
}

/** The loopback cluster's nodes (scripts/nats-cluster/cluster.mjs), or undefined on a single server. */
async function clusterNodes() {
  const state = JSON.parse(await readFile(CLUSTER_STATE, 'utf8').catch(() => 'null'));
  return state === null ? undefined : state.nodes.map((node) => node.n);
}

async function cluster(...args) {
  await run(process.execPath, [CLUSTER, ...args], { cwd: REPO, env: { ...env, WRIT_HOME: HOME }, timeout: 180_000 });
}

/** On a cluster: SIGKILL one node (each in turn), leave it down a few seconds, start it again (it catches up). */
async function restartNode(counts) {
  const nodes = await clusterNodes();
  const n = nodes[counts.natsRestarts % nodes.length];
  const killedAt = Date.now();
  await cluster('kill', String(n));
  await delay(settings.nodeDownMs);
  await cluster('start', String(n));
  counts.natsRestarts++;
  measureRecovery(counts, 'nats node kill and restart', SERVICES, killedAt);
  await checkReplicas(counts, `after node ${n} restarted`);
}

/**
 * On a cluster, after a NATS fault: whether every peer of each stream holds the same messages
 * (`writ streams replicas`). nats-server 2.9.10 can leave a partitioned stream leader with a write no
 * quorum accepted, its copy shifted for good; with --repair-replicas the runner then does what
 * docs/operations.md tells the operator: replace the diverged copy, and once the faults are over
 * rebuild the views folded while it served readers.
 */
async function checkReplicas(counts, when) {
  if ((await clusterNodes()) === undefined) return;
  const reportOf = (stdout) => JSON.parse(String(stdout).trim().split('\n').at(-1)).streams;
  let streams;
  try {
    streams = reportOf(await writ(['streams', 'replicas', '--json']));
  } catch (error) {
    if (error.stdout === undefined || String(error.stdout).trim() === '') return log(`replicas ${when}: not compared (${String(error.stderr ?? error.message).trim().split('\n').at(-1)})`);
    streams = reportOf(error.stdout);
  }
  const diverged = streams.filter((stream) => stream.diverged.length > 0);
  if (diverged.length === 0) return;
  for (const stream of diverged) {
    const where = stream.diverged.map((peer) => `${peer.peer} from seq ${peer.seq} (holds ${peer.holds} where the others hold ${peer.others_hold})`).join('; ');
    log(`replicas ${when}: ${stream.stream} diverged: ${where}`);
    counts.divergences.push({ when, stream: stream.stream, peers: stream.diverged.map((peer) => peer.peer) });
  }
  if (!settings.repairReplicas) return log('replicas diverged and --repair-replicas is off: the readers of the diverged copy will stall');
  try {
    await writ(['streams', 'replicas', '--repair', '--json', '--stream', ...diverged.map((stream) => stream.stream)]);
    counts.repairs += diverged.length;
    counts.rebuildAfterRepair = true;
    log(`operator step: replaced the diverged copies (writ streams replicas --repair --stream ${diverged.map((stream) => stream.stream).join(' ')})`);
  } catch (error) {
    // A copy was replaced even when the comparison after it did not come out clean: the views still need rebuilding.
    counts.rebuildAfterRepair = true;
    log(`replica repair failed: ${String(error.stderr ?? error.message).trim().split('\n').at(-1)}`);
  }
}

/** On a cluster in network namespaces: cut one node's route links (its clients stay on it), heal them after a while. */
async function partitionNode(counts) {
  const nodes = await clusterNodes();
  const n = nodes[(counts.partitions + 1) % nodes.length];
  if (!settings.partitionLeaders) await moveStreamLeadersOff(n);
  await cluster('cut', String(n));
  await delay(settings.partitionMs);
  const healedAt = Date.now();
  await cluster('heal', String(n));
  counts.partitions++;
  measureRecovery(counts, 'partition healed', SERVICES, healedAt);
  await checkReplicas(counts, `after node ${n}'s partition healed`);
}

/**
 * Steps down every stream whose leader is node `n` until another node leads it (a stepdown elects
 * any peer, this one again included), as the operator: the node then holds only follower copies.
 */
async function moveStreamLeadersOff(n) {
  const state = JSON.parse(await readFile(CLUSTER_STATE, 'utf8'));
  const name = state.nodes.find((node) => node.n === n)?.name;
  const nc = await connect({ servers: NATS_URL.split(','), authenticator: credsAuthenticator(await readFile(env.WRIT_NATS_CREDS)), name: 'writ-chaos-stepdown' });
  try {
    const jsm = await jetstreamManager(nc);
    // Right after a stepdown the stream may have no leader for a moment: its info is asked again.
    const leaderOf = async (stream) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return (await jsm.streams.info(stream)).cluster?.leader;
        } catch (error) {
          if (attempt === 10) throw error;
          await delay(1_000);
        }
      }
    };
    const moved = [];
    for await (const stream of jsm.streams.list()) {
      const stepdown = `$JS.API.STREAM.LEADER.STEPDOWN.${stream.config.name}`;
      for (let attempt = 1; (await leaderOf(stream.config.name)) === name; attempt++) {
        if (attempt > 10) throw new Error(`${name} still leads ${stream.config.name} after 10 stepdowns`);
        await nc.request(stepdown, undefined, { timeout: 10_000 });
        await delay(1_000);
        moved.push(stream.config.name);
      }
    }
    log(`partition: ${name} leads no stream${moved.length === 0 ? '' : ` (stepped down: ${[...new Set(moved)].join(', ')})`}`);
  } catch (error) {
    log(`partition: could not move the stream leaders off ${name} (${error.message}); cutting it anyway`);
  } finally {
    await nc.close().catch(() => undefined);
  }
}

async function restartNats(counts) {
  if ((await clusterNodes()) !== undefined) return restartNode(counts);
  const pidFile = path.join(HOME, 'nats', 'nats-server.pid');
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  const killedAt = Date.now();
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
    process.kill(pid, 'SIGKILL');
    await waitGone(pid);
  }
  await run(path.join(REPO, 'scripts', 'writ-nats.sh'), [], { cwd: REPO, env: { ...env, WRIT_HOME: HOME }, timeout: 120_000 });
  counts.natsRestarts++;
  measureRecovery(counts, 'nats-server kill and restart', settings.services.length ? SERVICES : [], killedAt);
}

async function postgresAccepting() {
  return run('pg_isready', ['-q', '-h', '127.0.0.1', '-p', '5432'], { timeout: 10_000 }).then(
    () => true,
    () => false,
  );
}

/**
 * An immediate restart of the machine's PostgreSQL. The fault is the restart, never a server left down:
 * `pg_ctlcluster` can give up waiting (crash recovery of a large WAL on a loaded machine takes longer
 * than its 60 s) or fail to start it, and a run whose database stayed down would judge Writ on the
 * machine. So the server is brought back here (started again if it is not running) and the run
 * stops with the reason if it cannot be.
 */
async function restartPostgres(counts) {
  const { stdout } = await run('pg_lsclusters', ['--no-header']);
  const [version, cluster] = stdout.trim().split('\n')[0].split(/\s+/);
  const restartedAt = Date.now();
  try {
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, cluster, 'restart', '-m', 'immediate'], { timeout: 120_000 });
  } catch (error) {
    log(`pg_ctlcluster restart reported: ${String(error.stderr || error.message).trim().split('\n').slice(-2).join(' / ')}; waiting for the server`);
  }
  for (let attempt = 0; !(await postgresAccepting()); attempt++) {
    if (attempt === 60) {
      log('PostgreSQL does not accept connections 60 s after the restart; starting it (pg_ctlcluster start)');
      await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, cluster, 'start'], { timeout: 120_000 }).catch((error) =>
        log(`pg_ctlcluster start: ${String(error.stderr || error.message).trim().split('\n').at(-1)}`),
      );
    }
    if (attempt >= 300) throw new Error(`PostgreSQL ${version}/${cluster} did not come back within 300 s of its restart (pg_lsclusters; /var/log/postgresql/postgresql-${version}-${cluster}.log)`);
    await delay(1_000);
  }
  counts.pgRestarts++;
  measureRecovery(counts, 'PostgreSQL restart (immediate)', SERVICES, restartedAt);
}

function chaosLoop(counts, durationMs, signal, clustered) {
  const tasks = [];
  if (settings.killEveryMs > 0 && settings.services.length > 0) {
    tasks.push(
      (async () => {
        while (!signal.aborted) {
          await delay(settings.killEveryMs, undefined, { signal }).catch(() => undefined);
          if (signal.aborted) break;
          const name = settings.services[Math.floor(Math.random() * settings.services.length)];
          await killService(name, counts).catch((error) => log(`kill ${name} failed: ${error.message}`));
        }
      })(),
    );
  }
  // Faults spread evenly over the submission window, each in its own sequence: one fault of a sequence
  // ends (the node is back, the partition healed) before the next begins.
  const loopStart = Date.now();
  const sequence = (faults) =>
    (async () => {
      for (const [i, { what, run: fault }] of faults.entries()) {
        await delay(Math.max(0, loopStart + (durationMs * (i + 1)) / (faults.length + 1) - Date.now()), undefined, { signal }).catch(() => undefined);
        if (signal.aborted) break;
        log(`fault: ${what}`);
        await fault(counts).catch((error) => {
          counts.faultsFailed.push(`${what}: ${error.message}`);
          log(`${what} failed: ${error.message}`);
        });
      }
    })();
  const times = (n, what, fault) => Array.from({ length: n }, () => ({ what, run: fault }));
  // NATS faults in one sequence, node kills and partitions alternating, so that two nodes are never out at once.
  const natsFaults = [];
  const kills = times(settings.natsRestarts, clustered ? 'one NATS node killed, then started' : "Writ's nats-server killed, then started", restartNats);
  const partitions = times(settings.partitions, 'one NATS node partitioned, then healed', partitionNode);
  while (kills.length > 0 || partitions.length > 0) {
    if (kills.length > 0) natsFaults.push(kills.shift());
    if (partitions.length > 0) natsFaults.push(partitions.shift());
  }
  tasks.push(sequence(natsFaults));
  tasks.push(sequence(times(settings.pgRestarts, 'PostgreSQL restarted (immediate)', restartPostgres)));
  return Promise.all(tasks);
}

// ---- outcomes and checks ----------------------------------------------------------------------------

async function poll(actions) {
  for (const action of actions) {
    if (!action.published || (action.row !== undefined && TERMINAL.has(action.row.status) && (action.row.status === 'rejected' || action.row.receipt_id !== null))) continue;
    action.row = await httpGet(`/v1/actions/${action.id}`).catch(() => action.row);
    // Read the workspace as soon as the action is settled: a closed cell's workspace is scrubbed after its
    // grace (30 min by default), and a long run would otherwise find nothing to check.
    if (action.row?.receipt_id != null && TERMINAL.has(action.row.status)) action.tokensAtSettle = (await tokenCount(action)) ?? 0; // no workspace yet: nothing ran
  }
}

/**
 * The director resolves what waits for it, a few at a time (`writ approve|deny` is a process each: one
 * at a time, 90 waiting approvals held the polling of every other action for minutes).
 */
async function resolveApprovals(actions, director) {
  const waiting = actions.filter((action) => action.kind === 'approval' && !action.resolved && action.row?.status === 'awaiting_approval' && action.row.approval_id);
  const resolve = async (action) => {
    try {
      await writ([action.grant ? 'approve' : 'deny', action.row.approval_id, '--principal', director.id, '--key', director.keyFile, '--task', action.row.task_id]);
      action.resolved = true;
    } catch (error) {
      // Not open yet, or a service down: the next round tries again.
      if (!/not (yet )?open|not found|NOT_FOUND|UNAVAILABLE|ECONNREFUSED/i.test(String(error.stderr ?? error.message))) log(`${action.id}: ${action.grant ? 'approve' : 'deny'} failed: ${String(error.stderr ?? error.message).trim().split('\n')[0]}`);
    }
  };
  let next = 0;
  const resolver = async () => {
    while (next < waiting.length) await resolve(waiting[next++]);
  };
  await Promise.all(Array.from({ length: APPROVAL_CONCURRENCY }, resolver));
}

/**
 * How many times the action's token is in its task's workspace (every chaos.txt under the task's cell
 * directory); undefined when the workspace is gone (scrubbed after the closed cell's grace).
 */
async function tokenCount(action) {
  const taskId = action.row?.task_id;
  if (!taskId) return 0;
  const cellDir = path.join(CELLS_ROOT, taskId);
  if (!(await readdir(cellDir).then(() => true, () => false))) return undefined;
  let count = 0;
  const walk = async (dir, depth) => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory() && depth < 6 && entry.name !== '.lazarus') await walk(file, depth + 1);
      else if (entry.isFile() && entry.name === 'chaos.txt') count += (await readFile(file, 'utf8')).split('\n').filter((line) => line === action.token).length;
    }
  };
  await walk(cellDir, 0);
  return count;
}

/** What the receipt states against what the workspace shows; a string when they disagree. */
function falseStatement(resultCode, count) {
  if (count > 1) return `the token is in the workspace ${count} times`;
  if (resultCode === 'succeeded' && count !== 1) return 'receipt says succeeded, the command never ran';
  if (resultCode === 'failed' && count === 0) return 'receipt says the action ran and failed, the command never ran';
  if ((resultCode === 'refused' || resultCode === 'cancelled') && count > 0) return `receipt says ${resultCode}, the command ran`;
  return undefined;
}

async function verifyTask(taskId) {
  try {
    await writ(['verify', '--task', taskId, '--json', '--wait', '60']);
    return true;
  } catch (error) {
    log(`writ verify --task ${taskId} failed: ${`${String(error.stdout ?? '')} ${String(error.stderr ?? error.message)}`.trim().slice(0, 400)}`);
    return false;
  }
}

// ---- main -----------------------------------------------------------------------------------------

async function main() {
  const dir = await mkdtemp(path.join(tmpdir(), 'writ-chaos-'));
  const counts = { kills: {}, faultsFailed: [], natsRestarts: 0, pgRestarts: 0, partitions: 0, recovery: {}, pendingRecoveries: [], divergences: [], repairs: 0, rebuildAfterRepair: false };
  try {
    log(`doctor: ${(await writ(['doctor'])).trim().split('\n').at(-1)}`);
    const { agents, director } = await registerPrincipals(dir);
    log(`registered ${agents.length} agents and director ${director.id}`);
    if (settings.partitions > 0 && (await clusterNodes()) === undefined) throw new Error('--partitions needs the loopback cluster (WRIT_NATS_NODES=3 scripts/writ-up.sh)');
    const connections = await Promise.all(agents.map(async (agent) => ({ agent, nc: await connectAgent(agent) })));
    const actions = Array.from({ length: settings.actions }, (_, index) => planAction(agents[index % agents.length], index));
    const submitMs = (settings.actions / settings.rate) * 1000;

    const submitStart = Date.now();
    const stop = new AbortController();
    const chaos = chaosLoop(counts, submitMs, stop.signal, (await clusterNodes()) !== undefined);
    const progress = setInterval(() => {
      const terminal = actions.filter((a) => a.row && TERMINAL.has(a.row.status)).length;
      log(`published ${actions.filter((a) => a.published).length}/${actions.length}, terminal ${terminal}, kills ${Object.values(counts.kills).reduce((s, n) => s + n, 0)}, nats restarts ${counts.natsRestarts}, partitions ${counts.partitions}, pg restarts ${counts.pgRestarts}`);
    }, 10_000);
    const pollLoop = (async () => {
      while (!stop.signal.aborted || actions.some((a) => a.published && !(a.row && TERMINAL.has(a.row.status)))) {
        await poll(actions).catch(() => undefined);
        await resolveApprovals(actions, director).catch(() => undefined);
        if (Date.now() - submitStart > submitMs + settings.settleTimeoutMs) break;
        await delay(1_000);
      }
    })();
    // Submission at the configured rate, each agent over its own connection.
    const publishes = [];
    for (const [index, action] of actions.entries()) {
      await delay(Math.max(0, (index * 1000) / settings.rate - (Date.now() - submitStart)));
      publishes.push(publish(connections.find((c) => c.agent === action.agent), action));
    }
    await Promise.all(publishes);
    // The chaos lasts the whole submission window even when the last publish came early.
    await delay(Math.max(0, submitStart + submitMs - Date.now()));
    log('every action published; chaos stops, waiting for outcomes');
    stop.abort();
    await chaos;
    await checkReplicas(counts, 'once the faults were over');
    if (counts.rebuildAfterRepair) {
      // The views folded from the diverged copy lack what its readers quarantined: the operator's second step,
      // retried while the projection is still coming back from the last kill.
      for (let attempt = 1; ; attempt++) {
        const failure = await writ(['projections', 'rebuild', '--force', '--json'], {}, REBUILD_TIMEOUT_MS).then(
          () => undefined,
          (error) => cliFailure(error, REBUILD_TIMEOUT_MS),
        );
        if (failure === undefined) {
          log('operator step: projections rebuilt from the repaired log (writ projections rebuild --force)');
          break;
        }
        log(`projections rebuild --force failed (attempt ${attempt}): ${failure}`);
        if (attempt === 10) break;
        await delay(10_000);
      }
    }
    await pollLoop;
    await Promise.all(counts.pendingRecoveries);
    clearInterval(progress);
    await Promise.all(connections.map((c) => c.nc.close().catch(() => undefined)));
    for (let i = 0; i < 3; i++) await poll(actions).catch(() => undefined);

    // Checks from outside.
    const stuck = actions.filter((a) => !(a.row && TERMINAL.has(a.row.status)));
    const unreceipted = actions.filter((a) => a.row && TERMINAL.has(a.row.status) && a.row.status !== 'rejected' && a.row.receipt_id === null);
    const statements = [];
    const unchecked = [];
    let duplicates = 0;
    let ran = 0;
    for (const action of actions) {
      if (action.row?.receipt_id == null) continue;
      const receipt = await httpGet(`/v1/receipts/${action.row.receipt_id}`).catch(() => undefined);
      const count = (await tokenCount(action)) ?? action.tokensAtSettle;
      if (count === undefined) {
        unchecked.push(action.id);
        continue;
      }
      if (count > 1) duplicates++;
      if (count >= 1) ran++;
      const wrong = falseStatement(receipt?.result_code, count);
      if (wrong !== undefined) statements.push({ action: action.id, task: action.row.task_id, kind: action.kind, status: action.row.status, wrong });
    }
    const tasks = [...new Set(actions.map((a) => a.row?.task_id).filter(Boolean))].slice(0, settings.verifySample);
    let verified = 0;
    let next = 0;
    const verifier = async () => {
      while (next < tasks.length) if (await verifyTask(tasks[next++])) verified++;
    };
    await Promise.all(Array.from({ length: settings.verifyConcurrency }, verifier));
    let rebuild = 'equal';
    try {
      await writ(['projections', 'rebuild', '--json'], {}, REBUILD_TIMEOUT_MS);
    } catch (error) {
      rebuild = `differs or failed: ${cliFailure(error, REBUILD_TIMEOUT_MS)}`;
    }

    const byStatus = {};
    for (const action of actions) {
      const key = `${action.kind}${action.kind === 'approval' ? (action.grant ? '(grant)' : '(deny)') : ''}:${action.row?.status ?? 'unknown'}`;
      byStatus[key] = (byStatus[key] ?? 0) + 1;
    }
    const report = {
      ok:
        stuck.length === 0 &&
        unreceipted.length === 0 &&
        duplicates === 0 &&
        statements.length === 0 &&
        unchecked.length === 0 &&
        verified === tasks.length &&
        rebuild === 'equal' &&
        counts.faultsFailed.length === 0 &&
        counts.repairs >= counts.divergences.length,
      settings: { ...settings, verifySample: Number.isFinite(settings.verifySample) ? settings.verifySample : 'all' },
      seconds: Math.round((Date.now() - started) / 1000),
      actions: actions.length,
      by_status: byStatus,
      stuck: stuck.map((a) => ({ action: a.id, status: a.row?.status ?? 'never projected', task: a.row?.task_id })),
      unreceipted: unreceipted.map((a) => a.id),
      commands_ran: ran,
      duplicate_effects: duplicates,
      false_statements: statements,
      workspaces_unchecked: unchecked,
      verified: `${verified}/${tasks.length}`,
      rebuild,
      replicas: { diverged: counts.divergences, repaired: counts.repairs },
      chaos: { nats: (await clusterNodes()) === undefined ? 'one server' : `${(await clusterNodes()).length}-node cluster`, service_kills: counts.kills, nats_restarts: counts.natsRestarts, partitions: counts.partitions, postgres_restarts: counts.pgRestarts, faults_failed: counts.faultsFailed },
      recovery: Object.fromEntries(Object.entries(counts.recovery).sort().map(([kind, samples]) => [kind, summary(samples)])),
    };
    if (flags.json) console.log(JSON.stringify(report, null, 2));
    else {
      console.log(`chaos: ${report.actions} actions in ${report.seconds} s on ${report.chaos.nats}, ${Object.values(counts.kills).reduce((s, n) => s + n, 0)} service kills ${JSON.stringify(counts.kills)}, ${counts.natsRestarts} nats-server${report.chaos.nats === 'one server' ? '' : ' node'} restarts, ${counts.partitions} partitions, ${counts.pgRestarts} PostgreSQL restarts`);
      if (counts.faultsFailed.length > 0) console.log(`  faults failed      ${counts.faultsFailed.length} (the run did not inflict what it claims; the machine, not Writ, is in question): ${JSON.stringify(counts.faultsFailed)}`);
      console.log(`  by status          ${JSON.stringify(byStatus)}`);
      console.log(`  stuck              ${stuck.length}${stuck.length ? ` ${JSON.stringify(report.stuck.slice(0, 5))}` : ''}`);
      console.log(`  unreceipted        ${unreceipted.length}`);
      console.log(`  duplicate effects  ${duplicates} (commands that ran: ${ran})`);
      console.log(`  false statements   ${statements.length}${statements.length ? ` ${JSON.stringify(statements.slice(0, 5))}` : ''}`);
      console.log(`  unchecked          ${unchecked.length}${unchecked.length ? ' (workspace scrubbed before it was read: raise the cells\' closed grace for long runs)' : ''}`);
      console.log(`  verified tasks     ${report.verified}`);
      console.log(`  rebuild            ${rebuild}`);
      if ((await clusterNodes()) !== undefined) {
        console.log(
          `  replicas           ${counts.divergences.length === 0 ? 'every peer held the same messages after each fault' : `diverged ${counts.divergences.length}× (${counts.divergences.map((d) => `${d.stream} ${d.peers.join(',')} ${d.when}`).join('; ')}), repaired ${counts.repairs}×`}`,
        );
      }
      console.log('  recovery (kill → every affected service /readyz 200 again)');
      for (const [kind, figures] of Object.entries(report.recovery)) console.log(`    ${kind.padEnd(38)} ${figures.n === 0 ? 'not measured' : `n=${figures.n} p50 ${figures.p50_ms} ms, p95 ${figures.p95_ms} ms, max ${figures.max_ms} ms`}`);
      console.log(report.ok ? 'PASS: nothing lost, nothing false' : 'FAIL');
    }
    return report.ok ? 0 : 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[chaos] ${error.stack ?? error}`);
    process.exit(2);
  },
);
