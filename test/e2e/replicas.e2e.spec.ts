import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { EventEnvelope } from '@writ/contracts';
import { bytesToHex, hexToBytes, importEd25519PrivateJwk, merkleRoot } from '@writ/crypto';
import { DEFAULT_SERVICE_PRINCIPALS } from '@writ/runtime';
import { waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES, startStack, type Principal, type ServiceName, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * Replicas for real (issue 15): two processes of every service — the two executors as two
 * hosts, each with its own executor id, host id and cells root on the one Docker engine —
 * against a 3-node JetStream cluster on loopback (every stream R3), the stack's own
 * (scripts/nats-cluster/cluster.mjs; as root each node in its own network namespace).
 *
 * Agents submit a mix at a modest pace: commands that append a token unique to their action
 * to `replicas.txt` in their task's workspace (allowed), destructive ones a director grants or
 * denies, network writes the policy denies. Then, from outside: each instance did part of the
 * work; each allowed command ran exactly once, nothing denied ran; each attempt has exactly one
 * receipt that ends it (and each approval one of its own); the transparency log is one
 * sequence, 0..n-1, of exactly those receipts, with a signed head over all of them; every task
 * verifies; the projections rebuild equal to the live views. And the keys are as
 * docs/operations.md says: replicas share them — one sealing key per service principal, one
 * approval and one receipt keyring — so a rotation asked of one replica is taken up by the
 * other, and the log registers one new key, not one per replica.
 */

const ALLOWED = 30;
const DENIED = 4;
/** Destructive commands: the first granted by the director, the second denied. */
const GATED = 2;
/** Allowed commands after the rotation: grants and receipts under the new keys only. */
const AFTER_ROTATION = 6;
/** Between two submissions: a modest, steady pace rather than one burst. */
const PACE_MS = 250;
/** The instances' rotation checks (default 30 s): how soon a replica takes up another's rotation. */
const KEY_CHECK_SECONDS = 2;
const SETTLE_MS = 600_000;
const STEP_MS = 900_000;

/** Causes of the receipt that ends an attempt (services/receipt/README.md); `approval_resolved` receipts one approval. */
const ENDING_CAUSES = ['settled', 'policy_denied', 'approval_denied', 'refused'];
const SEALING_SERVICES = ['ingress', 'orchestrator', 'policy', 'executor'] as const;
/** The log line each instance writes per unit of work it took (at debug level: the stack runs every service at it). */
const WORK_LINES: Record<ServiceName, string> = {
  projection: 'events projected',
  ingress: 'ingress handled',
  orchestrator: 'task event handled',
  policy: 'policy evaluated',
  approval: 'grant command handled',
  executor: 'run-action handled',
  receipt: 'receipt command handled',
};

/** allowed by policy; denied by policy; gated and granted by the director; gated and denied by the director. */
type Kind = 'allowed' | 'denied' | 'granted' | 'withheld';

interface Planned {
  readonly kind: Kind;
  readonly token: string;
  readonly id: string;
  readonly phase: 1 | 2;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the action row as the API answers it
  row?: any;
}

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    prefix: 'e2erep',
    natsNodes: 3,
    instances: 2,
    // Fourteen processes and three nodes starting at once on a small machine.
    readyTimeoutMs: 300_000,
    // Replaced keys retire an hour after the rotation, past the end of the run: the keys checked below are exactly those of the rotation.
    // Each unit of work is logged at debug level (nothing per action at info: the hot path), which is how the test tells who did what.
    env: { LOG_LEVEL: 'debug' },
    serviceEnv: {
      approval: { WRIT_APPROVAL_KEY_CHECK_SECONDS: String(KEY_CHECK_SECONDS), WRIT_APPROVAL_KEY_RETIRE_SKEW_SECONDS: '3600' },
      receipt: { WRIT_RECEIPT_KEY_CHECK_SECONDS: String(KEY_CHECK_SECONDS), WRIT_RECEIPT_KEY_RETIRE_SECONDS: '3600' },
    },
  });
}, 600_000);

stopStackAfterAll(() => stack);

