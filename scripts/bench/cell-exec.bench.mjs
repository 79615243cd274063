// Micro-benchmark of the executor's Docker cells. Not a test: it asserts nothing.
//
// It imports the BUILT executor (services/executor/dist), so build first:
//   NX_NO_CLOUD=true npx nx run @writ/executor:build
// then run it with the workspace's Node 24, as root (cells chown their workspace):
//   npx node scripts/bench/cell-exec.bench.mjs [--execs 100] [--warmup 20] [--rounds 4] [--opens 5]
// Every option can also come from the environment (BENCH_EXECS, BENCH_WARMUP,
// BENCH_ROUNDS, BENCH_OPENS). It needs the cell image (scripts/build-cell-image.sh).
//
// Measured in the same run, on the same warm container:
//   runtime   CellRuntime.exec(task, { argv: ['echo', 'hello'] }): cwd check, exec create,
//             hijacked start, in-cell supervisor (timer + setsid), demux, exit-status poll
//   raw       dockerode exec of `echo hello`: create, hijacked start, demux, exec inspect
// Rounds alternate the order of the two variants, so drift on the machine hits both alike.
// Also: open-cell cold time (create + start of a new hardened container, workspace prepared).
// Containers carry writ.bench=<run id> and are removed at the end, with the temporary cells root.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import Docker from 'dockerode';
import { benchArgs, integerOption, percentile } from './bench-stats.mjs';

const { CellRuntime } = await import(new URL('../../services/executor/dist/outbound/cells/index.js', import.meta.url).href).catch((error) => {
  console.error('[bench] cannot load services/executor/dist: run `NX_NO_CLOUD=true npx nx run @writ/executor:build` first');
  throw error;
});

const args = benchArgs(import.meta.url, {
  execs: { type: 'string' },
  warmup: { type: 'string' },
  rounds: { type: 'string' },
  opens: { type: 'string' },
});

const option = (name, fallback) => integerOption(args, name, fallback);

const EXECS = option('execs', 100);
const WARMUP = option('warmup', 20);
const ROUNDS = option('rounds', 4);
const OPENS = option('opens', 5);
const RUN_ID = randomBytes(5).toString('hex');
const docker = new Docker();

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, x) => sum + x, 0) / sorted.length;
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), mean, min: sorted[0], max: sorted.at(-1) };
}

const ms = (x) => `${x.toFixed(1)} ms`;
function line(name, s) {
  return `${name.padEnd(10)} n=${String(s.n).padStart(4)}  p50 ${ms(s.p50).padStart(9)}  p95 ${ms(s.p95).padStart(9)}  mean ${ms(s.mean).padStart(9)}  min ${ms(s.min).padStart(9)}  max ${ms(s.max).padStart(9)}  (${(1000 / s.mean).toFixed(1)}/s)`;
}

async function rawExec(container) {
  const exec = await container.exec({ Cmd: ['echo', 'hello'], AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = await exec.start({ hijack: true, stdin: false });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks = [];
  stdout.on('data', (chunk) => chunks.push(chunk));
  stderr.resume();
  docker.modem.demuxStream(stream, stdout, stderr);
  await new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  // Same exit-status poll as the runtime: the stream can end just before Docker records the exit.
  let info = await exec.inspect();
  while (info.Running) {
    await delay(5);
    info = await exec.inspect();
  }
  if (info.ExitCode !== 0 || Buffer.concat(chunks).toString() !== 'hello\n') throw new Error(`raw exec went wrong: exit ${info.ExitCode}`);
}

async function runtimeExec(runtime, taskId) {
  const result = await runtime.exec(taskId, { argv: ['echo', 'hello'], timeoutMs: 30_000, maxOutputBytes: 4096 });
  if (result.exit_code !== 0 || result.stdout.toString() !== 'hello\n') throw new Error(`runtime exec went wrong: exit ${result.exit_code}`);
}

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const cellsRoot = await mkdtemp(path.join(os.tmpdir(), 'writ-bench-cells-'));
const runtime = new CellRuntime({ cellsRoot, labels: { 'writ.bench': RUN_ID } });

try {
  const image = await runtime.ensureImage();
  const engine = await docker.version();
  console.log(`[bench] node ${process.version}, Docker Engine ${engine.Version} (API ${engine.ApiVersion}), ${os.cpus().length} CPUs, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`[bench] image ${image.image} (${image.image_id.slice(0, 19)}), execs ${EXECS} per variant per round, rounds ${ROUNDS}, warmup ${WARMUP}, cold opens ${OPENS}`);

  // Cold open: a new task each time (new workspace, create + start of the hardened container).
  const opens = [];
  for (let i = 0; i < OPENS; i += 1) {
    const taskId = `bench-${RUN_ID}-cold-${i}`;
    opens.push(await timed(() => runtime.openCell(taskId)));
    await runtime.closeCell(taskId, { scrub: true });
  }

  const taskId = `bench-${RUN_ID}-warm`;
  const cell = await runtime.openCell(taskId);
  const warmOpens = [];
  for (let i = 0; i < OPENS; i += 1) warmOpens.push(await timed(() => runtime.openCell(taskId)));
  const container = docker.getContainer(cell.container_id);

  for (let i = 0; i < WARMUP; i += 1) {
    await runtimeExec(runtime, taskId);
    await rawExec(container);
  }

  const samples = { runtime: [], raw: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? ['runtime', 'raw'] : ['raw', 'runtime'];
    for (const variant of order) {
      for (let i = 0; i < EXECS; i += 1) {
        samples[variant].push(await timed(() => (variant === 'runtime' ? runtimeExec(runtime, taskId) : rawExec(container))));
      }
    }
  }

  const runtimeStats = summary(samples.runtime);
  const rawStats = summary(samples.raw);
  console.log('\n`echo hello` in a warm cell, sequential:');
  console.log(line('runtime', runtimeStats));
  console.log(line('raw', rawStats));
  console.log(`ratio runtime/raw: p50 ${(runtimeStats.p50 / rawStats.p50).toFixed(2)}x, p95 ${(runtimeStats.p95 / rawStats.p95).toFixed(2)}x, mean ${(runtimeStats.mean / rawStats.mean).toFixed(2)}x`);
  console.log('\nopenCell:');
  console.log(line('cold', summary(opens)));
  console.log(line('warm', summary(warmOpens)));
  console.log(`\n[bench] load average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  const leftovers = await docker.listContainers({ all: true, filters: { label: [`writ.bench=${RUN_ID}`] } });
  await Promise.all(leftovers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true })));
  await rm(cellsRoot, { recursive: true, force: true });
}
