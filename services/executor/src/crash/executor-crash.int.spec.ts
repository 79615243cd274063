import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { ExecutionCompleted, type EventEnvelope, type RunAction } from '@writ/contracts';
import { generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { registerServicePrincipal } from '@writ/runtime';
import { connectTestNats, deleteStreams, uniqueName, waitFor } from '@writ/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useIdFor } from '../application/event-drafts.js';
import { mintGrant, newIds, request, runAction, testConfig, testStreams, type Ids } from '../../test/executor-rig.js';

/**
 * Crash safety with the real process (Hermit 19): the executor runs as a child process
 * (`node dist/main.js`, built by nx), is killed with SIGKILL in the middle of 100 actions,
 * and started again. Every action appends a line to a marker file named after it, so a
 * side effect run twice shows as two lines. Test-unique subject root, streams, bucket and
 * cells root; the cells (named after test-unique task ids) are removed afterwards.
 */

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const MiB = 1024 ** 2;
const TASKS = 10;
const PER_TASK = 10;
const docker = new Docker();

let nc: NatsConnection;
let store: EventStore;
let client: BusClient;
let cellsRoot: string;
let approvalKey: Ed25519SigningKey;
const env: Record<string, string> = {};
let config: ReturnType<typeof testConfig>;
const children: ChildProcess[] = [];
const taskIds: string[] = [];

function startExecutor(id: string): ChildProcess {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, ...env, WRIT_EXECUTOR_ID: id, WRIT_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function events(taskId: string): Promise<EventEnvelope[]> {
  return (await store.read(taskId)).map((stored) => stored.event);
}

beforeAll(async () => {
  nc = await connectTestNats('executor-crash');
  cellsRoot = await mkdtemp(path.join(tmpdir(), 'writ-crash-'));
  Object.assign(env, {
    WRIT_SUBJECT_ROOT: uniqueName('t'),
    WRIT_EVENTS_STREAM: uniqueName('CRASH_EV'),
    WRIT_INGRESS_STREAM: uniqueName('CRASH_IN'),
    WRIT_COMMANDS_STREAM: uniqueName('CRASH_CMD'),
    WRIT_DLQ_STREAM: uniqueName('CRASH_DLQ'),
    WRIT_EVENTS_MAX_BYTES: String(64 * MiB),
    WRIT_BUS_STREAMS_MAX_BYTES: String(64 * MiB),
    WRIT_ARTIFACTS_BUCKET: uniqueName('CRASH_ART'),
    WRIT_ARTIFACTS_MAX_BYTES: String(64 * MiB),
    WRIT_HTTP_PORT: '0',
    WRIT_CELLS_ROOT: cellsRoot,
    WRIT_BUS_PULL_EXPIRES_MS: '1000',
    WRIT_ACTION_TIMEOUT_MS: '8000',
    WRIT_EXECUTOR_CONCURRENCY: '8',
    WRIT_CLAIM_GRACE_MS: '1000',
    WRIT_CLAIM_POLL_MS: '200',
  });
  config = testConfig(cellsRoot, env);
  store = await EventStore.open(nc, { stream: config.streams.events, subjectPrefix: config.subjects.eventsPrefix, maxBytes: 64 * MiB });
  client = new BusClient(nc);
  approvalKey = await generateEd25519Key({ kid: 'approval-crash' });
  await registerServicePrincipal(store, { principalId: config.grant.issuer, displayName: 'approval (crash test)', key: approvalKey });
}, 120_000);

afterAll(async () => {
  await Promise.all(children.map((child) => killHard(child)));
  for (const taskId of taskIds) await docker.getContainer(`writ-cell-${taskId}`).remove({ force: true, v: true }).catch(() => undefined);
  // The killed process cannot remove its warm pool; its pooled cells carry this test's cells root.
  const pooled = await docker.listContainers({ all: true, filters: { label: [`writ.cell.pool.root=${cellsRoot}`] } });
  for (const cell of pooled) await docker.getContainer(cell.Id).remove({ force: true, v: true }).catch(() => undefined);
  if (nc) {
    await client?.close();
    await deleteStreams(nc, ...testStreams(config));
    await nc.close();
  }
  if (cellsRoot) await rm(cellsRoot, { recursive: true, force: true });
}, 120_000);

interface Sent {
  readonly ids: Ids;
  readonly command: RunAction;
  readonly marker: string;
}

async function completions(sent: readonly Sent[]): Promise<Map<string, ExecutionCompleted[]>> {
  const byUse = new Map<string, ExecutionCompleted[]>();
  for (const taskId of new Set(sent.map((s) => s.ids.task_id))) {
    for (const event of await events(taskId)) {
      if (event.event_type !== 'execution.completed') continue;
      const payload = ExecutionCompleted.parse(event.payload);
      byUse.set(payload.grant_id, [...(byUse.get(payload.grant_id) ?? []), payload]);
    }
  }
  return byUse;
}

async function markerLines(s: Sent): Promise<number> {
  const text = await readFile(path.join(cellsRoot, s.ids.task_id, 'workspace', 'markers', s.marker), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '').length;
}

describe('an executor killed with SIGKILL in the middle of 100 actions', () => {
  it('given 100 granted actions running, when the process is killed -9 and started again, then every use ends exactly once and no side effect ran twice', async () => {
    // given: one executor process working through 100 actions in 10 task cells
    let executor = startExecutor('executor-crash-a');
    const sent: Sent[] = [];
    for (let t = 0; t < TASKS; t += 1) {
      const taskId = uniqueName('task-crash');
      taskIds.push(taskId);
      for (let n = 0; n < PER_TASK; n += 1) {
        const ids = newIds('crash', taskId);
        const marker = `m${t}-${n}`;
        const actionRequest = request(ids, {
          target_resources: ['markers'],
          params: { argv: ['sh', '-c', `sleep 0.$(( RANDOM % 4 + 1 )); mkdir -p markers; echo x >> markers/${marker}`] },
        });
        const grant = await mintGrant(config, { ids, signer: approvalKey });
        const command = runAction(ids, grant, actionRequest);
        sent.push({ ids, command, marker });
      }
    }
    const jsm = await jetstreamManager(nc);
    await waitFor(
      async () => {
        const consumers = await jsm.consumers.info(config.streams.commands, config.durable).catch(() => undefined);
        return consumers === undefined ? undefined : true;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the executor bound its durable' },
    );
    for (const s of sent) await client.publish(config.subjects.run, s.command, { msgId: useIdFor(s.command) });

    // when: about half are claimed, the process is killed without a chance to clean up
    await waitFor(
      async () => {
        let claimed = 0;
        for (const taskId of taskIds) claimed += (await events(taskId)).filter((e) => e.event_type === 'grant.use_claimed').length;
        return claimed >= 50 ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 100, what: 'half of the uses claimed' },
    );
    await killHard(executor);
    executor = startExecutor('executor-crash-a');

    // then: every use ends, exactly once
    await waitFor(async () => ((await completions(sent)).size === sent.length ? true : undefined), { timeoutMs: 300_000, intervalMs: 500, what: 'every use completed' });
    const byGrant = await completions(sent);
    const outcomes = { completed: 0, errored: 0, unknown: 0 };
    for (const s of sent) {
      const ended = byGrant.get(s.command.grant_id) ?? [];
      expect(ended, `execution.completed of ${s.marker}`).toHaveLength(1);
      const [completion] = ended as [ExecutionCompleted];
      expect(['completed', 'errored', 'unknown']).toContain(completion.outcome);
      outcomes[completion.outcome] += 1;
      const lines = await markerLines(s);
      // No side effect ran twice; an action recorded as having run to exit 0 ran exactly once.
      expect(lines, `marker of ${s.marker}`).toBeLessThanOrEqual(1);
      if (completion.outcome === 'completed' && completion.exit_code === 0) expect(lines, `marker of ${s.marker}`).toBe(1);
      // Fenced before it started: it never ran.
      if (completion.error?.code === 'CELL_USE_FENCED') expect(lines).toBe(0);
    }
    expect(outcomes.completed).toBeGreaterThanOrEqual(50);
    await killHard(executor);
  }, 600_000);
});
