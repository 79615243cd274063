// The executor's cells against raw Docker, in one run, as ratios. Not a test: it asserts nothing.
//
// It imports the BUILT executor (services/executor/dist), so build first:
//   NX_NO_CLOUD=true npx nx run @writ/executor:build
// then run it with the workspace's Node 24, as root (cells chown their workspace):
//   npx node scripts/bench/executor.bench.mjs [--opens 20] [--execs 200] [--warmup 20] [--rounds 4]
//                                             [--concurrency 4] [--sustained 400] [--pool 2]
// Every option can also come from the environment (BENCH_OPENS, BENCH_EXECS, ...). It needs the
// cell image (scripts/build-cell-image.sh). Containers carry writ.bench=<run id> and are removed
// at the end, with the temporary cells root.
//
// Measured in the same run (rounds alternate the order of the variants, so drift hits all alike):
//   cold start
//     raw run API   dockerode create + start of the cell's own create request (the same flags,
//                   cell-hardening.ts), workspace mkdir + chown: what `docker run -d` asks the engine
//     raw run CLI   `docker run -d` with the same flags, as a shell user would type it (process spawn included)
//     cold open     CellRuntime.openCell of a new task, pool disabled (workspace, create, start, check running)
//     pool claim    CellRuntime.openCell of a new task with a ready warm pool (rename, workspace move,
//                   binding); the pool is refilled (and waited for) between samples
//   warm action (`true` in a running cell, sequential)
//     raw exec      dockerode exec: create, hijacked start, demux, exit-status poll (the floor)
//     raw exec CLI  `docker exec <cell> true`
//     cell exec     CellRuntime.exec: cwd check, exec under the in-cell supervisor (timer, setsid, output caps)
//     cell action   CellRuntime.runAction: workspace snapshot, exec, snapshot, diff (the executor's run step)
//   sustained     K tasks, one cell each, K closed-loop workers, N actions in all: actions/s of
//                 CellRuntime.exec vs raw exec in the same K containers
//   full path     (unless --no-full; needs NATS on WRIT_NATS_URL) the executor service started in this
//                 process (createExecutorApp: its own subject root, streams, bucket, cells root,
//                 WRIT_EXECUTOR_CONCURRENCY=K, WRIT_CELL_POOL_SIZE=--pool) consuming RunAction with real
//                 EdDSA grants (issuer key registered in the log as the approval service does): publish of
//                 the RunAction -> `execution.completed` seen on <root>.evt.task.> (verify, claim in the log,
//                 snapshot, exec, snapshot, artifacts in the object store, completion appended); `true`,
//                 (a) the same task, one action at a time (warm cell), (b) a new task each (pool claim),
//                 (c) K tasks, K at a time: actions/s
// The whole governed path (ingress, policy, approval, receipt, projection) is scripts/bench/e2e.bench.mjs.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { benchArgs, integerOption, percentile } from './bench-stats.mjs';

const cells = await import(new URL('../../services/executor/dist/outbound/cells/index.js', import.meta.url).href).catch((error) => {
  console.error('[bench] cannot load services/executor/dist: run `NX_NO_CLOUD=true npx nx run @writ/executor:build` first');
  throw error;
});
const { CellRuntime, CellPool, cellContainerSpec } = cells;
const run = promisify(execFile);

const args = benchArgs(import.meta.url, {
  opens: { type: 'string' },
  execs: { type: 'string' },
  warmup: { type: 'string' },
  rounds: { type: 'string' },
  concurrency: { type: 'string' },
  sustained: { type: 'string' },
  pool: { type: 'string' },
  full: { type: 'string' },
  'no-full': { type: 'boolean' },
});

const option = (name, fallback) => integerOption(args, name, fallback);

