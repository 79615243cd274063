import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusClient } from '@writ/bus';
import { ExecutionCompleted, type EventEnvelope, type RunAction } from '@writ/contracts';
import { generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore } from '@writ/eventstore';
import { registerServicePrincipal } from '@writ/runtime';
import { createLogger } from '@writ/telemetry';
import { connectTestNats, deleteStreams, waitFor } from '@writ/testing';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useIdFor } from '../application/event-drafts.js';
import { createExecutorApp, type ExecutorApp } from '../bootstrap.js';
import type { ExecutorConfig } from '../config.js';
import { mintGrant, newIds, request, runAction, testConfig, testStreams, type Grant, type Ids } from '../../test/executor-rig.js';

/**
 * Two executor instances on the same root, streams, durable and cells root (in-process, as
 * two replicas of a deploy), receiving the same work: every RunAction is published twice
 * (a duplicate re-publish outside NATS dedupe: another Nats-Msg-Id), and each grant gets more
 * distinct uses than its max_uses. The claim through the log is the only guard: each grant is
 * used at most max_uses times, each claimed use completes exactly once, the uses beyond are
 * refused GRANT_EXHAUSTED, and no side effect runs twice (marker files, one line per run).
 */

const RUN = randomBytes(5).toString('hex');
const BUILD_SCRIPT = fileURLToPath(new URL('../../../../scripts/build-cell-image.sh', import.meta.url));
const MiB = 1024 ** 2;
const quiet = createLogger('executor-two-test', { level: 'silent' });
const docker = new Docker();

let nc: NatsConnection;
let jsm: JetStreamManager;
let store: EventStore;
let client: BusClient;
let cellsRoot: string;
let config: ExecutorConfig;
let approvalKey: Ed25519SigningKey;
const executors: ExecutorApp[] = [];

beforeAll(async () => {
  try {
    await docker.getImage('writ/cell:latest').inspect();
  } catch {
    execFileSync(BUILD_SCRIPT, { stdio: 'inherit' });
  }
  nc = await connectTestNats('executor-two');
  jsm = await jetstreamManager(nc);
  cellsRoot = await mkdtemp(path.join(tmpdir(), 'writ-executor-two-'));
  config = testConfig(cellsRoot, { WRIT_CELL_POOL_SIZE: '0', WRIT_EXECUTOR_CONCURRENCY: '4' });
  for (const id of ['a', 'b']) {
    executors.push(await createExecutorApp({ ...config, executorId: `executor-two-${id}` }, { cells: { labels: { 'writ.test': RUN } }, logger: quiet, busLogger: quiet, nestLogLevels: false }));
  }
  store = await EventStore.open(nc, { stream: config.streams.events, subjectPrefix: config.subjects.eventsPrefix, maxBytes: 64 * MiB });
  client = new BusClient(nc);
  approvalKey = await generateEd25519Key({ kid: 'approval-k1' });
  await registerServicePrincipal(store, { principalId: config.grant.issuer, displayName: 'approval (test)', key: approvalKey });
}, 300_000);

afterAll(async () => {
  await Promise.all(executors.map((executor) => executor.close()));
  const leftovers = await docker.listContainers({ all: true, filters: { label: [`writ.test=${RUN}`] } });
  await Promise.all(leftovers.map((container) => docker.getContainer(container.Id).remove({ force: true, v: true })));
  if (nc) {
    await client?.close();
    await deleteStreams(nc, ...testStreams(config));
    await nc.close();
  }
  if (cellsRoot) await rm(cellsRoot, { recursive: true, force: true });
}, 60_000);

const events = async (taskId: string): Promise<EventEnvelope[]> => (await store.read(taskId)).map((stored) => stored.event);
const marker = (taskId: string, n: number) => path.join(cellsRoot, taskId, 'workspace', 'markers', String(n));

interface Use {
  readonly n: number;
  readonly command: RunAction;
  readonly useId: string;
}

