#!/usr/bin/env node
// Writ's NATS as a 3-node JetStream cluster on this machine's loopback (issue 13: the replicated log
// under node kills and partitions). Each node is Writ's own server config (`writ init`, included
// unchanged: operator mode, full resolver, the same accounts) plus its name, ports, store, resolver
// directory and a `cluster` block whose routes need a password (generated once, 0600): a route is a
// full view of every account, so no client may open one.
//
// With root and iproute2 every node runs in a network namespace of its own, created here, where
// 127.0.0.1 is the node's alone; loopback-link.mjs processes wire the namespaces together through
// unix sockets (no other address than loopback anywhere). That is what makes a partition possible:
// `cut <n>` severs node n's cluster links (its clients stay connected to it, on the minority side),
// `heal <n>` restores them. Without root the nodes run on the host's loopback and cut/heal refuse.
//
//   node scripts/nats-cluster/cluster.mjs up [--nodes 3] [--no-netns]   # after writ init (scripts/writ-nats.sh does both)
//   node scripts/nats-cluster/cluster.mjs down
//   node scripts/nats-cluster/cluster.mjs status
//   node scripts/nats-cluster/cluster.mjs kill <n> | start <n> | cut <n> | heal <n>
//
// WRIT_HOME (default ./var/writ) holds the state: nats/cluster/{state.json, n<i>.conf, route.secret,
// cluster.env}. Node i listens for clients on <writ init's port> + i - 1 (4223, 4224, 4225), for its
// monitor on <monitor port> + i - 1 (8223...), for routes on 6222 + i. `. $WRIT_HOME/nats/cluster/cluster.env`
// after writ.env: WRIT_NATS_URL lists the three nodes and WRIT_STREAM_REPLICAS=3.
//
// A second cluster of the same deployment beside it (the e2e harness runs one per stack): every command
// takes `--dir <state dir>` (default $WRIT_HOME/nats/cluster), and `up` also `--port`, `--monitor-port`,
// `--route-port` (the first node's; the others follow) and `--log-dir` (default var/log). The namespaces
// and sockets are named after the state dir, so two clusters never share one.

import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, openSync } from 'node:fs';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const LINK = fileURLToPath(new URL('./loopback-link.mjs', import.meta.url));
const HOME = path.resolve(process.env.WRIT_HOME ?? path.join(REPO, 'var', 'writ'));
const NATS_DIR = path.join(HOME, 'nats');
const say = (text) => process.stderr.write(`[nats-cluster] ${text}\n`);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    nodes: { type: 'string', default: '3' },
    'no-netns': { type: 'boolean', default: false },
    dir: { type: 'string' },
    port: { type: 'string' },
    'monitor-port': { type: 'string' },
    'route-port': { type: 'string' },
    'log-dir': { type: 'string' },
  },
});
const DIR = path.resolve(values.dir ?? path.join(NATS_DIR, 'cluster'));
const STATE = path.join(DIR, 'state.json');
const LOG_DIR = path.resolve(values['log-dir'] ?? path.join(REPO, 'var', 'log'));
/** A port option as a number, or undefined; anything else stops the command (usage). */
function portOption(name) {
  const value = values[name];
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_533) {
    say(`--${name} ${value}: a TCP port (the first node's; the next nodes take the ports after it)`);
    process.exit(2);
  }
  return port;
}

class ClusterError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}

