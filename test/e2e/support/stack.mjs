// The whole of Writ, started for real: the seven BUILT services (services/<name>/dist/main.js)
// as child processes of this one, against the machine's NATS, Postgres and Docker, with a
// configuration no other run shares. Used by the e2e suite (test/e2e/*.e2e.spec.ts, through
// vitest) and by the end-to-end benchmark (scripts/bench/e2e.bench.mjs, plain Node), so it is
// plain ESM JavaScript; its types are in stack.d.mts.
//
// One stack = one subject root `uniqueName('e2e')` (every subject of every service derives
// from it), its own streams (events, ingress, commands, dead letters) and artifact bucket with
// small byte bounds, its own Postgres schema in writ_test, free HTTP ports, a temporary
// directory for the service keys and the cells' workspaces. Each child's output goes to
// `<logDir>/<service>.log`. `stop()` sends SIGTERM (the services drain), kills what is left,
// and removes the streams, the bucket, the schema, the cells (containers labelled writ.cell
// whose workspace is under this stack's cells root) and the temporary directory.
//
// Replicas (`instances`): N processes of a service, each on its own HTTP port and log
// (`<service>-<i>.log`), sharing the service's credential and key directories as a deployment's
// replicas do; several executors are several hosts (their own executor id, host id and cells
// root under the stack's). A cluster (`natsNodes: 3`): the stack runs its own JetStream cluster
// of the deployment's NATS config (scripts/nats-cluster/cluster.mjs with a state dir of its own,
// each node in a network namespace as root), and every stream is created with 3 replicas.
// One process (`singleProcess: true`): the seven services in ONE child, apps/serve/dist/main.js
// (`writ serve --all`), each still with its own credential and port (WRIT_SERVE_CREDS_DIR and
// WRIT_SERVE_<SERVICE>__WRIT_HTTP_PORT), logging to `<logDir>/serve.log`.

import { execFile, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, headers } from '@nats-io/transport-node';
import { INGRESS_IDEMPOTENCY_KEY_HEADER, httpAudience } from '@writ/contracts';
import { generateEd25519Key, importEd25519PrivateJwk, signJws } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import {
  NatsAuthority,
  busLayout,
  dropPgServiceRole,
  ensurePgServiceRole,
  ensureWritStreams,
  generatePgPassword,
  mintHttpToken,
  packetHashOfRef,
  pgServiceRole,
  serviceConsumerPermissions,
  servicePermissions,
  writeSecret,
} from '@writ/runtime';
import { testNatsAuth, uniqueName, waitFor } from '@writ/testing';
import Docker from 'dockerode';
import pg from 'pg';

const execFileAsync = promisify(execFile);
const MiB = 1024 ** 2;
/** Posts of one resolution while the approval service answers 503 / 504 (busy, restarting) before the answer is taken as is. */
const RESOLVE_ATTEMPTS = 5;

/** The repository root (this file is test/e2e/support/stack.mjs). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Every service of the governed path, in start order (all start at once; the order is only for output). */
export const SERVICES = Object.freeze(['projection', 'ingress', 'orchestrator', 'policy', 'approval', 'executor', 'receipt']);

/** Statuses of `GET /v1/actions/<id>` after which nothing changes any more. */
export const TERMINAL_ACTION_STATUSES = Object.freeze(['rejected', 'succeeded', 'failed', 'denied', 'unknown_outcome', 'cancelled', 'superseded']);