const OPENS = option('opens', 20);
const EXECS = option('execs', 200);
const WARMUP = option('warmup', 20);
const ROUNDS = option('rounds', 4);
const CONCURRENCY = option('concurrency', 4);
const SUSTAINED = option('sustained', 400);
const POOL = option('pool', 2);
const FULL = option('full', 100);
const WITH_FULL = args['no-full'] !== true && process.env.BENCH_NO_FULL === undefined;
const RUN_ID = randomBytes(5).toString('hex');
const docker = new Docker();

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, x) => sum + x, 0) / sorted.length;
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), mean };
}

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

// ---- raw Docker ---------------------------------------------------------------------------------

async function rawExec(container, argv = ['true']) {
  const exec = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true, Tty: false, User: '10001:10001' });
  const stream = await exec.start({ hijack: true, stdin: false });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.resume();
  stderr.resume();
  docker.modem.demuxStream(stream, stdout, stderr);
  await new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', reject);
  });
  // The exit status is what proves the exec is over (the stream can end just before Docker records it).
  let info = await exec.inspect();
  while (info.Running) {
    await delay(5);
    info = await exec.inspect();
  }
  if (info.ExitCode !== 0) throw new Error(`raw exec went wrong: exit ${info.ExitCode}`);
}

async function rawExecCli(name) {
  await run('docker', ['exec', '-u', '10001:10001', name, 'true']);
}

/** The same create request the runtime sends, for a raw create + start. */
function rawSpec(runtime, image, label, workspaceDir) {
  const { spec } = cellContainerSpec({
    taskId: label,
    containerName: `writ-bench-${RUN_ID}-${label}`,
    image: image.image,
    imageId: image.image_id,
    workspaceDir,
    config: runtime.config,
  });
  return spec;
}

async function rawWorkspace(cellsRoot, label) {
  const dir = path.join(cellsRoot, 'raw', label, 'workspace');
  await mkdir(dir, { recursive: true, mode: 0o750 });
  await chown(dir, 10001, 10001);
  return dir;
}

async function rawRunApi(runtime, image, cellsRoot, label) {
  const workspaceDir = await rawWorkspace(cellsRoot, label);
  const container = await docker.createContainer(rawSpec(runtime, image, label, workspaceDir));
  await container.start();
  return container;
}

/** `docker run -d` with the flags of cell-hardening.ts, spelled as CLI options. */
function cliRunArgs(runtime, image, label, workspaceDir) {
  const spec = rawSpec(runtime, image, label, workspaceDir);
  const host = spec.HostConfig;
  const out = ['run', '-d', '--name', spec.name, '--network', 'none', '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges'];
  out.push('--memory', String(host.Memory), '--memory-swap', String(host.MemorySwap), '--pids-limit', String(host.PidsLimit), '--cpus', String(host.NanoCpus / 1e9));
  for (const ulimit of host.Ulimits) out.push('--ulimit', `${ulimit.Name}=${ulimit.Soft}:${ulimit.Hard}`);
  for (const [target, opts] of Object.entries(host.Tmpfs)) out.push('--tmpfs', `${target}:${opts}`);
  out.push('--ipc', 'private', '--shm-size', String(host.ShmSize), '--cgroupns', 'private', '--log-driver', 'none', '--restart', 'no', '--stop-timeout', String(spec.StopTimeout));
  out.push('--mount', `type=bind,source=${workspaceDir},target=/workspace,bind-propagation=rprivate`);
  out.push('--user', spec.User, '--workdir', spec.WorkingDir, '--hostname', spec.Hostname, '--entrypoint', '');
  for (const env of spec.Env) out.push('--env', env);
  for (const [key, value] of Object.entries(spec.Labels)) out.push('--label', `${key}=${value}`);
  out.push(spec.Image, ...spec.Cmd);
  return out;
}

async function rawRunCli(runtime, image, cellsRoot, label) {
  const workspaceDir = await rawWorkspace(cellsRoot, label);
  await run('docker', cliRunArgs(runtime, image, label, workspaceDir));
}

// ---- the full executor path ----------------------------------------------------------------------

