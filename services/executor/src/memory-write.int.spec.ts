import { ExecutionCompleted, WritError, type EventDraft, type EventEnvelope, type RunAction } from '@writ/contracts';
import { KeySet, generateEd25519Key, signClaims, type Ed25519SigningKey } from '@writ/crypto';
import { EventStore, eventSealer } from '@writ/eventstore';
import { DEFAULT_SERVICE_PRINCIPALS, registerServicePrincipal } from '@writ/runtime';
import { connectTestNats, deleteStreams, uniqueName } from '@writ/testing';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useIdFor } from './application/event-drafts.js';
import type { ArtifactStore, CellPort, MemoryLog, TaskLog } from './application/ports.js';
import { HANDLER_SETTINGS } from '../test/grants.js';
import { RunActionHandler } from './application/run-action.handler.js';
import { memoryEventIdFor } from './application/run-memory-write.js';
import { EventStoreMemoryLog, EventStoreTaskLog } from './outbound/event-log.js';

/**
 * A granted memory_write performed by the executor's handler (issue 17)
 * against the real NATS event store, read with authorship enforced as in a
 * deployment: the memory event lands on the record's own stream
 * (`<events>.memory.<id>`), done once per use whatever is replayed or killed
 * half way, and a memory event some other service wrote there is never folded.
 */

const MiB = 1024 ** 2;
const ISSUER = HANDLER_SETTINGS.grantIssuer;
const SETTINGS = HANDLER_SETTINGS;

/** Nothing of a cell or the artifact store may be touched by a memory_write. */
const untouchable = new Proxy({} as CellPort & ArtifactStore, {
  get: (_target, name) => () => Promise.reject(new Error(`${String(name)} must not be called: a memory_write runs in no cell`)),
});

let nc: NatsConnection;
let stream: string;
let prefix: string;
let grantKey: Ed25519SigningKey;
/** Stores sealing as each Writ service (their keys registered on their own subjects), reading with authorship enforced. */
const stores = new Map<string, EventStore>();

async function storeAs(principalId: string, checked = true): Promise<EventStore> {
  const authorship = checked ? { servicePrincipals: DEFAULT_SERVICE_PRINCIPALS } : undefined;
  const store = await EventStore.open(nc, { stream, subjectPrefix: prefix, maxBytes: 64 * MiB }, authorship === undefined ? {} : { authorship });
  const key = await generateEd25519Key({ kid: `${principalId}-${uniqueName('k')}` });
  store.sealWith(eventSealer(principalId, key));
  await registerServicePrincipal(store, { principalId, displayName: principalId, key });
  return store;
}

beforeAll(async () => {
  nc = await connectTestNats('executor-memory-write');
  stream = uniqueName('MEM_EV');
  prefix = `${uniqueName('m')}.evt`;
  grantKey = await generateEd25519Key({ kid: 'approval-memory-k1' });
  for (const service of ['executor', 'orchestrator', 'policy'] as const) stores.set(service, await storeAs(DEFAULT_SERVICE_PRINCIPALS[service]));
}, 60_000);

afterAll(async () => {
  await deleteStreams(nc, stream);
  await nc?.close();
});

const executor = () => stores.get('executor') as EventStore;

function handler(overrides: { log?: TaskLog; memory?: MemoryLog } = {}): RunActionHandler {
  return new RunActionHandler(
    {
      log: overrides.log ?? new EventStoreTaskLog(executor()),
      keys: { verificationKeys: async () => KeySet.of([grantKey]), unauthorized: async () => undefined },
      cells: untouchable,
      artifacts: untouchable,
      clock: () => new Date(),
      sleep: async () => undefined,
      memory: { log: overrides.memory ?? new EventStoreMemoryLog(executor()), proposers: { principalType: async () => 'agent' } },
    },
    SETTINGS,
  );
}

interface Task {
  readonly task_id: string;
  readonly step_id: string;
  readonly attempt_id: string;
}

/** A task whose log holds an observed belief (the orchestrator's) and the attempt's policy allow (the policy service's), as their services append them. */
async function taskWithBelief(): Promise<Task> {
  const task = { task_id: uniqueName('task-mem'), step_id: uniqueName('step'), attempt_id: uniqueName('att') };
  const at = new Date().toISOString();
  const draft = (type: string, entity: 'task' | 'attempt', payload: Record<string, unknown>): EventDraft => ({
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: type,
    entity_type: entity,
    entity_id: entity === 'task' ? task.task_id : task.attempt_id,
    ...(entity === 'attempt' ? { step_id: task.step_id, attempt_id: task.attempt_id } : {}),
    occurred_at: at,
    actor_type: 'service',
    actor_id: 'test',
    payload,
    causation_id: null,
    correlation_id: task.task_id,
  });
  const belief = { belief_id: 'bel-port', task_id: task.task_id, claim: 'the API listens on 8080', scope: 'repo:writ', evidence_refs: [{ kind: 'receipt', id: 'rcpt-1' }], confidence: 0.9, trust_tier: 'observed', status: 'active', version: 1, created_at: at, asserted_by: 'agent-mem' };
  const orchestrator = stores.get('orchestrator') as EventStore;
  await orchestrator.append(task.task_id, [draft('belief.asserted', 'task', { belief, asserter_type: 'agent', at })], (await orchestrator.head(task.task_id)).taskSeq);
  const policy = stores.get('policy') as EventStore;
  await policy.append(task.task_id, [draft('policy.evaluated', 'attempt', { policy_result: { policy_result_id: `pr-${task.attempt_id}`, outcome: 'allow' } })], (await policy.head(task.task_id)).taskSeq);
  return task;
}