// ---- helpers ------------------------------------------------------------------------------------

const ofType = (type: string) => (event: EventEnvelope) => event.event_type === type;

/** The JSON lines of an instance's log (pino), the unparsable ones left out. */
function logLines(file: string): Array<Record<string, unknown>> {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

function jwsHeader(jws: string): { kid?: string; alg?: string } {
  return JSON.parse(Buffer.from(jws.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: string };
}

/** The request of one action of the mix; each opens a task of its own, so its cell lands on whichever host takes it. */
function requestOf(agent: Principal, kind: Kind, token: string) {
  const task = { title: `replicas ${kind}`, goal: 'two of everything', policy_profile: 'local_edit_allowed', files_owned: ['**'] };
  if (kind === 'denied') {
    return stack.actionRequest(agent, {
      task,
      step: { kind: 'publish_result', title: 'post' },
      action_class: 'network_write',
      target_resources: ['https://example.com/replicas'],
      params: { url: 'https://example.com/replicas', method: 'POST', body: token },
      expected_effects: ['posted'],
      reversibility_hint: 'irreversible',
    });
  }
  if (kind === 'granted' || kind === 'withheld') {
    return stack.actionRequest(agent, {
      task,
      step: { kind: 'edit', title: 'destructive' },
      target_resources: ['build', 'replicas.txt'],
      params: { argv: ['sh', '-c', `echo ${token} >> replicas.txt; rm -rf build`] },
      expected_effects: ['build/ is gone'],
      reversibility_hint: 'irreversible',
    });
  }
  return stack.actionRequest(agent, {
    task,
    step: { kind: 'edit', title: 'append a token' },
    target_resources: ['replicas.txt'],
    params: { argv: ['sh', '-c', `echo ${token} >> replicas.txt`] },
    expected_effects: ['replicas.txt holds the token'],
  });
}

/** Submits the mix, agents in turn, one every PACE_MS. */
async function submitAll(agents: Principal[], kinds: Kind[], phase: 1 | 2): Promise<Planned[]> {
  const planned: Planned[] = [];
  for (const [index, kind] of kinds.entries()) {
    const agent = agents[index % agents.length] as Principal;
    const token = `replicas-${randomUUID()}`;
    const request = requestOf(agent, kind, token);
    await stack.submit(agent, request);
    planned.push({ kind, token, id: request.action_request_id, phase });
    await delay(PACE_MS);
  }
  return planned;
}

/** Resolves each gated action once it waits for a director, then waits until every action is terminal. */
async function settle(planned: Planned[], director: Principal): Promise<void> {
  await Promise.all(
    planned.map(async (action) => {
      if (action.kind === 'granted' || action.kind === 'withheld') {
        const waiting = await stack.waitForAction(action.id, { statuses: ['awaiting_approval'], timeoutMs: SETTLE_MS });
        const answer = await stack.resolveApproval(director, waiting.task_id, waiting.approval_id, action.kind === 'granted' ? 'grant' : 'deny');
        expect(answer).toMatchObject({ status: 200, body: { status: action.kind === 'granted' ? 'granted' : 'denied' } });
      }
      // Terminal and receipted (a denial's receipt follows its status).
      action.row = await stack.waitForAction(action.id, { until: (row) => row.receipt_id !== null, timeoutMs: SETTLE_MS });
    }),
  );
}

const RESOLUTIONS = ['approval.granted', 'approval.denied', 'approval.expired', 'approval.cancelled', 'approval.invalidated'];

/**
 * The task's log once it holds every receipt it is due: the one that ends each attempt and one per
 * resolved approval (an action's row may show an approval's receipt before the attempt's own).
 */
async function receiptedLog(taskId: string): Promise<EventEnvelope[]> {
  return waitFor(
    async () => {
      const log = await stack.taskEvents(taskId);
      const receipts = log.filter(ofType('receipt.issued'));
      const attempts = new Set(log.filter((event) => event.event_type.startsWith('attempt.')).map((event) => event.attempt_id));
      const ended = new Set(receipts.filter((event) => ENDING_CAUSES.includes(String(event.payload['cause'] ?? 'settled'))).map((event) => event.attempt_id));
      const resolved = log.filter((event) => RESOLUTIONS.includes(event.event_type)).length;
      const approvalReceipts = receipts.filter((event) => event.payload['cause'] === 'approval_resolved').length;
      return [...attempts].every((attempt) => ended.has(attempt)) && approvalReceipts >= resolved ? log : undefined;
    },
    { what: `every receipt of ${taskId}`, timeoutMs: 120_000, intervalMs: 250 },
  );
}

/** How many times each line of `file` in the task's workspace appears; {} when there is no such file. */
async function workspaceLines(taskId: string, file: string): Promise<Record<string, number>> {
  const at = stack.workspaceFile(taskId, file);
  if (!existsSync(at)) return {};
  const counts: Record<string, number> = {};
  for (const line of (await readFile(at, 'utf8')).split('\n').filter((l) => l !== '')) counts[line] = (counts[line] ?? 0) + 1;
  return counts;
}

/** Runs `work` over `items`, `limit` at a time. */
async function inBatches<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

// ---- the scenario ------------------------------------------------------------------------------

describe('two instances of every service on a 3-node JetStream cluster', () => {
  const actions: Planned[] = [];
  const events = new Map<string, EventEnvelope[]>();
  let director: Principal;
  let directorKeyDir: string;
  let directorKeyFile: string;
  const rotated: { approval?: { kid: string; previous_kid: string }; receipt?: { kid: string; previous_kid: string } } = {};

  afterAll(async () => {
    if (directorKeyDir !== undefined) await rm(directorKeyDir, { recursive: true, force: true });
  });

  /** Every task's log, read once everything settled. */
  const taskLog = (action: Planned): EventEnvelope[] => events.get(String(action.row.task_id)) ?? [];

  it(
    'given the stack, when agents submit allowed, gated and denied actions at a modest pace, then each ends as policy and the director say',
    async () => {
      // given two instances of each of the seven services, on the cluster
      for (const name of SERVICES) expect(stack.instances[name]).toHaveLength(2);
      expect(stack.natsUrl.split(',')).toHaveLength(3);
      // and the log and the bus streams replicated on all three nodes
      for (const stream of Object.values(stack.streams)) {
        const info = await stack.jsm.streams.info(stream);
        expect({ stream, replicas: info.config.num_replicas, peers: 1 + (info.cluster?.replicas?.length ?? 0) }).toEqual({ stream, replicas: 3, peers: 3 });
      }
      expect(stack.cellsRoots).toHaveLength(2);
      // and three agents and a director whose key file the CLI can sign with (a rotation below)
      const agents = [await stack.registerPrincipal(), await stack.registerPrincipal(), await stack.registerPrincipal()];
      directorKeyDir = await mkdtemp(path.join(tmpdir(), 'writ-e2e-replicas-director-'));
      directorKeyFile = path.join(directorKeyDir, 'director.jwk.json');
      const directorId = `director-${randomUUID().slice(0, 8)}`;
      const publicJwk = await stack.cli(['principal', 'keygen', '--kid', `${directorId}-k1`, '--out', directorKeyFile]);
      await writeFile(path.join(directorKeyDir, 'director.pub.json'), publicJwk);
      await stack.cli(['principal', 'add', '--id', directorId, '--type', 'user', '--role', 'director', '--jwk', path.join(directorKeyDir, 'director.pub.json'), '--no-creds']);
      const key = await importEd25519PrivateJwk(JSON.parse(await readFile(directorKeyFile, 'utf8')));
      director = { id: directorId, kid: key.kid, key, publicJwk: key.publicJwk };

      // when the mix is submitted (denials and approvals spread through the allowed ones)
      const kinds: Kind[] = Array.from({ length: ALLOWED }, () => 'allowed' as Kind);
      for (let i = 0; i < DENIED; i += 1) kinds.splice(3 + i * 7, 0, 'denied');
      kinds.splice(5, 0, 'granted');
      kinds.splice(20, 0, 'withheld');
      expect(kinds.filter((kind) => kind === 'granted' || kind === 'withheld')).toHaveLength(GATED);
      actions.push(...(await submitAll(agents, kinds, 1)));
      await settle(actions, director);

      // then each ends as it should
      for (const action of actions) {
        const expected = { allowed: 'succeeded', granted: 'succeeded', denied: 'denied', withheld: 'denied' }[action.kind];
        expect({ id: action.id, kind: action.kind, status: action.row.status }).toEqual({ id: action.id, kind: action.kind, status: expected });
      }

      // and, once every receipt of them is issued, a director rotates the approval and the receipt keys (a request each, answered by one replica)
      for (const action of actions) await receiptedLog(String(action.row.task_id));
      for (const service of ['approval', 'receipt'] as const) {
        const reply = JSON.parse(await stack.cli(['keys', 'rotate', '--service', service, '--key', directorKeyFile, '--principal', director.id, '--json'])) as { status: string; kid: string; previous_kid: string };
        expect(reply.status).toBe('rotated');
        rotated[service] = { kid: reply.kid, previous_kid: reply.previous_kid };
      }
      // each replica signs with the new key from its next check on: the one asked rotated, the other switched
      for (const service of ['approval', 'receipt'] as const) {
        for (const instance of stack.instances[service]) {
          await waitFor(
            async () =>
              logLines(instance.logFile).some(
                (line) => (line['msg'] === 'signing key rotated' || String(line['msg']).startsWith('signing key switched')) && line['kid'] === rotated[service]?.kid,
              ) || undefined,
            { what: `${instance.id} to take up ${rotated[service]?.kid}`, timeoutMs: 120_000, intervalMs: 250 },
          );
        }
      }
      const after = await submitAll(agents, Array.from({ length: AFTER_ROTATION }, () => 'allowed' as Kind), 2);
      await settle(after, director);
      actions.push(...after);
      for (const action of after) expect(action.row.status).toBe('succeeded');

      for (const taskId of new Set(actions.map((action) => String(action.row.task_id)))) events.set(taskId, await receiptedLog(taskId));
    },
    STEP_MS,
  );

  it('then every instance of every service took part of the work, and the two executors ran commands on their own hosts', () => {
    const counts: Record<string, number> = {};
    for (const name of SERVICES) {
      for (const instance of stack.instances[name]) {
        counts[instance.id] = logLines(instance.logFile).filter((line) => line['msg'] === WORK_LINES[name]).length;
      }
    }
    process.stderr.write(`[replicas] work per instance: ${JSON.stringify(counts)}\n`);
    for (const [id, count] of Object.entries(counts)) expect({ id, worked: count > 0 }).toEqual({ id, worked: true });

    // the executions name the executor that ran them, and each task's cell lives under that executor's host
    const ranBy: Record<string, number> = {};
    for (const action of actions.filter((a) => a.row.status === 'succeeded')) {
      const completed = taskLog(action).filter(ofType('execution.completed'));
      expect(completed).toHaveLength(1);
      const executorId = String(completed[0]?.payload['executor_id']);
      ranBy[executorId] = (ranBy[executorId] ?? 0) + 1;
      const host = stack.instances.executor.findIndex((_, index) => executorId.endsWith(`-${index + 1}`));
      expect(existsSync(path.join(stack.cellsRoots[host] ?? '', String(action.row.task_id), 'workspace'))).toBe(true);
    }
    process.stderr.write(`[replicas] commands per executor: ${JSON.stringify(ranBy)}\n`);
    expect(Object.keys(ranBy)).toHaveLength(2);
  });

  it('then every allowed or granted command ran exactly once, and nothing denied ran', async () => {
    for (const action of actions) {
      const lines = await workspaceLines(String(action.row.task_id), 'replicas.txt');
      const ran = action.row.status === 'succeeded';
      // one line, the action's own token, once
      expect({ id: action.id, lines }).toEqual({ id: action.id, lines: ran ? { [action.token]: 1 } : {} });
      const log = taskLog(action);
      expect(log.filter(ofType('grant.use_claimed'))).toHaveLength(ran ? 1 : 0);
      expect(log.filter(ofType('execution.completed'))).toHaveLength(ran ? 1 : 0);
    }
  });

  it('then each attempt has exactly one receipt that ends it, each resolved approval one of its own, and no receipt is issued twice', () => {
    const seen = new Set<string>();
    for (const action of actions) {
      const log = taskLog(action);
      const receipts = log.filter(ofType('receipt.issued'));
      for (const event of receipts) {
        const receiptId = String((event.payload['receipt'] as Record<string, unknown>)['receipt_id']);
        expect(seen.has(receiptId)).toBe(false);
        seen.add(receiptId);
      }
      const attempts = new Set(log.filter((event) => event.event_type.startsWith('attempt.')).map((event) => String(event.attempt_id)));
      expect(attempts.size).toBeGreaterThan(0);
      for (const attemptId of attempts) {
        const ending = receipts.filter((event) => event.attempt_id === attemptId && ENDING_CAUSES.includes(String(event.payload['cause'] ?? 'settled')));
        expect({ attemptId, ending: ending.length }).toEqual({ attemptId, ending: 1 });
      }
      expect(receipts.map((event) => (event.payload['receipt'] as Record<string, unknown>)['receipt_id'])).toContain(action.row.receipt_id);
      const resolutions = log.filter((event) => RESOLUTIONS.includes(event.event_type));
      expect(resolutions.map((event) => event.event_type)).toEqual({ granted: ['approval.granted'], withheld: ['approval.denied'], allowed: [], denied: [] }[action.kind]);
      expect(receipts.filter((event) => event.payload['cause'] === 'approval_resolved')).toHaveLength(resolutions.length);
    }
  });

  it(
    'then the transparency log is one sequence 0..n-1 of exactly those receipts, a signed head covers them all, and every task verifies',
    async () => {
      const receipts = new Map<string, string>();
      for (const log of events.values()) {
        for (const event of log.filter(ofType('receipt.issued'))) {
          const receipt = event.payload['receipt'] as Record<string, unknown>;
          receipts.set(String(receipt['receipt_id']), String(receipt['receipt_hash']));
        }
      }
      const tlog = await waitFor(
        async () => {
          const log = await stack.entityEvents('transparency_log', 'writ-receipts');
          return log.filter(ofType('tlog.entry_appended')).length >= receipts.size ? log : undefined;
        },
        { what: `${receipts.size} leaves in the transparency log`, timeoutMs: 120_000, intervalMs: 500 },
      );
      const entries = tlog.filter(ofType('tlog.entry_appended')).map((event) => event.payload);
      expect(entries.map((entry) => entry['leaf_index'])).toEqual(entries.map((_, index) => index));
      expect(entries.map((entry) => String(entry['receipt_id'])).sort()).toEqual([...receipts.keys()].sort());
      expect(tlog.filter(ofType('tlog.receipt_refused'))).toEqual([]);

      // a signed head over every leaf, whose root is the Merkle root of the receipts' hashes in leaf order
      const root = bytesToHex(merkleRoot(entries.map((entry) => hexToBytes(String(entry['receipt_hash'])))));
      const head = await waitFor(
        async () =>
          (await stack.entityEvents('transparency_log', 'writ-receipts')).filter(ofType('tlog.tree_head_signed')).find((event) => event.payload['tree_size'] === entries.length),
        { what: `a signed tree head of size ${entries.length}`, timeoutMs: 120_000, intervalMs: 500 },
      );
      expect(String(head.payload['root_hash']).replace(/^sha256:/, '')).toBe(root);

      // writ verify --task: chain, seals, receipts, signatures, inclusion in the log
      const failures: string[] = [];
      await inBatches([...events.keys()], 3, async (taskId) => {
        await stack.cli(['verify', '--task', taskId, '--wait', '60']).catch((error: Error) => failures.push(`${taskId}: ${error.message.slice(0, 400)}`));
      });
      expect(failures).toEqual([]);
    },
    STEP_MS,
  );

  it(
    'then the projections rebuilt from the log equal the live views both instances folded',
    async () => {
      // exit 1 (PROJECTION_REBUILD_MISMATCH) when a view differs
      const job = JSON.parse(await stack.cli(['projections', 'rebuild', '--json'])) as { state: string; comparisons: Array<{ view: string; match: boolean }> };
      expect(job.state).toBe('swapped');
      expect(job.comparisons.length).toBeGreaterThan(0);
      expect(job.comparisons.filter((comparison) => !comparison.match)).toEqual([]);
    },
    STEP_MS,
  );

  it('then the replicas share their keys as docs/operations.md says: one sealing key per principal, one keyring per signing service, one rotation for both', async () => {
    const all = [...events.values()].flat();
    // one sealing key file per sealing service in the shared directory, and only that key in the log and on the events
    for (const service of SEALING_SERVICES) {
      const principalId = DEFAULT_SERVICE_PRINCIPALS[service];
      const file = path.join(stack.keysDir, `${principalId}.seal.jwk.json`);
      const kid = String((JSON.parse(await readFile(file, 'utf8')) as { kid: string }).kid);
      const registrations = await stack.entityEvents('principal', principalId);
      expect(registrations.map((event) => event.event_type)).toEqual(['principal.registered']);
      expect((registrations[0]?.payload['keys'] as Array<{ kid: string }>).map((k) => k.kid)).toEqual([kid]);
      const sealKids = new Set(all.filter((event) => event.seal?.principal_id === principalId).map((event) => event.seal?.kid));
      expect({ principalId, sealKids: [...sealKids] }).toEqual({ principalId, sealKids: [kid] });
    }
    expect(readdirSync(stack.keysDir).filter((name) => name.endsWith('.seal.jwk.json')).sort()).toEqual(SEALING_SERVICES.map((s) => `${DEFAULT_SERVICE_PRINCIPALS[s]}.seal.jwk.json`).sort());

    // approval and receipt: one keyring each, one key registered at start and one added by the one rotation
    for (const service of ['approval', 'receipt'] as const) {
      const principalId = DEFAULT_SERVICE_PRINCIPALS[service];
      const rotation = rotated[service];
      expect(rotation).toBeDefined();
      const keyring = JSON.parse(await readFile(path.join(stack.keysDir, service, 'keyring.json'), 'utf8')) as { active: string; retiring: Array<{ kid: string }> };
      expect(keyring.active).toBe(rotation?.kid);
      expect(keyring.retiring.map((entry) => entry.kid)).toEqual([rotation?.previous_kid]);
      expect(readdirSync(path.join(stack.keysDir, service)).filter((name) => name.endsWith('.jwk.json')).sort()).toEqual([`${rotation?.kid}.jwk.json`, `${rotation?.previous_kid}.jwk.json`].sort());
      const registrations = await stack.entityEvents('principal', principalId);
      expect(registrations.map((event) => event.event_type)).toEqual(['principal.registered', 'principal.key_added']);
      expect((registrations[0]?.payload['keys'] as Array<{ kid: string }>).map((k) => k.kid)).toEqual([rotation?.previous_kid]);
      expect(registrations[1]?.payload).toMatchObject({ key: { kid: rotation?.kid }, added_by: director.id, replaces: { kid: rotation?.previous_kid } });
    }

    // grants and receipts before the rotation carry the first key, after it (both replicas switched) the new one
    for (const action of actions.filter((a) => a.row.status === 'succeeded')) {
      const log = taskLog(action);
      const grantKids = log.filter(ofType('grant.issued')).map((event) => jwsHeader(String(event.payload['jws'])).kid);
      const receiptKids = log.filter(ofType('receipt.issued')).map((event) => (event.payload['receipt'] as Record<string, unknown>)['signer_ref']);
      const approvalKid = action.phase === 1 ? rotated.approval?.previous_kid : rotated.approval?.kid;
      const receiptKid = action.phase === 1 ? rotated.receipt?.previous_kid : rotated.receipt?.kid;
      expect({ id: action.id, phase: action.phase, grantKids, receiptKids }).toEqual({
        id: action.id,
        phase: action.phase,
        grantKids: grantKids.map(() => approvalKid),
        receiptKids: receiptKids.map(() => receiptKid),
      });
    }
  });
});