const NATS_URL = process.env['WRIT_NATS_URL'] ?? 'nats://127.0.0.1:4223';
const CLUSTER_SCRIPT = fileURLToPath(new URL('../../../scripts/nats-cluster/cluster.mjs', import.meta.url));
/** Where a stack's own cluster looks for free ports first (clear of writ-up's 4223-4225, 8223-8225, 6223-6225). */
const CLUSTER_PORTS_FROM = Object.freeze({ client: 4460, monitor: 8460, route: 6460 });
/** The deployment whose NATS authority issues each service's credential and whose operator signs registrations (`writ init`; npm test sets it). */
const WRIT_HOME = process.env['WRIT_HOME'] ?? path.join(fileURLToPath(new URL('../../../', import.meta.url)), 'var', 'writ');
/** Who the harness and its CLI act as: the deployment's operator (its bus credential, its principal and key). */
const OPERATOR = Object.freeze({
  creds: process.env['WRIT_NATS_CREDS'] ?? path.join(WRIT_HOME, 'creds', 'operator.creds'),
  id: process.env['WRIT_OPERATOR_ID'] ?? 'operator',
  key: process.env['WRIT_OPERATOR_KEY'] ?? path.join(WRIT_HOME, 'operator', 'operator.jwk.json'),
  trustAnchor: process.env['WRIT_TRUST_ANCHOR'] ?? path.join(WRIT_HOME, 'trust-anchor.json'),
});
/** The harness's ADMIN connection (it creates the projection's role and schema, as `writ pg setup` does, and drops them); the projection logs in as its own role. */
const PG_URL = process.env['WRIT_E2E_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/writ_test';

/** Distinct free TCP ports on 127.0.0.1: every listener stays open until all are picked, so none repeats. */
export async function freePorts(count) {
  const servers = [];
  try {
    for (let i = 0; i < count; i += 1) {
      const server = createServer();
      await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      servers.push(server);
    }
    return servers.map((server) => server.address().port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** Whether nothing listens on 127.0.0.1:`port` (a listener is opened and closed again). */
async function portFree(port) {
  const server = createServer();
  const free = await new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (free) await new Promise((resolve) => server.close(resolve));
  return free;
}

/** The first of `count` consecutive free ports at or after `from`, stepping by `step` (a cluster's nodes take consecutive ports). */
async function freeRun(count, from, step = 10) {
  for (let base = from; base + count <= 65_535; base += step) {
    let all = true;
    for (let port = base; port < base + count && all; port += 1) all = await portFree(port);
    if (all) return base;
  }
  throw new Error(`no ${count} consecutive free ports from ${from}`);
}

/** Runs scripts/nats-cluster/cluster.mjs for a stack's cluster (state in `dir`); rejects with its output. */
async function clusterCommand(args, dir) {
  try {
    const { stderr } = await execFileAsync(process.execPath, [CLUSTER_SCRIPT, ...args, '--dir', dir], { cwd: REPO_ROOT, env: { ...process.env, WRIT_HOME }, timeout: 180_000 });
    return stderr;
  } catch (error) {
    throw new Error(`cluster.mjs ${args.join(' ')} failed: ${error.stderr ?? error.message}`, { cause: error });
  }
}

/** How many instances of `name` a stack runs (`options.instances`: one number for all, or per service). */
function instanceCount(options, name) {
  const setting = options.instances;
  if (options.singleProcess === true && setting !== undefined && setting !== 1) throw new Error('singleProcess runs one instance of each service (instances must be 1)');
  const count = typeof setting === 'number' ? setting : (setting?.[name] ?? 1);
  if (!Number.isInteger(count) || count < 1) throw new Error(`instances of ${name}: ${count} (a whole number, at least 1)`);
  return count;
}

/** The last `lines` lines of a file, or '' when it does not exist. */
function tailOf(file, lines) {
  if (!existsSync(file)) return '';
  const text = readFileSync(file, 'utf8');
  return text.split('\n').slice(-lines - 1).join('\n');
}

/** Resident memory of a process in bytes (`VmRSS` of /proc/<pid>/status), or null once it is gone. */
export function residentBytes(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** The compact JWS payload as JSON (no verification: for reading what the log holds). */
export function jwsPayload(jws) {
  const part = String(jws).split('.')[1] ?? '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

/** The stack's environment, shared by every service: subject root, streams, bounds, keys, cells, Postgres. */
function stackEnvironment(layout, extra) {
  const bytes = String(layout.maxBytes);
  return {
    WRIT_NATS_URL: layout.natsUrl,
    // The streams, the buckets and the log itself with one copy per node of a cluster (at most 3), as a cluster deploy runs them.
    WRIT_STREAM_REPLICAS: String(layout.replicas),
    WRIT_TRUST_ANCHOR: OPERATOR.trustAnchor,
    // Each service finds the operator's enrollment of its principal here (<WRIT_HOME>/services): readers trust its keys only so.
    WRIT_HOME,
    WRIT_HTTP_HOST: '127.0.0.1',
    WRIT_SUBJECT_ROOT: layout.root,
    WRIT_EVENTS_STREAM: layout.streams.events,
    WRIT_INGRESS_STREAM: layout.streams.ingress,
    WRIT_COMMANDS_STREAM: layout.streams.commands,
    WRIT_DLQ_STREAM: layout.streams.dlq,
    // Every bound gets the same value, so no service "updates" a stream another one created.
    WRIT_EVENTS_MAX_BYTES: bytes,
    WRIT_BUS_MAX_BYTES: bytes,
    WRIT_ARTIFACTS_BUCKET: layout.bucket,
    WRIT_ARTIFACTS_MAX_BYTES: bytes,
    WRIT_POLICY_BUCKET: `${layout.root.toUpperCase()}_POLICY`,
    WRIT_CELLS_ROOT: layout.cellsRoot,
    WRIT_APPROVAL_KEY_FILE: path.join(layout.keysDir, 'approval.jwk.json'),
    WRIT_RECEIPT_KEY_FILE: path.join(layout.keysDir, 'receipt.jwk.json'),
    // WRIT_PG_URL (the projection's own role) and WRIT_PG_PASSWORD_FILE are set once the role exists (Stack#createPgRole).
    // Every service seals what it appends and refuses what another service could not have written (docs/security.md, "Authorship").
    WRIT_SEAL_KEY_DIR: layout.keysDir,
    WRIT_AUTHORSHIP: 'enforce',
    WRIT_PG_SCHEMA: layout.pgSchema,
    WRIT_PG_POOL_SIZE: '4',
    // Short pulls: a SIGTERM'd service with nothing in flight stops within a second.
    WRIT_BUS_PULL_EXPIRES_MS: '1000',
    WRIT_EXECUTOR_ID: `executor-${layout.root}`.replaceAll('_', '-'),
    OTEL_SDK_DISABLED: 'true',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** The parent's environment without anything Writ or Node would read in place of the stack's own. */
function inheritedEnvironment() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('WRIT_') || key.startsWith('OTEL_') || key === 'NODE_OPTIONS' || key === 'LOG_LEVEL' || key.startsWith('VITEST')) continue;
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/**
 * Starts the seven services on a fresh, isolated configuration and waits until every
 * `/readyz` answers 200. On any failure it stops what it started and cleans up before
 * rethrowing (with the failing service's log tail in the message).
 */
export async function startStack(given = {}) {
  // WRIT_E2E_SINGLE_PROCESS=1: every spec's stack runs its services in one process (apps/serve).
  const options = { ...given, singleProcess: given.singleProcess ?? process.env['WRIT_E2E_SINGLE_PROCESS'] === '1' };
  const root = options.root ?? uniqueName(options.prefix ?? 'e2e');
  const upper = root.toUpperCase();
  const dir = await mkdtemp(path.join(os.tmpdir(), `writ-${root}-`));
  const layout = {
    root,
    dir,
    keysDir: path.join(dir, 'keys'),
    cellsRoot: path.join(dir, 'cells'),
    logDir: options.logDir ?? path.join(REPO_ROOT, 'var', 'log', 'e2e', root),
    streams: { events: `${upper}_EVENTS`, ingress: `${upper}_INGRESS`, commands: `${upper}_COMMANDS`, dlq: `${upper}_DLQ` },
    bucket: `${upper}_ARTIFACTS`,
    pgUrl: options.pgUrl ?? PG_URL,
    pgSchema: root.toLowerCase(),
    maxBytes: options.maxBytes ?? 64 * MiB,
    natsUrl: NATS_URL,
    replicas: 1,
    cluster: undefined,
  };
  const nodes = options.natsNodes ?? 1;
  if (nodes > 1) {
    if (!(Number.isInteger(nodes) && nodes % 2 === 1)) throw new Error(`natsNodes ${nodes}: an odd number, at least 3 (JetStream needs a majority)`);
    // Picked now, so the services' environment names every node; the cluster starts with the stack.
    const ports = {
      client: await freeRun(nodes, CLUSTER_PORTS_FROM.client),
      monitor: await freeRun(nodes, CLUSTER_PORTS_FROM.monitor),
      route: await freeRun(nodes, CLUSTER_PORTS_FROM.route),
    };
    layout.cluster = { nodes, ports, dir: path.join(dir, 'nats-cluster') };
    layout.natsUrl = Array.from({ length: nodes }, (_, index) => `nats://127.0.0.1:${ports.client + index}`).join(',');
    layout.replicas = Math.min(nodes, 3);
  }
  await mkdir(layout.keysDir, { recursive: true, mode: 0o700 });
  await mkdir(layout.cellsRoot, { recursive: true });
  await mkdir(layout.logDir, { recursive: true });
  const stack = new Stack(layout, stackEnvironment(layout, options.env ?? {}), options);
  const started = performance.now();
  try {
    await stack.start();
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    (options.log ?? ((line) => process.stderr.write(`${line}\n`)))(`[stack] ${root}: ${Object.values(stack.instances).flat().map((service) => service.id).join(', ')} ready in ${seconds} s${layout.cluster === undefined ? '' : ` on a ${layout.cluster.nodes}-node cluster (${layout.natsUrl})`} (logs ${layout.logDir})`);
    return stack;
  } catch (error) {
    await stack.stop({ keepLogs: true }).catch(() => undefined);
    throw error;
  }
}

/** How many times the first start of a stack starts again an instance that exits before it is ready. */
const STARTUP_RESTARTS = 3;
/** The child of `singleProcess` (every service in one process, apps/serve): its key in the children and its log's name. */
const SERVE = 'serve';

export class Stack {
  #options;
  /** instance id (`executor`, or `executor-2` when a service runs several) → its child process. */
  #children = new Map();
  /** instance id → { service, instance, port } */
  #instancePlan = new Map();
  #clusterUp = false;
  /** principal id → the NATS connection of a registered agent, over its own credential. */
  #agentConnections = new Map();
  #stopping = false;
  #pg;
  #docker = new Docker();
  #exitGuard = () => {
    for (const child of this.#children.values()) if (child.exitCode === null) child.kill('SIGKILL');
    // Its nodes and namespaces outlive this process otherwise (they run detached).
    if (this.#clusterUp) spawnSync(process.execPath, [CLUSTER_SCRIPT, 'down', '--dir', this.layout.cluster.dir], { env: { ...process.env, WRIT_HOME }, timeout: 30_000 });
  };

  constructor(layout, env, options) {
    this.layout = layout;
    this.root = layout.root;
    this.streams = layout.streams;
    this.bucket = layout.bucket;
    this.cellsRoot = layout.cellsRoot;
    /** The services' key directory: seal keys `<principal>.seal.jwk.json`, the approval and receipt keyrings `approval/`, `receipt/`. */
    this.keysDir = layout.keysDir;
    this.logDir = layout.logDir;
    this.pgSchema = layout.pgSchema;
    /** Environment every service got (a service's own overrides come on top). */
    this.env = env;
    /** name → { name, id, instance, port, url, pid, logFile } of its first instance */
    this.services = {};
    /** name → every instance of the service, in order */
    this.instances = {};
    this.natsUrl = layout.natsUrl;
    /** Each executor host's cells root (one unless several executors run). */
    this.cellsRoots = [layout.cellsRoot];
    this.#options = options;
  }

  /** `<root>.<suffix>`: a subject of this stack. */
  subject(suffix) {
    return `${this.root}.${suffix}`;
  }

  /** The public HTTP API (projection). */
  get apiUrl() {
    return this.services.projection.url;
  }

  async start() {
    const names = this.#options.services ?? SERVICES;
    process.once('exit', this.#exitGuard);
    if (this.layout.cluster !== undefined) await this.#startCluster();
    // The harness's own connection: it creates the streams first (the same settings every
    // service asks for), so seven processes never race to create them.
    this.nc = await connect({ servers: this.#servers(), name: `e2e-harness-${this.root}`, ...testNatsAuth() });
    this.js = jetstream(this.nc);
    this.jsm = await jetstreamManager(this.nc);
    await ensureWritStreams(this.jsm, {
      names: { ingress: this.streams.ingress, commands: this.streams.commands, dlq: this.streams.dlq },
      subjects: { ingress: this.subject('ingress.>'), commands: this.subject('cmd.>'), dlq: this.subject('dlq.>') },
      maxBytes: this.layout.maxBytes,
      replicas: this.layout.replicas,
    });
    // The harness reads the log as the services do (WRIT_AUTHORSHIP=enforce): a forged event is quarantined here too.
    this.store = await EventStore.open(
      this.nc,
      { stream: this.streams.events, subjectPrefix: this.subject('evt'), maxBytes: this.layout.maxBytes, replicas: this.layout.replicas },
      { authorship: { servicePrincipals: busLayout().servicePrincipals } },
    );
    this.#pg = new pg.Client({ connectionString: this.layout.pgUrl });
    await this.#pg.connect();
    await this.#createPgRole();

    await this.#issueServiceCredentials(names);

    const plan = names.flatMap((service) => {
      const count = instanceCount(this.#options, service);
      return Array.from({ length: count }, (_, index) => ({ service, instance: index + 1, id: count === 1 ? service : `${service}-${index + 1}` }));
    });
    const ports = await freePorts(plan.length);
    plan.forEach((entry, index) => this.#instancePlan.set(entry.id, { ...entry, port: ports[index] }));
    if (instanceCount(this.#options, 'executor') > 1 && names.includes('executor')) {
      this.cellsRoots = plan.filter((entry) => entry.service === 'executor').map((entry) => path.join(this.cellsRoot, `host-${entry.instance}`));
      for (const root of this.cellsRoots) await mkdir(root, { recursive: true });
    }
    if (this.#options.singleProcess === true) {
      if (names.length !== SERVICES.length) throw new Error('singleProcess starts every service (apps/serve): leave `services` out');
      this.#spawnServe();
      // One process: the first start is not retried per service (a restart would start all seven again).
      await Promise.all(plan.map(({ id }) => this.#waitReady(id)));
      return;
    }
    for (const { id } of plan) this.#spawn(id);
    await Promise.all(plan.map(({ id }) => this.#waitReady(id, { restarts: STARTUP_RESTARTS })));
  }

  /**
   * `singleProcess`: every service in one child (apps/serve, as `writ serve --all` runs it), each with
   * its own credential (WRIT_SERVE_CREDS_DIR: the stack's `<service>.creds`) and port; a service's
   * `serviceEnv` is given to it alone (`WRIT_SERVE_<SERVICE>__<VARIABLE>`).
   */
  #spawnServe() {
    const entry = path.join(REPO_ROOT, 'apps', 'serve', 'dist', 'main.js');
    if (!existsSync(entry)) throw new Error(`${entry} is missing: build it first (npx nx run @writ/serve:build)`);
    const logFile = path.join(this.logDir, `${SERVE}.log`);
    const fd = openSync(logFile, 'a');
    const own = {};
    for (const [id, { service }] of this.#instancePlan) {
      const prefix = `WRIT_SERVE_${service.toUpperCase()}__`;
      for (const [key, value] of Object.entries(this.#options.serviceEnv?.[service] ?? {})) own[`${prefix}${key}`] = value;
      own[`${prefix}WRIT_HTTP_PORT`] = String(this.#instancePlan.get(id).port);
    }
    const env = { ...inheritedEnvironment(), ...this.env, WRIT_SERVE_CREDS_DIR: path.join(this.layout.dir, 'creds'), ...own };
    const child = spawn(process.execPath, [...(this.#options.nodeArgs ?? []), entry], { cwd: REPO_ROOT, env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.#children.set(SERVE, child);
    for (const [id, { service: name, instance, port }] of this.#instancePlan) {
      const started = { name, id, instance, port, url: `http://127.0.0.1:${port}`, pid: child.pid, logFile };
      this.instances[name] = [started];
      this.services[name] = started;
    }
  }

  /** The process an instance runs in: its own, or with `singleProcess` the one of every service. */
  #childOf(id) {
    return this.#children.get(this.#options.singleProcess === true ? SERVE : id);
  }

  /** Whether the stack runs every service in one process (`singleProcess`). */
  get singleProcess() {
    return this.#options.singleProcess === true;
  }

  #refuseSingleProcess(what) {
    if (this.singleProcess) throw new Error(`${what}: this stack runs every service in one process (singleProcess); stop or kill the stack instead`);
  }

  /** The NATS servers to connect to (every node of a cluster). */
  #servers() {
    return this.natsUrl.split(',').map((url) => url.trim());
  }

  /** The stack's own cluster of the deployment's NATS config: its state, stores and logs under the stack's directories. */
  async #startCluster() {
    const { nodes, ports, dir } = this.layout.cluster;
    this.#clusterUp = true;
    const output = await clusterCommand(
      ['up', '--nodes', String(nodes), '--port', String(ports.client), '--monitor-port', String(ports.monitor), '--route-port', String(ports.route), '--log-dir', this.logDir],
      dir,
    );
    this.clusterReport = output.trim();
  }

  /** Runs scripts/nats-cluster/cluster.mjs against this stack's cluster (`kill 2`, `start 2`, `status`...). */
  async cluster(args) {
    if (this.layout.cluster === undefined) throw new Error('this stack runs on the deployment\'s NATS, not a cluster of its own (natsNodes)');
    return clusterCommand(args, this.layout.cluster.dir);
  }

  /**
   * What an instance gets beside the stack's environment. Several executors are several
   * hosts: each its own executor id, host id and cells root (a task's cell stays on the host
   * that made it; docs: services/executor/README.md, "Several hosts").
   */
  #instanceEnvironment({ service, instance }) {
    if (service !== 'executor' || instanceCount(this.#options, 'executor') === 1) return {};
    return {
      WRIT_EXECUTOR_ID: `${this.env.WRIT_EXECUTOR_ID}-${instance}`,
      WRIT_EXECUTOR_HOST_ID: `host-${instance}`,
      WRIT_CELLS_ROOT: this.cellsRoots[instance - 1],
    };
  }

  /**
   * Each service connects with its own least-privilege credential for this stack's subjects and
   * streams (`servicePermissions`, as `writ init` issues them for a deployment), so the suite
   * runs the governed path under the permissions production has.
   */
  async #issueServiceCredentials(names) {
    const authority = await NatsAuthority.load(WRIT_HOME);
    const bus = busLayout({ root: this.root, eventsPrefix: this.subject('evt'), streams: this.streams });
    await mkdir(path.join(this.layout.dir, 'creds'), { recursive: true, mode: 0o700 });
    this.credentials = {};
    for (const name of names) {
      const file = path.join(this.layout.dir, 'creds', `${name}.creds`);
      await writeSecret(file, await authority.writUserCreds(`svc-${name}`, servicePermissions(name, bus)));
      // Beside it, as writ init issues it: the credential the service's durable consumers pull with.
      await writeSecret(path.join(this.layout.dir, 'creds', `${name}.consumer.creds`), await authority.writUserCreds(`svc-${name}`, serviceConsumerPermissions(name, bus)));
      this.credentials[name] = file;
    }
  }

  /**
   * The projection's own Postgres role (`<schema>_projection`, scram-sha-256, a generated password
   * in a 0600 file, owner of the stack's schema), made over the admin connection as `writ pg setup`
   * makes a deployment's: the service logs in with it, never as the admin.
   */
  async #createPgRole() {
    const admin = new URL(this.layout.pgUrl);
    const database = decodeURIComponent(admin.pathname.replace(/^\//, ''));
    this.pgRole = pgServiceRole(this.pgSchema, 'projection');
    const password = generatePgPassword();
    await mkdir(path.join(this.layout.dir, 'pg'), { recursive: true, mode: 0o700 });
    const passwordFile = path.join(this.layout.dir, 'pg', 'projection.password');
    await writeSecret(passwordFile, `${password}\n`);
    await ensurePgServiceRole((sql, params) => this.#pg.query(sql, params === undefined ? undefined : [...params]), { role: this.pgRole, schema: this.pgSchema, database, password });
    this.env.WRIT_PG_URL = `postgres://${this.pgRole}@${admin.host}/${encodeURIComponent(database)}`;
    this.env.WRIT_PG_PASSWORD_FILE = passwordFile;
  }

  #spawn(id) {
    const planned = this.#instancePlan.get(id);
    const { service: name, instance, port } = planned;
    const entry = path.join(REPO_ROOT, 'services', name, 'dist', 'main.js');
    if (!existsSync(entry)) throw new Error(`${entry} is missing: build the services first (npx nx run-many -t build)`);
    const logFile = path.join(this.logDir, `${id}.log`);
    const fd = openSync(logFile, 'a');
    const env = {
      ...inheritedEnvironment(),
      ...this.env,
      WRIT_NATS_CREDS: this.credentials[name],
      ...this.#instanceEnvironment(planned),
      ...(this.#options.serviceEnv?.[name] ?? {}),
      WRIT_HTTP_PORT: String(port),
    };
    const child = spawn(process.execPath, [...(this.#options.nodeArgs ?? []), entry], { cwd: REPO_ROOT, env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.#children.set(id, child);
    const started = { name, id, instance, port, url: `http://127.0.0.1:${port}`, pid: child.pid, logFile };
    const all = (this.instances[name] ??= []);
    all[instance - 1] = started;
    if (instance === 1) this.services[name] = started;
  }

  /** An instance (`executor-2`) or a service's only instance (`executor`). */
  #instance(id) {
    const planned = this.#instancePlan.get(id);
    return planned === undefined ? undefined : this.instances[planned.service]?.[planned.instance - 1];
  }

  /**
   * Until the instance answers /readyz. `restarts`: how many times one that exits first is started
   * again, as every deployment's supervisor does (writ-service.sh, Compose's restart policy, the
   * kubelet): a cluster still electing its streams' leaders times a service's first JetStream calls
   * out, and the service exits rather than serve half set up.
   */
  async #waitReady(name, { restarts = 0 } = {}) {
    const service = this.#instance(name);
    const child = this.#childOf(name);
    const deadline = performance.now() + (this.#options.readyTimeoutMs ?? 90_000);
    let last = 'no answer';
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        const exited = `${name} exited (${child.exitCode ?? child.signalCode}) before it was ready; log ${service.logFile}:\n${this.logTail(name, 30)}`;
        if (restarts <= 0 || performance.now() > deadline) throw new Error(exited);
        process.stderr.write(`[stack] ${name} exited before it was ready; starting it again, as its supervisor would (${restarts} more)\n`);
        this.#spawn(name);
        return this.#waitReady(name, { restarts: restarts - 1 });
      }
      try {
        const response = await fetch(`${service.url}/readyz`, { signal: AbortSignal.timeout(2_000) });
        if (response.status === 200) return;
        last = `${response.status} ${(await response.text()).slice(0, 300)}`;
      } catch (error) {
        last = String(error?.cause?.code ?? error?.message ?? error);
      }
      if (performance.now() > deadline) throw new Error(`${name} is not ready on :${service.port} (last answer: ${last}); log ${service.logFile}:\n${this.logTail(name, 30)}`);
      await delay(100);
    }
  }

  /**
   * Stops one service as an operator would (SIGTERM, SIGKILL after `graceMs`): what it would
   * have consumed waits in its streams. Throws if it had to be killed.
   */
  async stopService(name, { graceMs = 20_000 } = {}) {
    this.#refuseSingleProcess(`stopService(${name})`);
    const child = this.#children.get(name);
    if (child === undefined) throw new Error(`${name} is not a service of this stack`);
    const problem = await this.#terminate(name, child, graceMs);
    if (problem !== null) throw new Error(problem);
  }

  /**
   * Kills one service with SIGKILL, as a crash does: nothing drains, nothing it held is
   * acknowledged (the bus delivers it again after the ack wait), and what it had claimed is
   * left for its next start to settle. Resolves once the process is gone.
   */
  async killService(name) {
    this.#refuseSingleProcess(`killService(${name})`);
    const child = this.#children.get(name);
    if (child === undefined) throw new Error(`${name} is not a service of this stack`);
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} is not running`);
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  /** Starts a stopped service again on its port, as it was started, and waits until it is ready. */
  async startService(name) {
    this.#refuseSingleProcess(`startService(${name})`);
    const child = this.#children.get(name);
    if (child === undefined) throw new Error(`${name} is not a service of this stack`);
    if (child.exitCode === null && child.signalCode === null) throw new Error(`${name} is still running (pid ${child.pid})`);
    this.#spawn(name);
    await this.#waitReady(name);
  }

  /** The last lines of a service's log. */
  logTail(name, lines = 40) {
    const service = this.#instance(name);
    return service ? tailOf(service.logFile, lines) : '';
  }

  /** Prints every instance's log tail (for a failed test). */
  printLogTails(lines = 40, write = (text) => process.stderr.write(text)) {
    const shown = new Set();
    for (const service of Object.values(this.instances).flat()) {
      // One process: one log for every service.
      if (shown.has(service.logFile)) continue;
      shown.add(service.logFile);
      write(`\n----- ${service.id} (pid ${service.pid}, ${service.logFile}), last ${lines} lines -----\n${this.logTail(service.id, lines)}\n`);
    }
  }

  /** Resident memory of each service process (by instance id), in bytes. */
  residentMemory() {
    if (this.singleProcess) return { [SERVE]: residentBytes(this.#children.get(SERVE).pid) };
    return Object.fromEntries(
      Object.values(this.instances)
        .flat()
        .map((service) => [service.id, residentBytes(service.pid)]),
    );
  }

  // ---- principals and requests -------------------------------------------------------------

  /**
   * A principal with a fresh Ed25519 key, registered through the `writ` CLI
   * (`writ principal add`, apps/cli/bin/writ.mjs) against this stack's log.
   */
  async registerPrincipal({ id = uniqueName('agent').replaceAll('_', '-'), type = 'agent', roles = ['executor'], extractable = false } = {}) {
    // extractable: the private key can be written out as a JWK, for a principal that signs through the CLI (`--key <file>`).
    const key = await generateEd25519Key({ kid: `${id}-k1`, extractable });
    const jwkFile = path.join(this.layout.dir, `${id}.public.jwk.json`);
    await writeFile(jwkFile, JSON.stringify(key.publicJwk));
    const credsFile = path.join(this.layout.dir, `${id}.creds`);
    await this.cli(['principal', 'add', '--id', id, '--type', type, ...roles.flatMap((role) => ['--role', role]), '--jwk', jwkFile, '--creds-out', credsFile, '--json']);
    if (type === 'agent') {
      // The agent talks to the bus as agents do: with the credential issued to it, which may publish its own ingress subject only.
      const nc = await connect({ servers: this.#servers(), name: id, authenticator: credsAuthenticator(readFileSync(credsFile)) });
      this.#agentConnections.set(id, nc);
    }
    return { id, kid: key.kid, key, publicJwk: key.publicJwk, credsFile };
  }

  /**
   * The approval service's active signing key, read from its key directory:
   * what a party that stole that service's key (not only its bus credential)
   * holds. For red-team scenarios beyond authorship.
   */
  async approvalKey() {
    const dir = path.join(this.layout.keysDir, 'approval');
    const { active } = JSON.parse(await readFile(path.join(dir, 'keyring.json'), 'utf8'));
    return importEd25519PrivateJwk(JSON.parse(await readFile(path.join(dir, `${active}.jwk.json`), 'utf8')));
  }

  /** A service's sealing key (`WRIT_SEAL_KEY_DIR`): what a party that stole it holds (red-team scenarios). */
  async sealKey(principalId) {
    return importEd25519PrivateJwk(JSON.parse(await readFile(path.join(this.layout.keysDir, `${principalId}.seal.jwk.json`), 'utf8')));
  }

  /** Runs the `writ` CLI against this stack; resolves with its stdout, rejects with its stderr. */
  async cli(args) {
    const bin = path.join(REPO_ROOT, 'apps', 'cli', 'bin', 'writ.mjs');
    const env = {
      ...inheritedEnvironment(),
      WRIT_NATS_URL: this.natsUrl,
      WRIT_STREAM_REPLICAS: String(this.layout.replicas),
      WRIT_SUBJECT_ROOT: this.root,
      WRIT_EVENTS_STREAM: this.streams.events,
      WRIT_HOME,
      WRIT_NATS_CREDS: OPERATOR.creds,
      WRIT_OPERATOR_ID: OPERATOR.id,
      WRIT_OPERATOR_KEY: OPERATOR.key,
      // The CLI reads the log as the services do: an event whose author is unproven is quarantined.
      WRIT_AUTHORSHIP: 'enforce',
      // As `. writ.env` sets it: export bundles this anchor, verify --task checks every registration back to it.
      WRIT_TRUST_ANCHOR: OPERATOR.trustAnchor,
    };
    try {
      const { stdout } = await execFileAsync(process.execPath, [bin, ...args], { cwd: this.layout.dir, env, timeout: 60_000 });
      return stdout;
    } catch (error) {
      throw new Error(`writ ${args.join(' ')} failed: ${error.stderr ?? error.message}`, { cause: error });
    }
  }

  /**
   * An ActionRequest proposing `sh -c 'echo hello > out.txt'` in a new task (files_owned **,
   * local_edit_allowed) unless `overrides` say otherwise; `proposed_at` is now.
   */
  actionRequest(principal, overrides = {}) {
    const withTask = overrides.task_id === undefined;
    return {
      action_request_id: uniqueName('ar').replaceAll('_', '-'),
      ...(withTask ? { task: { title: 'e2e', goal: 'prove the governed path end to end', policy_profile: 'local_edit_allowed', files_owned: ['**'] } } : {}),
      step: { kind: 'edit', title: 'write a file' },
      action_class: 'execute_command',
      target_resources: ['out.txt'],
      params: { argv: ['sh', '-c', 'echo hello > out.txt'] },
      expected_effects: ['out.txt holds hello'],
      reversibility_hint: 'reversible',
      reason: 'e2e test',
      proposed_by: principal.id,
      proposed_at: new Date().toISOString(),
      ...overrides,
    };
  }

  /** A request `local_edit_allowed` denies (a network write): it ends `denied` with a receipt, and nothing runs. */
  deniedActionRequest(principal, overrides = {}) {
    return this.actionRequest(principal, {
      step: { kind: 'publish_result', title: 'post a result' },
      action_class: 'network_write',
      target_resources: ['https://example.com/results'],
      params: { url: 'https://example.com/results', method: 'POST', body: 'hello' },
      expected_effects: ['the result is posted'],
      reason: 'e2e: a denied action',
      ...overrides,
    });
  }

  /** The request as a compact EdDSA JWS signed by `key` (default the principal's), header kid = `kid`. */
  async sign(principal, request, { key = principal.key } = {}) {
    return signJws(JSON.stringify(request), key);
  }

  /**
   * Publishes a signed request to `<root>.ingress.action.<principal>` with its idempotency
   * key in `Writ-Idempotency-Key` (default the request's id; never `Nats-Msg-Id`, which
   * JetStream dedupes across every principal's subject). `body` replaces the JWS (for malformed input).
   */
  async submit(principal, request, { key = request?.action_request_id, body, subjectPrincipal = principal.id } = {}) {
    const payload = body ?? (await this.sign(principal, request));
    // A registered agent publishes over its own credential; an unregistered one (a stranger) has none, so the harness's.
    const nc = this.#agentConnections.get(principal.id) ?? this.nc;
    const h = headers();
    if (key !== undefined) h.set(INGRESS_IDEMPOTENCY_KEY_HEADER, key);
    return jetstream(nc).publish(this.subject(`ingress.action.${subjectPrincipal}`), payload, { headers: h });
  }

  /**
   * A director's signed ApprovalResolution of `approvalId` (compact EdDSA JWS), over the packet
   * hash its `approval.requested` in the task's log names, as `writ approve` signs it;
   * `fields` change what is signed (another packet hash, another approval...).
   */
  async resolutionJws(director, taskId, approvalId, decision, fields = {}) {
    const requested = await this.waitForTaskEvent(taskId, (event) => event.event_type === 'approval.requested' && event.entity_id === approvalId, { what: `approval.requested of ${approvalId}` });
    const resolution = {
      approval_id: approvalId,
      decision,
      packet_hash: packetHashOfRef(String(requested.payload.approval_packet_ref)),
      resolved_by: director.id,
      resolved_at: new Date().toISOString(),
      note: `e2e ${decision}`,
      ...fields,
    };
    return signJws(JSON.stringify(resolution), director.key);
  }

  /**
   * A director's signed resolution (`resolutionJws`) posted to `POST /v1/approvals/<id>/<grant|deny>`; `{ status, body }`.
   * A 503 / 504 (the approval service busy or restarting) is retried with the same signed resolution, as the
   * API tells a director to ("retry with the same idempotency key"): the answer that counts is the one that is not "try again".
   */
  async resolveApproval(director, taskId, approvalId, decision, fields = {}) {
    const resolutionJws = await this.resolutionJws(director, taskId, approvalId, decision, fields);
    for (let attempt = 1; ; attempt++) {
      const answer = await this.http(`/v1/approvals/${approvalId}/${decision}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task_id: taskId, resolution_jws: resolutionJws }),
      });
      if ((answer.status !== 503 && answer.status !== 504) || attempt === RESOLVE_ATTEMPTS) return answer;
      await delay(attempt * 1_000);
    }
  }

  /** JetStream publish of a JSON command on `<root>.<suffix>` (e.g. `cmd.executor.run`). */
  async publishCommand(suffix, command, msgId = uniqueName('msg')) {
    return this.js.publish(this.subject(suffix), JSON.stringify(command), { msgID: msgId });
  }

  // ---- reading what happened -----------------------------------------------------------------

  /**
   * `Bearer <token>` for this stack's API, signed by `principal` (`{ id, key }`, as `principal()` returns)
   * or, by default, the deployment's operator (the trust anchor's key): a fresh token per call.
   */
  async bearer(principal) {
    const signer = principal ?? { id: OPERATOR.id, key: await (this.#operatorKey ??= importEd25519PrivateJwk(JSON.parse(readFileSync(OPERATOR.key, 'utf8')))) };
    return `Bearer ${await mintHttpToken({ principalId: signer.id, key: signer.key, audience: httpAudience(this.root), now: new Date() })}`;
  }

  #operatorKey;

  /**
   * `fetch` against the public API as the operator (a bearer token of `bearer()`), or as `init.as`
   * (a principal), or with `init.headers.authorization` as given ('' sends none); `{ status, body }`
   * with the body parsed when it is JSON.
   */
  async http(route, init = {}) {
    const { as, ...rest } = init;
    const headers = { ...(rest.headers ?? {}) };
    if (!('authorization' in headers)) headers.authorization = await this.bearer(as);
    if (headers.authorization === '') delete headers.authorization;
    const response = await fetch(`${this.apiUrl}${route}`, { ...rest, headers });
    const text = await response.text();
    let body = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, body };
  }

  /**
   * `GET /v1/actions/<id>` once it answers 200 with one of `statuses` (default: any terminal one)
   * and, when given, `until(row)` holds (e.g. the receipt of a denial, which follows the status).
   */
  async waitForAction(actionRequestId, { statuses = TERMINAL_ACTION_STATUSES, until = () => true, timeoutMs = 60_000 } = {}) {
    let last;
    try {
      return await waitFor(
        async () => {
          const answer = await this.http(`/v1/actions/${actionRequestId}`);
          last = answer;
          return answer.status === 200 && statuses.includes(answer.body?.status) && until(answer.body) ? answer.body : undefined;
        },
        { timeoutMs, intervalMs: 100, what: `action ${actionRequestId} to reach ${statuses.join('|')}` },
      );
    } catch (error) {
      throw new Error(`${error.message}; last answer ${JSON.stringify(last)?.slice(0, 500)}`, { cause: error });
    }
  }

  /** The task's events as the log holds them (chain verified), in order. */
  async taskEvents(taskId) {
    return (await this.store.read(taskId)).map((stored) => stored.event);
  }

  /** The events of an entity stream (`ingress`, `principal`...). */
  async entityEvents(entityType, entityId) {
    return (await this.store.readEntity(entityType, entityId)).map((stored) => stored.event);
  }

  /** The first event of the task matching `match`, once it is in the log. */
  async waitForTaskEvent(taskId, match, { what = 'an event', timeoutMs = 60_000 } = {}) {
    return waitFor(async () => (await this.taskEvents(taskId)).find(match), { timeoutMs, intervalMs: 100, what: `${what} in task ${taskId}` });
  }

  /** Polls a projection route (as `as`, else the operator) until `until(status, body)` holds: the answer that did. */
  async waitForRoute(route, until, { as, timeoutMs = 120_000 } = {}) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = await this.http(route, as === undefined ? {} : { as });
      if (until(answer.status, answer.body)) return answer;
      if (Date.now() > deadline) throw new Error(`${route} did not reach the expected answer: ${answer.status} ${JSON.stringify(answer.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Subjects of the event log under `<root>.evt.<filter>` with their message counts. */
  async eventSubjects(filter = '>') {
    const info = await this.jsm.streams.info(this.streams.events, { subjects_filter: this.subject(`evt.${filter}`) });
    return info.state.subjects ?? {};
  }

  /** Messages stored on one subject of a stream, oldest first: `{ seq, data, headers }`. */
  async streamMessages(stream, subject) {
    const out = [];
    const info = await this.jsm.streams.info(stream, { subjects_filter: subject });
    const count = info.state.subjects?.[subject] ?? 0;
    let seq = 0;
    while (out.length < count) {
      const message = await this.jsm.streams.getMessage(stream, { next_by_subj: subject, seq: seq + 1 });
      if (!message) break;
      out.push({ seq: message.seq, data: message.data, json: () => JSON.parse(new TextDecoder().decode(message.data)), headers: message.header });
      seq = message.seq;
    }
    return out;
  }

  /** Waits until a durable consumer of a stream has acknowledged (or dead-lettered) everything up to `seq`. */
  async waitConsumerSettled(stream, durable, seq, { timeoutMs = 60_000 } = {}) {
    return waitFor(
      async () => {
        const info = await this.jsm.consumers.info(stream, durable);
        return info.ack_floor.stream_seq >= seq && info.num_ack_pending === 0 && info.num_pending === 0 ? true : undefined;
      },
      { timeoutMs, intervalMs: 50, what: `durable ${durable} of ${stream} to settle at ${seq}` },
    );
  }

  /** A query on the stack's database as the stack's own administrator (for what a test reads or breaks beside the projection). */
  async pgQuery(sql, params) {
    return this.#pg.query(sql, params === undefined ? undefined : [...params]);
  }

  /** Path on the host of a file in a task's cell workspace (on the executor host that holds the task's cell). */
  workspaceFile(taskId, relative = '') {
    const root = this.cellsRoots.find((candidate) => existsSync(path.join(candidate, taskId))) ?? this.cellsRoots[0];
    return path.join(root, taskId, 'workspace', relative);
  }

  // ---- stopping ----------------------------------------------------------------------------------

  /**
   * SIGTERM to every service (they drain), SIGKILL after `graceMs`, then removes the streams,
   * the bucket, the schema, the cells and the temporary directory. Logs stay when `keepLogs`.
   */
  async stop({ keepLogs = false, graceMs = 20_000 } = {}) {
    if (this.#stopping) return;
    this.#stopping = true;
    const exited = [...this.#children.entries()].map(([name, child]) => this.#terminate(name, child, graceMs));
    const results = await Promise.all(exited);
    process.removeListener('exit', this.#exitGuard);
    const problems = results.filter((result) => result !== null);

    await this.#removeCells().catch((error) => problems.push(`cells: ${error.message}`));
    for (const nc of this.#agentConnections.values()) await nc.close().catch(() => undefined);
    if (this.nc) {
      for (const stream of [...Object.values(this.streams), `OBJ_${this.bucket}`, `KV_${this.env.WRIT_POLICY_BUCKET}`]) {
        await this.jsm.streams.delete(stream).catch(() => undefined);
      }
      await this.nc.close().catch(() => undefined);
    }
    if (this.#clusterUp) {
      await clusterCommand(['down'], this.layout.cluster.dir).catch((error) => problems.push(`nats cluster: ${error.message}`));
      this.#clusterUp = false;
    }
    if (this.#pg) {
      await this.#pg.query(`DROP SCHEMA IF EXISTS "${this.pgSchema}" CASCADE`).catch((error) => problems.push(`schema: ${error.message}`));
      if (this.pgRole) await dropPgServiceRole((sql, params) => this.#pg.query(sql, params === undefined ? undefined : [...params]), this.pgRole).catch((error) => problems.push(`role: ${error.message}`));
      await this.#pg.end().catch(() => undefined);
    } else {
      const client = new pg.Client({ connectionString: this.layout.pgUrl });
      await client.connect().then(() => client.query(`DROP SCHEMA IF EXISTS "${this.pgSchema}" CASCADE`)).catch(() => undefined);
      await client.end().catch(() => undefined);
    }
    await rm(this.layout.dir, { recursive: true, force: true }).catch((error) => problems.push(`temp dir: ${error.message}`));
    if (!keepLogs) await rm(this.logDir, { recursive: true, force: true }).catch(() => undefined);
    return problems;
  }

  /** null when the service stopped on SIGTERM, else what happened. */
  async #terminate(name, child, graceMs) {
    if (child.exitCode !== null || child.signalCode !== null) return `${name} had already exited (${child.exitCode ?? child.signalCode})`;
    const done = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.kill('SIGTERM');
    const grace = new AbortController();
    const result = await Promise.race([done, delay(graceMs, null, { signal: grace.signal }).catch(() => null)]);
    grace.abort();
    if (result !== null) return null;
    child.kill('SIGKILL');
    await done;
    return `${name} did not stop within ${graceMs} ms of SIGTERM and was killed`;
  }

  /** Containers of this stack's cells (label writ.cell, workspace under its cells root), then the cells root. */
  async #removeCells() {
    const containers = await this.#docker.listContainers({ all: true, filters: { label: ['writ.cell'] } });
    const ours = containers.filter((container) => (container.Mounts ?? []).some((mount) => typeof mount.Source === 'string' && mount.Source.startsWith(`${this.cellsRoot}/`)));
    await Promise.all(ours.map((container) => this.#docker.getContainer(container.Id).remove({ force: true, v: true }).catch(() => undefined)));
    await rm(this.cellsRoot, { recursive: true, force: true });
  }
}