async function fullPath(cellsRootFull, variant) {
  // Each variant has its own streams, subjects, executor and cells.
  const RID = `${RUN_ID}${variant.tag}`;
  await import('reflect-metadata');
  const dist = (file) => new URL(`../../services/executor/dist/${file}`, import.meta.url).href;
  const { createExecutorApp } = await import(dist('bootstrap.js'));
  const { ExecutorEnv, toExecutorConfig } = await import(dist('config.js'));
  const { paramsSha256 } = await import(dist('application/grant-verification.js'));
  const { EventStore } = await import('@writ/eventstore');
  const { loadOperatorSigner, registerServicePrincipal, signServiceEnrollment } = await import('@writ/runtime');
  const { generateEd25519Key, signClaims } = await import('@writ/crypto');
  const { BusClient, natsConnectOptions } = await import('@writ/bus');
  const { createLogger } = await import('@writ/telemetry');
  const { jetstreamManager } = await import('@nats-io/jetstream');

  const MiB = 1024 ** 2;
  const config = toExecutorConfig(
    ExecutorEnv.parse({
      WRIT_NATS_URL: process.env.WRIT_NATS_URL ?? 'nats://127.0.0.1:4223',
      WRIT_SUBJECT_ROOT: `bench_${RID}`,
      WRIT_EVENTS_STREAM: `BENCH_EV_${RID}`,
      WRIT_INGRESS_STREAM: `BENCH_IN_${RID}`,
      WRIT_COMMANDS_STREAM: `BENCH_CMD_${RID}`,
      WRIT_DLQ_STREAM: `BENCH_DLQ_${RID}`,
      WRIT_EVENTS_MAX_BYTES: String(256 * MiB),
      WRIT_BUS_MAX_BYTES: String(256 * MiB),
      WRIT_ARTIFACTS_BUCKET: `BENCH_ART_${RID}`,
      WRIT_ARTIFACTS_MAX_BYTES: String(256 * MiB),
      WRIT_HTTP_PORT: '0',
      WRIT_CELLS_ROOT: cellsRootFull,
      WRIT_EXECUTOR_ID: `bench-${RID}`,
      WRIT_EXECUTOR_CONCURRENCY: String(CONCURRENCY),
      WRIT_CELL_POOL_SIZE: String(POOL),
      WRIT_BUS_PULL_EXPIRES_MS: '1000',
      WRIT_CELL_SUPERVISOR: variant.supervisor ? 'true' : 'false',
      // The issuer's key must chain to the deployment's trust anchor (writ init; npm test and writ.env set it).
      ...(process.env.WRIT_TRUST_ANCHOR ? { WRIT_TRUST_ANCHOR: process.env.WRIT_TRUST_ANCHOR } : {}),
    }),
  );
  const quiet = createLogger('executor-bench', { level: 'silent' });
  const executor = await createExecutorApp(config, { cells: { labels }, logger: quiet, busLogger: quiet, nestLogLevels: false });
  const nc = executor.nc;
  const store = await EventStore.open(nc, { stream: config.streams.events, subjectPrefix: config.subjects.eventsPrefix, maxBytes: 256 * MiB });
  const client = new BusClient(nc);
  const key = await generateEd25519Key({ kid: `bench-${RID}` });
  // Enrolled by the operator as writ init enrolls the approval service: the executor trusts its key only so.
  const operator = await loadOperatorSigner();
  if (operator === undefined) throw new Error('WRIT_OPERATOR_KEY is not set: . var/writ/writ.env first (writ init makes the operator)');
  const authorization = await signServiceEnrollment(config.grant.issuer, { ...operator, now: new Date() });
  await registerServicePrincipal(store, { principalId: config.grant.issuer, displayName: 'approval (bench)', key, authorization });

  const waiting = new Map();
  const decoder = new TextDecoder();
  const sub = nc.subscribe(`${config.subjects.eventsPrefix}.task.>`, {
    callback: (error, msg) => {
      if (error) return;
      const event = JSON.parse(decoder.decode(msg.data));
      if (event.event_type !== 'execution.completed' && event.event_type !== 'grant.refused') return;
      const resolve = waiting.get(event.attempt_id);
      if (resolve) resolve(event);
    },
  });
  await nc.flush();

  let seq = 0;
  const params = { argv: ['true'] };
  async function action(taskId) {
    // Everything of this action is named from its own number: other actions run between the awaits.
    const n = (seq += 1);
    const ids = { task_id: taskId, step_id: `step-${RID}-${n}`, attempt_id: `attempt-${RID}-${n}` };
    const grantId = `grant-${RID}-${n}`;
    const now = new Date();
    const jws = await signClaims(
      {
        ...ids,
        action_class: 'execute_command',
        resource_scope: { paths: ['.'], hosts: [] },
        max_uses: 1,
        issued_by_principal_id: 'writ-policy',
        policy_result_ref: `policy_result:pr-${RID}-${n}`,
        constraints: { params_sha256: paramsSha256(params) },
      },
      key,
      { issuer: config.grant.issuer, audience: config.grant.audience, subject: config.principalId, jwtId: grantId, issuedAt: now, expiresAt: new Date(now.getTime() + 300_000), typ: 'writ-grant+jwt' },
    );
    const command = {
      ...ids,
      grant_id: grantId,
      grant_jws: jws,
      action_request: {
        action_request_id: `ar-${RID}-${n}`,
        task_id: taskId,
        action_class: 'execute_command',
        target_resources: ['.'],
        params,
        expected_effects: ['nothing'],
        reversibility_hint: 'reversible',
        reason: 'bench',
        proposed_by: 'agent-bench',
        proposed_at: now.toISOString(),
      },
    };
    const done = new Promise((resolve) => waiting.set(ids.attempt_id, resolve));
    const t0 = performance.now();
    await client.publish(config.subjects.run, command, { msgId: `msg-${RID}-${n}` });
    let timer;
    const event = await Promise.race([
      done,
      new Promise((_, reject) => {
        timer = setTimeout(async () => {
          const seen = (await store.read(taskId)).map((stored) => `${stored.event.event_type}@${stored.event.attempt_id ?? ''}`);
          if (process.env.BENCH_DEBUG) {
            const jsm = await jetstreamManager(nc);
            const info = await jsm.consumers.info(config.streams.commands, config.durable);
            const dlq = await jsm.streams.info(config.streams.dlq);
            console.error(`[bench:full] consumer pending ${info.num_pending}, ack pending ${info.num_ack_pending}, redelivered ${info.num_redelivered}, delivered ${info.delivered.stream_seq}, ack floor ${info.ack_floor.stream_seq}, waiting ${info.num_waiting}; dlq ${dlq.state.messages}`);
          }
          reject(new Error(`full path: no execution.completed for ${ids.attempt_id} after 30 s; the task's log: ${seen.join(', ')}`));
        }, 30_000);
      }),
    ]).finally(() => clearTimeout(timer));
    const elapsed = performance.now() - t0;
    waiting.delete(ids.attempt_id);
    if (event.event_type !== 'execution.completed' || event.payload.outcome !== 'completed' || event.payload.exit_code !== 0) {
      throw new Error(`full path: ${event.event_type} ${JSON.stringify(event.payload).slice(0, 300)}`);
    }
    return elapsed;
  }

  const debug = (what) => process.env.BENCH_DEBUG && console.error(`[bench:full] ${what}`);
  try {
    const warmTask = `bf-${RID}-warm`;
    debug('warm-up');
    for (let i = 0; i < WARMUP; i += 1) await action(warmTask);
    const same = [];
    for (let i = 0; i < FULL; i += 1) same.push(await action(warmTask));
    debug('new tasks');
    const fresh = [];
    for (let i = 0; i < Math.min(FULL, OPENS * 2); i += 1) {
      await executor.cells.pool?.settled();
      fresh.push(await action(`bf-${RID}-new-${i}`));
    }
    const tasks = Array.from({ length: CONCURRENCY }, (_, i) => `bf-${RID}-k-${i}`);
    for (const task of tasks) await action(task);
    debug('sustained');
    let remaining = SUSTAINED;
    const t0 = performance.now();
    await Promise.all(
      tasks.map(async (task) => {
        while (remaining > 0) {
          remaining -= 1;
          await action(task);
        }
      }),
    );
    const perSecond = SUSTAINED / ((performance.now() - t0) / 1000);
    debug('done');
    return { same: summary(same), fresh: summary(fresh), perSecond };
  } finally {
    debug('closing');
    sub.unsubscribe();
    await client.close?.();
    await executor.close();
    const { connect } = await import('@nats-io/transport-node');
    const admin = await connect({ servers: config.natsUrl, ...natsConnectOptions() });
    const jsm = await jetstreamManager(admin);
    for (const stream of [config.streams.events, config.streams.ingress, config.streams.commands, config.streams.dlq, `OBJ_${config.artifacts.bucket}`]) {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
    await admin.close();
  }
}

// ---- report -------------------------------------------------------------------------------------

const ms = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-').padStart(8);
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}x` : '-').padStart(7);
function table(title, rows, base) {
  console.log(`\n${title}`);
  console.log(`  ${'variant'.padEnd(26)} ${'n'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'mean ms'.padStart(8)}  ${'p50/base'.padStart(8)} ${'p95/base'.padStart(8)}`);
  for (const [name, s] of rows) {
    console.log(`  ${name.padEnd(26)} ${String(s.n).padStart(5)} ${ms(s.p50)} ${ms(s.p95)} ${ms(s.p99)} ${ms(s.mean)}  ${ratio(s.p50, base.p50)}  ${ratio(s.p95, base.p95)}`);
  }
}

async function machine() {
  const engine = await docker.version();
  const info = await docker.info();
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const kernel = (await readFile('/proc/sys/kernel/osrelease', 'utf8').catch(() => os.release())).trim();
  return [
    `node ${process.version}, ${os.platform()} ${kernel}, ${os.cpus().length} x ${cpu}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `Docker Engine ${engine.Version} (API ${engine.ApiVersion}), storage ${info.Driver}, cgroup ${info.CgroupVersion ?? '?'} (${info.CgroupDriver}), runtime ${info.DefaultRuntime}`,
  ].join('\n[bench] ');
}