async function grantFor(task: Task): Promise<{ grant_id: string; jws: string }> {
  const grantId = uniqueName('grant');
  const issuedAt = new Date();
  const claims = { ...task, action_class: 'memory_write', resource_scope: { paths: [], hosts: [] }, max_uses: 1, issued_by_principal_id: 'writ-policy', policy_result_ref: `policy_result:pr-${task.attempt_id}` };
  const jws = await signClaims(claims, grantKey, { issuer: ISSUER, audience: 'writ-executor', subject: 'writ-executor', jwtId: grantId, issuedAt, expiresAt: new Date(issuedAt.getTime() + 300_000), typ: 'writ-grant+jwt' });
  return { grant_id: grantId, jws };
}

async function promotion(task: Task, memoryId: string, extra: Record<string, unknown> = {}): Promise<RunAction> {
  const grant = await grantFor(task);
  const memory = {
    op: 'promote',
    memory_id: memoryId,
    claim: 'the API listens on 8080',
    scope: 'repo:writ',
    evidence_refs: [{ kind: 'receipt', id: 'rcpt-1' }],
    trust_tier: 'observed',
    promotion_reason: 'every later task on this repository needs the port',
    source: { kind: 'belief', id: 'bel-port' },
    invalidation_policy: { mode: 'manual' },
    retention_class: 'project',
    ...extra,
  };
  return {
    ...task,
    grant_id: grant.grant_id,
    grant_jws: grant.jws,
    action_request: {
      action_request_id: uniqueName('ar'),
      task_id: task.task_id,
      action_class: 'memory_write',
      target_resources: ['memory:repo:writ'],
      params: { memory },
      expected_effects: ['a memory record'],
      reversibility_hint: 'reversible',
      reason: 'integration test',
      proposed_by: 'agent-mem',
      proposed_at: new Date().toISOString(),
    },
  };
}

const memoryEvents = async (memoryId: string): Promise<EventEnvelope[]> => (await executor().readEntity('memory', memoryId)).map((stored) => stored.event);
const completions = async (taskId: string): Promise<ExecutionCompleted[]> =>
  (await executor().read(taskId)).filter((stored) => stored.event.event_type === 'execution.completed').map((stored) => ExecutionCompleted.parse(stored.event.payload));