/** `uses` distinct uses of one grant (max_uses `maxUses`): each appends a line to its own marker. */
async function grantWithUses(maxUses: number, uses: number): Promise<{ ids: Ids; grant: Grant; maxUses: number; uses: Use[] }> {
  const ids = newIds('two');
  const grant = await mintGrant(config, { ids, signer: approvalKey, maxUses });
  const list = Array.from({ length: uses }, (_, n) => {
    const command = runAction(ids, grant, request(ids, { params: { argv: ['sh', '-c', `mkdir -p markers && echo x >> markers/${n}`] }, target_resources: [`markers/${n}`] }));
    return { n, command, useId: useIdFor(command) };
  });
  return { ids, grant, maxUses, uses: list };
}

describe('two executors receiving the same work', () => {
  it('given grants with more uses than max_uses, each RunAction published twice to two competing instances, then each grant is used at most max_uses times, each claimed use completes once and runs once, the rest are refused GRANT_EXHAUSTED', async () => {
    const grants = [await grantWithUses(1, 3), await grantWithUses(2, 4), await grantWithUses(3, 5)];
    const all = grants.flatMap((g) => g.uses);

    // when: every command twice, interleaved across grants, under distinct message ids (no bus dedupe)
    let last = 0;
    for (const round of [0, 1]) {
      for (const use of all) last = (await client.publish(config.subjects.run, use.command, { msgId: `${use.useId}-${round}` })).seq;
    }

    // then: every use ends (claimed and completed, or refused), and the durable has settled every copy
    await waitFor(
      async () => {
        for (const g of grants) {
          const log = await events(g.ids.task_id);
          const settled = new Set(log.filter((e) => e.event_type === 'execution.completed' || e.event_type === 'grant.refused').map((e) => e.event_id.replace(/-(completed|refused)$/, '')));
          if (!g.uses.every((use) => settled.has(use.useId))) return undefined;
        }
        return true;
      },
      { what: 'every use completed or refused', timeoutMs: 240_000, intervalMs: 200 },
    );
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(config.streams.commands, config.durable);
        return info.ack_floor.stream_seq >= last && info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
      },
      { what: 'the shared durable to settle every copy', timeoutMs: 120_000, intervalMs: 100 },
    );

    for (const g of grants) {
      const log = await events(g.ids.task_id);
      const claims = log.filter((e) => e.event_type === 'grant.use_claimed' && e.entity_id === g.grant.grant_id);
      const completions = log.filter((e) => e.event_type === 'execution.completed');
      const refusals = log.filter((e) => e.event_type === 'grant.refused');
      // at most max_uses (and, with more distinct uses than that, exactly), numbered 1..max_uses once each
      expect(claims).toHaveLength(g.maxUses);
      expect(claims.map((e) => (e.payload as { use_no: number }).use_no).sort()).toEqual(Array.from({ length: g.maxUses }, (_, i) => i + 1));
      // each claimed use completed exactly once, having run
      const claimedUses = claims.map((e) => e.event_id.replace(/-claimed$/, ''));
      expect(new Set(claimedUses).size).toBe(g.maxUses);
      expect(completions).toHaveLength(g.maxUses);
      for (const useId of claimedUses) {
        const mine = completions.filter((e) => e.event_id === `${useId}-completed`);
        expect(mine).toHaveLength(1);
        const done = ExecutionCompleted.parse(mine[0]?.payload);
        expect(done, JSON.stringify(done.error)).toMatchObject({ outcome: 'completed', exit_code: 0 });
      }
      // the other uses were refused, once each, and never ran
      expect(refusals).toHaveLength(g.uses.length - g.maxUses);
      for (const refusal of refusals) expect(refusal.payload).toMatchObject({ code: 'GRANT_EXHAUSTED' });
      for (const use of g.uses) {
        const ran = claimedUses.includes(use.useId);
        if (ran) expect(await readFile(marker(g.ids.task_id, use.n), 'utf8')).toBe('x\n');
        else expect(existsSync(marker(g.ids.task_id, use.n))).toBe(false);
      }
    }
  }, 400_000);
});