// ---- the run ------------------------------------------------------------------------------------

const cellsRoot = await mkdtemp(path.join(os.tmpdir(), 'writ-bench-executor-'));
const labels = { 'writ.bench': RUN_ID };
const cold = new CellRuntime({ cellsRoot, labels });
const pooledRuntime = new CellRuntime({ cellsRoot, labels });
const pool = new CellPool(pooledRuntime, { size: POOL, owner: `bench-${RUN_ID}` });
let counter = 0;
const next = (label) => `b-${RUN_ID}-${label}-${(counter += 1)}`;

try {
  const image = await cold.ensureImage();
  console.log(`[bench] ${await machine()}`);
  console.log(`[bench] image ${image.image} (${image.image_id.slice(0, 19)}); opens ${OPENS}/variant, execs ${EXECS}/variant/round x ${ROUNDS} rounds, warmup ${WARMUP}, sustained ${SUSTAINED} actions at K=${CONCURRENCY}, pool ${POOL}`);
  console.log(`[bench] load average at start ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);

  // -- cold start ---------------------------------------------------------------------------------
  await pool.start();
  await pool.settled();
  const start = { 'raw run (API)': [], 'raw run (CLI)': [], 'cold open (no pool)': [], 'pool claim': [] };
  // One of each first, unmeasured: the first create after a while pays for caches.
  await rawRunApi(cold, image, cellsRoot, next('warm'));
  await cold.openCell(next('warm'));
  for (let i = 0; i < OPENS; i += 1) {
    const order = Object.keys(start);
    if (i % 2 === 1) order.reverse();
    for (const variant of order) {
      const label = next('open');
      if (variant === 'raw run (API)') start[variant].push(await timed(() => rawRunApi(cold, image, cellsRoot, label)));
      else if (variant === 'raw run (CLI)') start[variant].push(await timed(() => rawRunCli(cold, image, cellsRoot, label)));
      else if (variant === 'cold open (no pool)') start[variant].push(await timed(() => cold.openCell(label)));
      else {
        await pool.settled();
        const t = await timed(async () => {
          const handle = await pooledRuntime.openCell(label);
          if (handle.pooled !== true) throw new Error('the pool had no ready cell');
        });
        start[variant].push(t);
      }
    }
    // Keep the host at a steady number of containers: remove this round's.
    const leftovers = await docker.listContainers({ all: true, filters: { label: [`writ.bench=${RUN_ID}`] } });
    await Promise.all(
      leftovers
        .filter((c) => !c.Names.some((name) => name.startsWith('/writ-cell-pool.')))
        .map((c) => docker.getContainer(c.Id).remove({ force: true, v: true })),
    );
  }
  await pool.settled();
  const startStats = Object.entries(start).map(([name, samples]) => [name, summary(samples)]);
  table('cold start (new task, container running)  base = raw run (API)', startStats, startStats[0][1]);

  // -- warm action ----------------------------------------------------------------------------------
  const warmTask = next('warm-action');
  const warmCell = await pooledRuntime.openCell(warmTask);
  const container = docker.getContainer(warmCell.container_id);
  const execOptions = { argv: ['true'], timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 };
  const variants = {
    'raw exec (API)': () => rawExec(container),
    'raw exec (CLI)': () => rawExecCli(warmCell.container_name),
    'cell exec (governed)': async () => {
      const result = await pooledRuntime.exec(warmTask, execOptions);
      if (result.exit_code !== 0) throw new Error(`cell exec exit ${result.exit_code}`);
    },
    'cell action (+snapshots)': async () => {
      const { result } = await pooledRuntime.runAction(warmTask, execOptions);
      if (result.exit_code !== 0) throw new Error(`cell action exit ${result.exit_code}`);
    },
  };
  for (let i = 0; i < WARMUP; i += 1) for (const fn of Object.values(variants)) await fn();
  const warm = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = Object.keys(variants);
    if (round % 2 === 1) order.reverse();
    for (const name of order) for (let i = 0; i < EXECS; i += 1) warm[name].push(await timed(variants[name]));
  }
  const warmStats = Object.entries(warm).map(([name, samples]) => [name, summary(samples)]);
  table('warm action: `true` in a running cell, sequential  base = raw exec (API)', warmStats, warmStats[0][1]);

  // -- sustained throughput -------------------------------------------------------------------------
  const tasks = [];
  for (let i = 0; i < CONCURRENCY; i += 1) {
    const task = next('sustained');
    const handle = await pooledRuntime.openCell(task);
    tasks.push({ task, container: docker.getContainer(handle.container_id) });
  }
  async function sustained(kind) {
    let remaining = SUSTAINED;
    const t0 = performance.now();
    await Promise.all(
      tasks.map(async ({ task, container: c }) => {
        while (remaining > 0) {
          remaining -= 1;
          if (kind === 'raw') await rawExec(c);
          else await pooledRuntime.exec(task, execOptions);
        }
      }),
    );
    return SUSTAINED / ((performance.now() - t0) / 1000);
  }
  const throughput = { raw: [], cell: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? ['raw', 'cell'] : ['cell', 'raw'];
    for (const kind of order) throughput[kind].push(await sustained(kind));
  }
  const best = (xs) => Math.max(...xs);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`\nsustained actions/s, K=${CONCURRENCY} tasks (one cell each), ${SUSTAINED} actions per round, ${ROUNDS} rounds`);
  console.log(`  ${'variant'.padEnd(26)} ${'median/s'.padStart(9)} ${'best/s'.padStart(9)}  ratio to raw (median)`);
  console.log(`  ${'raw exec (API)'.padEnd(26)} ${median(throughput.raw).toFixed(1).padStart(9)} ${best(throughput.raw).toFixed(1).padStart(9)}  ${ratio(1, 1)}`);
  console.log(`  ${'cell exec (governed)'.padEnd(26)} ${median(throughput.cell).toFixed(1).padStart(9)} ${best(throughput.cell).toFixed(1).padStart(9)}  ${ratio(median(throughput.cell), median(throughput.raw))}`);

  // -- full executor path: with the in-cell supervisor (the default) and with a Docker exec per action --
  const fulls = [];
  if (WITH_FULL) {
    for (const variant of [
      { tag: 's', supervisor: true, label: 'supervisor' },
      { tag: 'e', supervisor: false, label: 'exec per action' },
    ]) {
      try {
        fulls.push({ variant, ...(await fullPath(path.join(cellsRoot, `full-${variant.tag}`), variant)) });
      } catch (error) {
        console.log(`\nfull executor path (${variant.label}): skipped (${error instanceof Error ? error.message : String(error)})`);
      }
    }
  }
  if (fulls.length > 0) {
    const base = Object.fromEntries(warmStats)['raw exec (API)'];
    table(
      'full executor path: RunAction published -> execution.completed in the log (`true`)  base = raw exec (API)',
      fulls.flatMap((full) => [
        [`same task, ${full.variant.label}`, full.same],
        [`new task (pool), ${full.variant.label}`, full.fresh],
      ]),
      base,
    );
    for (const full of fulls) {
      console.log(`  executor sustained (${full.variant.label}), K=${CONCURRENCY} tasks: ${full.perSecond.toFixed(1)} actions/s = ${ratio(full.perSecond, median(throughput.raw))} raw exec throughput`);
    }
  }

  // -- targets --------------------------------------------------------------------------------------
  const s = Object.fromEntries(startStats);
  const w = Object.fromEntries(warmStats);
  console.log('\ntargets (issue 5)');
  console.log(`  warm action p50 <= 1.0x raw exec:       cell exec ${ratio(w['cell exec (governed)'].p50, w['raw exec (API)'].p50)}  (vs CLI ${ratio(w['cell exec (governed)'].p50, w['raw exec (CLI)'].p50)})`);
  console.log(`  sustained >= 0.9x raw exec throughput:   ${ratio(median(throughput.cell), median(throughput.raw))}`);
  for (const full of fulls) {
    console.log(
      `  governed action (full executor path, ${full.variant.label}): p50 ${ratio(full.same.p50, w['raw exec (API)'].p50)} raw exec (API), ${ratio(full.same.p50, w['raw exec (CLI)'].p50)} raw \`docker exec\`; sustained ${ratio(full.perSecond, median(throughput.raw))} raw exec throughput`,
    );
  }
  console.log(
    `  cold start <= 1.1x raw docker run:       cold open ${ratio(s['cold open (no pool)'].p50, s['raw run (API)'].p50)} (vs CLI ${ratio(s['cold open (no pool)'].p50, s['raw run (CLI)'].p50)}); pool claim ${ratio(s['pool claim'].p50, s['raw run (API)'].p50)}`,
  );
  console.log(`\n[bench] load average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  await pool.stop().catch(() => undefined);
  const leftovers = await docker.listContainers({ all: true, filters: { label: [`writ.bench=${RUN_ID}`] } });
  await Promise.all(leftovers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true })));
  await rm(cellsRoot, { recursive: true, force: true });
}