describe('memory_write performed by the executor (issue 17)', () => {
  it('given a memory.promoted of the same id forged on the record\'s stream by the receipt service, when a granted promotion runs, then the forgery is not folded: the executor promotes, once', async () => {
    // given a task with its belief and policy allow, and a forged promotion of the record (a stolen credential in a client that checks nothing)
    const task = await taskWithBelief();
    const memoryId = uniqueName('mem-forged');
    const forger = await storeAs(DEFAULT_SERVICE_PRINCIPALS.receipt, false);
    const command = await promotion(task, memoryId);
    const { op: _op, ...proposed } = command.action_request.params['memory'] as Record<string, unknown>;
    const forged = { record: { ...proposed, task_id: task.task_id, status: 'active', created_at: new Date().toISOString(), promoted_by: 'agent-mem', policy_result_ref: 'policy_result:forged' }, at: new Date().toISOString() };
    await forger.appendToEntity('memory', memoryId, [{ event_id: uniqueName('forged'), schema_version: 1, event_type: 'memory.promoted', entity_type: 'memory', entity_id: memoryId, occurred_at: forged.at, actor_type: 'service', actor_id: 'writ-executor', payload: forged, causation_id: null, correlation_id: task.task_id }], 0);
    // when the executor performs the granted promotion
    const outcome = await handler().handle(command);
    // then it was performed (the forged record did not make it KNOWLEDGE_MEMORY_EXISTS), and the stream, read as services read it, holds the executor's event alone
    expect(outcome).toMatchObject({ status: 'executed', outcome: 'completed' });
    const events = await memoryEvents(memoryId);
    expect(events.map((event) => [event.event_type, event.event_id, event.seal?.principal_id])).toEqual([['memory.promoted', memoryEventIdFor(useIdFor(command)), DEFAULT_SERVICE_PRINCIPALS.executor]]);
    expect(events[0]?.payload['record']).toMatchObject({ memory_id: memoryId, policy_result_ref: `policy_result:pr-${task.attempt_id}`, promoted_by: 'agent-mem' });
    const [completed] = await completions(task.task_id);
    expect(completed?.memory).toMatchObject({ memory_id: memoryId, outcome: 'promoted', event_id: events[0]?.event_id, event_sha256: events[0]?.hash });
  });

  it('given a promotion performed, when the same RunAction is replayed and another grant promotes the same id, then the record is promoted once: the replay is already done, the second use is refused KNOWLEDGE_MEMORY_EXISTS', async () => {
    const task = await taskWithBelief();
    const memoryId = uniqueName('mem-replay');
    const command = await promotion(task, memoryId);
    await handler().handle(command);
    // when the very command is delivered again (a redelivery, a replay outside the duplicate window), to another executor process
    expect(await handler().handle(command)).toEqual({ status: 'already-done', reason: 'completed' });
    // and a second grant (a new attempt's) promotes the same id
    const second = await promotion({ ...task, attempt_id: task.attempt_id }, memoryId);
    const outcome = await handler().handle(second);
    // then one memory event, and the second use recorded errored with the kernel's code
    expect(outcome).toMatchObject({ status: 'executed', outcome: 'errored' });
    expect((await memoryEvents(memoryId)).map((event) => event.event_type)).toEqual(['memory.promoted']);
    const ended = await completions(task.task_id);
    expect(ended.map((c) => [c.outcome, c.memory?.outcome ?? null, c.error?.code ?? null])).toEqual([
      ['completed', 'promoted', null],
      ['errored', null, 'KNOWLEDGE_MEMORY_EXISTS'],
    ]);
  });

  it('given the executor killed between the memory append and recording the completion, when the use is delivered again, then exactly one memory event exists and the completion names it', async () => {
    const task = await taskWithBelief();
    const memoryId = uniqueName('mem-killed');
    const command = await promotion(task, memoryId);
    // given a process that appends the memory event and then dies before execution.completed lands
    const real = new EventStoreTaskLog(executor());
    const dying: TaskLog = {
      read: (taskId) => real.read(taskId),
      append: async (taskId, drafts, expected) => {
        if (drafts.some((draft) => draft.event_type === 'execution.completed')) throw new WritError('EXECUTOR_KILLED', 'killed (kill -9) before the completion was recorded');
        return real.append(taskId, drafts, expected);
      },
    };
    await expect(handler({ log: dying }).handle(command)).rejects.toThrow();
    expect((await memoryEvents(memoryId)).length).toBe(1);
    expect(await completions(task.task_id)).toEqual([]);
    // when the command is redelivered to a restarted executor
    const outcome = await handler().handle(command);
    // then nothing is appended twice: one memory event, one completion pointing at it
    expect(outcome).toMatchObject({ status: 'executed', outcome: 'completed' });
    const events = await memoryEvents(memoryId);
    expect(events.map((event) => event.event_id)).toEqual([memoryEventIdFor(useIdFor(command))]);
    expect((await completions(task.task_id)).map((c) => c.memory?.event_id)).toEqual([events[0]?.event_id]);
  });

  it('given the executor killed after its claim and before the memory append, when the use is delivered again, then the write is performed once (it was provably not done: its stream held nothing of the use)', async () => {
    const task = await taskWithBelief();
    const memoryId = uniqueName('mem-unwritten');
    const command = await promotion(task, memoryId);
    const real = new EventStoreMemoryLog(executor());
    const dying: MemoryLog = { read: (id) => real.read(id), append: async () => Promise.reject(new WritError('EXECUTOR_KILLED', 'killed (kill -9) before the memory append')) };
    await expect(handler({ memory: dying }).handle(command)).rejects.toThrow();
    expect(await memoryEvents(memoryId)).toEqual([]);
    expect((await executor().read(task.task_id)).map((stored) => stored.event.event_type)).toContain('grant.use_claimed');
    const outcome = await handler().handle(command);
    expect(outcome).toMatchObject({ status: 'executed', outcome: 'completed' });
    expect((await memoryEvents(memoryId)).map((event) => event.event_type)).toEqual(['memory.promoted']);
    expect((await completions(task.task_id)).map((c) => c.memory?.outcome)).toEqual(['promoted']);
  });

  it('given a tier above the source belief, then nothing is written and the completion is errored KNOWLEDGE_TRUST_TIER_ESCALATION', async () => {
    const task = await taskWithBelief();
    const memoryId = uniqueName('mem-escalated');
    await handler().handle(await promotion(task, memoryId, { trust_tier: 'verified' }));
    expect(await memoryEvents(memoryId)).toEqual([]);
    expect((await completions(task.task_id)).map((c) => [c.outcome, c.error?.code])).toEqual([['errored', 'KNOWLEDGE_TRUST_TIER_ESCALATION']]);
  });
});