const alive = (pid) => {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitGone(pid, ms) {
  for (let waited = 0; waited < ms && alive(pid); waited += 50) await delay(50);
  return !alive(pid);
}

async function readState() {
  return JSON.parse(await readFile(STATE, 'utf8').catch(() => 'null'));
}

async function saveState(state) {
  await writeFile(STATE, `${JSON.stringify(state, null, 2)}\n`);
}

async function canUseNetns() {
  if (process.getuid?.() !== 0) return false;
  try {
    await run('ip', ['netns', 'list']);
    return true;
  } catch {
    return false;
  }
}

/** The plan of the cluster: ports, namespaces and unix sockets, from writ init's config. */
async function plan(nodes, netns, ports = {}) {
  const base = await readFile(path.join(NATS_DIR, 'nats-server.conf'), 'utf8').catch(() => {
    throw new ClusterError('CLUSTER_NOT_INITIALIZED', `no ${path.join(NATS_DIR, 'nats-server.conf')}: run writ init (scripts/writ-nats.sh runs it) first`);
  });
  const port = ports.client ?? Number(/^port: (\d+)$/m.exec(base)?.[1] ?? 4223);
  const monitor = ports.monitor ?? Number(/^http: "127\.0\.0\.1:(\d+)"$/m.exec(base)?.[1] ?? 8223);
  const route = ports.route ?? 6223;
  // The default cluster keeps the names it always had (a running one is found by them); another state dir gets its own.
  const tag = createHash('sha256')
    .update(DIR === path.join(NATS_DIR, 'cluster') ? HOME : DIR)
    .digest('hex')
    .slice(0, 6);
  // Unix socket paths are limited to 107 bytes: a short directory of their own, not under WRIT_HOME.
  const sockets = path.join(existsSync('/run') && process.getuid?.() === 0 ? '/run' : '/tmp', `writ-nats-${tag}`);
  return {
    netns,
    sockets,
    nodes: Array.from({ length: nodes }, (_, index) => {
      const n = index + 1;
      return {
        n,
        name: `writ-n${n}`,
        client: port + index,
        monitor: monitor + index,
        route: route + index,
        namespace: netns ? `writ${tag}n${n}` : undefined,
        conf: path.join(DIR, `n${n}.conf`),
        pidFile: path.join(DIR, `n${n}.pid`),
        log: path.join(LOG_DIR, `nats-writ-n${n}.log`),
        socket: (kind) => path.join(sockets, `n${n}.${kind}.sock`),
      };
    }),
  };
}

async function nodeConfig(node, all, secret) {
  const routes = all.filter((other) => other.n !== node.n).map((other) => `"nats-route://route:${secret}@127.0.0.1:${other.route}"`);
  return [
    '# One node of Writ\'s loopback cluster, written by scripts/nats-cluster/cluster.mjs (holds the route password: 0600).',
    '# Everything else is writ init\'s config, included unchanged (edit it there).',
    `include ${JSON.stringify(path.relative(DIR, path.join(NATS_DIR, 'nats-server.conf')))}`,
    `server_name: ${node.name}`,
    'host: "127.0.0.1"',
    `port: ${node.client}`,
    `http: "127.0.0.1:${node.monitor}"`,
    `jetstream { store_dir: ${JSON.stringify(path.join(DIR, `n${node.n}`, 'jetstream'))} }`,
    `resolver { type: full, dir: ${JSON.stringify(path.join(DIR, `n${node.n}`, 'resolver'))}, allow_delete: false, interval: "2m", timeout: "5s" }`,
    'cluster {',
    '  name: writ',
    `  listen: "127.0.0.1:${node.route}"`,
    `  authorization { user: route, password: "${secret}", timeout: 2 }`,
    `  routes: [${routes.join(', ')}]`,
    '}',
    '',
  ].join('\n');
}

function spawnDetached(argv, log) {
  const fd = openSync(log, 'a');
  const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', fd, fd] });
  child.unref();
  return child.pid;
}

const inNamespace = (node, argv) => (node.namespace === undefined ? argv : ['ip', 'netns', 'exec', node.namespace, ...argv]);

async function startLinks(layout) {
  await mkdir(layout.sockets, { recursive: true, mode: 0o700 });
  const pids = {};
  for (const node of layout.nodes) {
    // Into the node's namespace: its client, monitor and route ports as sockets; out of it: its peers' route ports.
    const links = [
      { listen: { unix: node.socket('client') }, to: { tcp: node.client } },
      { listen: { unix: node.socket('monitor') }, to: { tcp: node.monitor } },
      { listen: { unix: node.socket('route') }, to: { tcp: node.route }, route: true },
      ...layout.nodes.filter((other) => other.n !== node.n).map((other) => ({ listen: { tcp: other.route }, to: { unix: other.socket('route') }, route: true })),
    ];
    const spec = path.join(DIR, `n${node.n}.links.json`);
    await writeFile(spec, JSON.stringify({ links }));
    pids[node.n] = spawnDetached(inNamespace(node, [process.execPath, LINK, spec]), path.join(LOG_DIR, `nats-link-n${node.n}.log`));
  }
  // The host's side: every node's client and monitor port on the host's loopback.
  const hostSpec = path.join(DIR, 'host.links.json');
  await writeFile(hostSpec, JSON.stringify({ links: layout.nodes.flatMap((node) => [{ listen: { tcp: node.client }, to: { unix: node.socket('client') } }, { listen: { tcp: node.monitor }, to: { unix: node.socket('monitor') } }]) }));
  pids.host = spawnDetached([process.execPath, LINK, hostSpec], path.join(LOG_DIR, 'nats-link-host.log'));
  return pids;
}

async function startNode(node) {
  const pid = spawnDetached(inNamespace(node, ['nats-server', '-c', node.conf, '-P', node.pidFile]), node.log);
  return pid;
}

async function healthy(node) {
  try {
    const response = await fetch(`http://127.0.0.1:${node.monitor}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return response.ok;
  } catch {
    return false;
  }
}

async function waitHealthy(nodes, ms) {
  const deadline = Date.now() + ms;
  for (const node of nodes) {
    while (!(await healthy(node))) {
      if (Date.now() > deadline) throw new ClusterError('CLUSTER_NODE_UNHEALTHY', `${node.name} did not report healthy (JetStream current) within ${ms / 1000} s; see ${node.log}`);
      await delay(250);
    }
  }
}

/** Rebuilt from state.json: the functions are not stored. */
function hydrate(state) {
  return { ...state, nodes: state.nodes.map((node) => ({ ...node, socket: (kind) => path.join(state.sockets, `n${node.n}.${kind}.sock`) })) };
}

async function up(options) {
  const existing = await readState();
  if (existing !== null && existing.nodes.every((node) => alive(node.pid))) {
    say(`already running: ${existing.nodes.map((node) => `${node.name} pid ${node.pid} on 127.0.0.1:${node.client}`).join(', ')}`);
    return;
  }
  if (existing !== null) await down();
  const netns = options.netns && (await canUseNetns());
  if (options.netns && !netns) say('network namespaces need root and iproute2: the nodes run on the host\'s loopback, and cut/heal (partitions) are not available');
  const layout = await plan(options.nodes, netns, options.ports);
  await mkdir(DIR, { recursive: true, mode: 0o700 });
  await mkdir(LOG_DIR, { recursive: true });
  const secretFile = path.join(DIR, 'route.secret');
  if (!existsSync(secretFile)) await writeFile(secretFile, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  const secret = (await readFile(secretFile, 'utf8')).trim();
  for (const node of layout.nodes) {
    const resolver = path.join(DIR, `n${node.n}`, 'resolver');
    // Accounts pushed while the deployment ran on one server (agents') start in every node's resolver.
    if (!existsSync(resolver)) await cp(path.join(NATS_DIR, 'resolver'), resolver, { recursive: true }).catch(() => undefined);
    await mkdir(resolver, { recursive: true, mode: 0o700 });
    await writeFile(node.conf, await nodeConfig(node, layout.nodes, secret), { mode: 0o600 });
  }
  let links = {};
  if (netns) {
    for (const node of layout.nodes) {
      await run('ip', ['netns', 'del', node.namespace]).catch(() => undefined);
      await run('ip', ['netns', 'add', node.namespace]);
      await run('ip', ['-n', node.namespace, 'link', 'set', 'lo', 'up']);
    }
    links = await startLinks(layout);
  }
  for (const node of layout.nodes) node.pid = await startNode(node);
  const state = { netns, sockets: layout.sockets, links, nodes: layout.nodes.map(({ socket: _socket, ...node }) => node) };
  await saveState(state);
  await waitHealthy(layout.nodes, 60_000);
  const urls = layout.nodes.map((node) => `nats://127.0.0.1:${node.client}`).join(',');
  await writeFile(
    path.join(DIR, 'cluster.env'),
    ['# Written by scripts/nats-cluster/cluster.mjs: `. ` it after writ.env to use the cluster.', `WRIT_NATS_URL=${urls}`, 'WRIT_STREAM_REPLICAS=3', 'export WRIT_NATS_URL WRIT_STREAM_REPLICAS', ''].join('\n'),
  );
  say(`up: ${layout.nodes.length} nodes (${layout.nodes.map((node) => `${node.name} 127.0.0.1:${node.client}`).join(', ')}), ${netns ? 'each in its own network namespace' : 'on the host\'s loopback'}; . ${path.join(DIR, 'cluster.env')}`);
}

async function down() {
  const state = await readState();
  if (state === null) return say('not running');
  for (const node of state.nodes) {
    if (!alive(node.pid)) continue;
    process.kill(node.pid, 'SIGTERM');
    if (!(await waitGone(node.pid, 15_000))) process.kill(node.pid, 'SIGKILL');
  }
  for (const pid of Object.values(state.links ?? {})) if (alive(pid)) process.kill(pid, 'SIGTERM');
  for (const node of state.nodes) if (node.namespace !== undefined) await run('ip', ['netns', 'del', node.namespace]).catch(() => undefined);
  if (state.sockets) await rm(state.sockets, { recursive: true, force: true });
  await rm(STATE, { force: true });
  say('down');
}

function nodeOf(state, arg) {
  const node = state?.nodes.find((candidate) => String(candidate.n) === String(arg));
  if (state === null) throw new ClusterError('CLUSTER_NOT_RUNNING', 'no cluster is running here (up first)');
  if (node === undefined) throw new ClusterError('CLUSTER_NODE_UNKNOWN', `node ${arg}: the nodes are ${state.nodes.map((n) => n.n).join(', ')}`);
  return node;
}

async function kill(arg) {
  const state = await readState();
  const node = nodeOf(state, arg);
  if (alive(node.pid)) process.kill(node.pid, 'SIGKILL');
  await waitGone(node.pid, 10_000);
  say(`${node.name} killed (SIGKILL)`);
}

async function start(arg) {
  const state = await readState();
  const node = nodeOf(state, arg);
  if (!alive(node.pid)) {
    node.pid = await startNode(hydrate(state).nodes.find((n) => n.n === node.n));
    await saveState(state);
  }
  await waitHealthy([node], 120_000);
  say(`${node.name} up (pid ${node.pid}), JetStream current`);
}

async function partition(arg, signal) {
  const state = await readState();
  const node = nodeOf(state, arg);
  if (!state.netns) throw new ClusterError('CLUSTER_PARTITION_UNAVAILABLE', 'partitions need the nodes in network namespaces: run up as root with iproute2');
  const link = state.links[node.n];
  if (!alive(link)) throw new ClusterError('CLUSTER_LINK_DOWN', `${node.name}'s link process (pid ${link}) is not running: down and up again`);
  process.kill(link, signal);
  say(`${node.name}: route links ${signal === 'SIGUSR1' ? 'cut (partitioned from its peers; its clients stay on it)' : 'healed'}`);
}

async function status() {
  const state = await readState();
  if (state === null) return console.log(JSON.stringify({ running: false }));
  const nodes = [];
  for (const node of state.nodes) {
    let jetstream;
    try {
      const jsz = await (await fetch(`http://127.0.0.1:${node.monitor}/jsz`, { signal: AbortSignal.timeout(2_000) })).json();
      jetstream = { meta_leader: jsz.meta_cluster?.leader, streams: jsz.streams };
    } catch {
      jetstream = undefined;
    }
    nodes.push({ node: node.n, name: node.name, pid: node.pid, alive: alive(node.pid), client: `127.0.0.1:${node.client}`, namespace: node.namespace, healthy: await healthy(node), jetstream });
  }
  console.log(JSON.stringify({ running: true, netns: state.netns, nodes }, null, 2));
}

const [command, arg] = positionals;
const commands = {
  up: () => up({ nodes: Number(values.nodes), netns: !values['no-netns'], ports: { client: portOption('port'), monitor: portOption('monitor-port'), route: portOption('route-port') } }),
  down,
  status,
  kill: () => kill(arg),
  start: () => start(arg),
  cut: () => partition(arg, 'SIGUSR1'),
  heal: () => partition(arg, 'SIGUSR2'),
};
if (commands[command] === undefined || (['kill', 'start', 'cut', 'heal'].includes(command) && arg === undefined)) {
  say('usage: cluster.mjs up [--nodes 3] [--no-netns] [--port <p>] [--monitor-port <p>] [--route-port <p>] [--log-dir <dir>] | down | status | kill <n> | start <n> | cut <n> | heal <n>   (each: [--dir <state dir>])');
  process.exit(2);
}
if (command === 'up' && !(Number.isInteger(Number(values.nodes)) && Number(values.nodes) >= 3 && Number(values.nodes) % 2 === 1)) {
  say(`--nodes ${values.nodes}: an odd number, at least 3 (JetStream needs a majority)`);
  process.exit(2);
}
commands[command]().catch((error) => {
  say(`FAILED ${error.message}`);
  process.exit(1);
});
