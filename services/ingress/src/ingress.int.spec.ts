import { jetstreamManager } from '@nats-io/jetstream';
import { BusClient } from '@writ/bus';
import { IngressAccepted, IngressReceived, IngressRejected, type IngressRejectionCode } from '@writ/contracts';
import { generateEd25519Key } from '@writ/crypto';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  actionRequest,
  idsOf,
  ingressOutcome,
  publishRaw,
  registerPrincipal,
  revokeKey,
  sign,
  startTestIngress,
  taskSubjectCount,
  type TestAgent,
  type TestIngress,
} from '../test/fixtures.js';
import type { IngressReply } from './application/receive-action.handler.js';

let t: TestIngress;
let agent: TestAgent;
let bus: BusClient;

beforeAll(async () => {
  t = await startTestIngress();
  agent = await registerPrincipal(t.store);
  bus = new BusClient(t.nc);
});

afterAll(async () => {
  await bus?.close();
  await t?.stop();
});

const subjectOf = (principalId: string) => t.config.subjects.ingressAction(principalId);

/** A new task of `who`, accepted over NATS; its id. */
async function acceptedTask(who: TestAgent): Promise<string> {
  const request = actionRequest(who.id);
  const jws = await sign(request, who.key);
  await publishRaw(t.nc, subjectOf(who.id), jws, request.action_request_id);
  return IngressAccepted.parse((await ingressOutcome(t.store, idsOf(who.id, request.action_request_id, jws).ingressId))[1]!.payload).task_id;
}

/** Messages of the ingress stream its durable has not handled yet (delivered and unacked, or not delivered). */
async function consumerPending(): Promise<number> {
  const jsm = await jetstreamManager(t.nc);
  for await (const info of jsm.consumers.list(t.config.streams.ingress)) return info.num_pending + info.num_ack_pending;
  return Number.POSITIVE_INFINITY;
}
const querySubject = () => t.config.subjects.submitAction;

const TASK_PATH = [
  'task.created',
  'task.marked_ready',
  'task.started',
  'step.planned',
  'step.marked_ready',
  'step.attempt_opened',
  'attempt.created',
  'attempt.leased',
  'attempt.awaiting_policy',
];

describe('ingress over NATS (writ.ingress.action.<principal_id>)', () => {
  it('records the request first, then opens the task, step and attempt, then accepts', async () => {
    // given a registered agent and a signed request
    const request = actionRequest(agent.id);
    const jws = await sign(request, agent.key);
    // when it is published with Writ-Idempotency-Key = action_request_id
    const ack = await publishRaw(t.nc, subjectOf(agent.id), jws, request.action_request_id);
    expect(ack.duplicate).toBe(false);
    // then the ingress stream holds received, then accepted
    const ids = idsOf(agent.id, request.action_request_id, jws);
    const ingress = await ingressOutcome(t.store, ids.ingressId);
    expect(ingress.map((e) => e.event_type)).toEqual(['ingress.received', 'ingress.accepted']);
    const received = IngressReceived.parse(ingress[0]!.payload);
    expect(received).toMatchObject({ ingress_id: ids.ingressId, source_channel: 'nats', claimed_principal_id: agent.id, raw: jws });
    const accepted = IngressAccepted.parse(ingress[1]!.payload);
    expect(accepted).toMatchObject({ task_id: ids.newTaskId, step_id: ids.stepId, attempt_id: ids.attemptId, created_task: true, principal_id: agent.id });

    // and the task stream holds the creation path, in order, decided by the kernel
    const task = await t.store.read(accepted.task_id);
    expect(task.map((e) => e.event.event_type)).toEqual(TASK_PATH);
    const awaiting = task.at(-1)!.event;
    expect(awaiting).toMatchObject({ entity_type: 'attempt', entity_id: ids.attemptId, step_id: ids.stepId, attempt_id: ids.attemptId, actor_type: 'service' });
    expect(awaiting.payload['action_request']).toEqual(request);
    expect(task[0]!.event.payload).toMatchObject({ owner_principal_id: agent.id, policy_profile_ref: 'local_edit_allowed', files_owned: ['**'] });
    expect(task.every((e) => e.event.causation_id === ingress[0]!.event_id && e.event.correlation_id === accepted.task_id)).toBe(true);

    // and ingress.received is stored before the first task event (invariant 1)
    const storedIngress = await t.store.readEntity('ingress', ids.ingressId);
    expect(storedIngress[0]!.streamSeq).toBeLessThan(task[0]!.streamSeq);
  });

  it('acts in an existing task of the same principal: a new step and attempt, no new task', async () => {
    // given a task the agent created
    const taskId = await acceptedTask(agent);
    // when a second request names that task
    const { task: _task, ...rest } = actionRequest(agent.id);
    const second = { ...rest, task_id: taskId };
    const secondJws = await sign(second, agent.key);
    await publishRaw(t.nc, subjectOf(agent.id), secondJws, second.action_request_id);
    // then it is accepted into the same task, with only step and attempt events added
    const ids = idsOf(agent.id, second.action_request_id, secondJws);
    const accepted = IngressAccepted.parse((await ingressOutcome(t.store, ids.ingressId))[1]!.payload);
    expect(accepted).toMatchObject({ task_id: taskId, created_task: false });
    const types = (await t.store.read(taskId)).map((e) => e.event.event_type);
    expect(types).toEqual([...TASK_PATH, ...TASK_PATH.slice(3)]);
  });

  describe('refuses, recording ingress.rejected and touching no task', () => {
    type Case = { note: string; code: IngressRejectionCode; build: () => Promise<{ principal: string; body: string | Uint8Array; key: string }> };
    const cases: Case[] = [
      {
        note: 'forged signature: signed by another key under the agent kid',
        code: 'INGRESS_SIGNATURE_INVALID',
        build: async () => {
          const request = actionRequest(agent.id);
          const forger = await generateEd25519Key({ kid: agent.key.kid });
          return { principal: agent.id, body: await sign(request, forger), key: request.action_request_id };
        },
      },
      {
        note: 'unknown principal',
        code: 'INGRESS_PRINCIPAL_UNKNOWN',
        build: async () => {
          const stranger = uniqueName('stranger');
          const key = await generateEd25519Key({ kid: `${stranger}-k1` });
          const request = actionRequest(stranger);
          return { principal: stranger, body: await sign(request, key), key: request.action_request_id };
        },
      },
      {
        note: 'unknown kid',
        code: 'INGRESS_KEY_UNKNOWN',
        build: async () => {
          const other = await generateEd25519Key({ kid: `${agent.id}-unregistered` });
          const request = actionRequest(agent.id);
          return { principal: agent.id, body: await sign(request, other), key: request.action_request_id };
        },
      },
      {
        note: 'revoked key',
        code: 'INGRESS_KEY_UNKNOWN',
        build: async () => {
          const revoked = await registerPrincipal(t.store);
          await revokeKey(t.store, revoked.id, revoked.key.kid);
          const request = actionRequest(revoked.id);
          return { principal: revoked.id, body: await sign(request, revoked.key), key: request.action_request_id };
        },
      },
      {
        note: 'malformed body: not a JWS',
        code: 'INGRESS_REQUEST_INVALID',
        build: async () => ({ principal: agent.id, body: '{"action_request_id":"x"}', key: uniqueName('k') }),
      },
      {
        note: 'malformed body: not UTF-8 at all',
        code: 'INGRESS_REQUEST_INVALID',
        build: async () => ({ principal: agent.id, body: new Uint8Array([0xff, 0xfe, 0x00, 0x2e]), key: uniqueName('k') }),
      },
      {
        note: 'a JWS whose payload is not a valid ActionRequest',
        code: 'INGRESS_REQUEST_INVALID',
        build: async () => {
          const { action_class: _class, ...invalid } = actionRequest(agent.id);
          return { principal: agent.id, body: await sign({ ...invalid, params: { argv: [] } }, agent.key), key: uniqueName('k') };
        },
      },
      {
        note: 'stale proposed_at',
        code: 'INGRESS_STALE',
        build: async () => {
          const request = actionRequest(agent.id, { proposed_at: new Date(Date.now() - 10 * 60_000).toISOString() });
          return { principal: agent.id, body: await sign(request, agent.key), key: request.action_request_id };
        },
      },
      {
        note: 'principal mismatch: proposed_by names someone else than the subject principal',
        code: 'INGRESS_PRINCIPAL_MISMATCH',
        build: async () => {
          const request = actionRequest(uniqueName('someone'));
          return { principal: agent.id, body: await sign(request, agent.key), key: request.action_request_id };
        },
      },
      {
        note: 'too large',
        code: 'INGRESS_TOO_LARGE',
        build: async () => ({ principal: agent.id, body: 'x'.repeat(300 * 1024), key: uniqueName('k') }),
      },
      {
        note: 'task_id of a task that does not exist',
        code: 'INGRESS_TASK_UNKNOWN',
        build: async () => {
          const { task: _task, ...rest } = actionRequest(agent.id);
          const request = { ...rest, task_id: uniqueName('tsk') };
          return { principal: agent.id, body: await sign(request, agent.key), key: request.action_request_id };
        },
      },
    ];

    for (const c of cases) {
      it(`${c.code}: ${c.note}`, async () => {
        // given a request that must be refused
        const { principal, body, key } = await c.build();
        const tasksBefore = await taskSubjectCount(t.nc, t.config);
        // when it is published
        await publishRaw(t.nc, subjectOf(principal), body, key);
        // then ingress records it, refuses it with the code, and no task subject appears
        const ids = idsOf(principal, key, body);
        const events = await ingressOutcome(t.store, ids.ingressId);
        expect(events.map((e) => e.event_type)).toEqual(['ingress.received', 'ingress.rejected']);
        expect(IngressRejected.parse(events[1]!.payload).reason_code).toBe(c.code);
        expect((await t.store.head(ids.newTaskId)).taskSeq).toBe(0);
        expect(await taskSubjectCount(t.nc, t.config)).toBe(tasksBefore);
      });
    }

    it('INGRESS_TASK_TERMINAL: a task that has ended', async () => {
      // given a task of the agent that the orchestrator failed
      const taskId = await acceptedTask(agent);
      const head = await t.store.head(taskId);
      const at = new Date().toISOString();
      await t.store.append(
        taskId,
        [{ event_id: `${taskId}-failed`, schema_version: 1, event_type: 'task.failed', entity_type: 'task', entity_id: taskId, occurred_at: at, actor_type: 'service', actor_id: 'orchestrator', payload: { reason: 'test', at }, causation_id: null, correlation_id: taskId }],
        head.taskSeq,
      );
      // when the agent submits another action into it
      const { task: _task, ...rest } = actionRequest(agent.id);
      const request = { ...rest, task_id: taskId };
      const jws = await sign(request, agent.key);
      await publishRaw(t.nc, subjectOf(agent.id), jws, request.action_request_id);
      // then it is refused and the task stream is unchanged
      const events = await ingressOutcome(t.store, idsOf(agent.id, request.action_request_id, jws).ingressId);
      expect(IngressRejected.parse(events[1]!.payload).reason_code).toBe('INGRESS_TASK_TERMINAL');
      expect((await t.store.head(taskId)).taskSeq).toBe(head.taskSeq + 1);
    });

    it('INGRESS_PRINCIPAL_MISMATCH: another principal acting in a task it does not own', async () => {
      // given a task of the agent, and a second registered agent
      const taskId = await acceptedTask(agent);
      const intruder = await registerPrincipal(t.store);
      const headBefore = (await t.store.head(taskId)).taskSeq;
      // when the second agent submits an action into the first agent's task
      const { task: _task, ...rest } = actionRequest(intruder.id);
      const request = { ...rest, task_id: taskId };
      const jws = await sign(request, intruder.key);
      await publishRaw(t.nc, subjectOf(intruder.id), jws, request.action_request_id);
      // then it is refused and the task is unchanged
      const events = await ingressOutcome(t.store, idsOf(intruder.id, request.action_request_id, jws).ingressId);
      expect(IngressRejected.parse(events[1]!.payload).reason_code).toBe('INGRESS_PRINCIPAL_MISMATCH');
      expect((await t.store.head(taskId)).taskSeq).toBe(headBefore);
    });
  });

  it('the same request sent twice under the same key makes one task: the second is a duplicate of the same bytes, answered from the record', async () => {
    // given a signed request
    const request = actionRequest(agent.id);
    const jws = await sign(request, agent.key);
    const tasksBefore = await taskSubjectCount(t.nc, t.config);
    // when it is published twice with the same Writ-Idempotency-Key (JetStream stores both: the header is not its msg id)
    const first = await publishRaw(t.nc, subjectOf(agent.id), jws, request.action_request_id);
    const second = await publishRaw(t.nc, subjectOf(agent.id), jws, request.action_request_id);
    expect(second.seq).toBeGreaterThan(first.seq);
    // then ingress records one request, and one task exists
    const ids = idsOf(agent.id, request.action_request_id, jws);
    expect((await ingressOutcome(t.store, ids.ingressId)).map((e) => e.event_type)).toEqual(['ingress.received', 'ingress.accepted']);
    await waitFor(async () => ((await consumerPending()) === 0 ? true : undefined), { what: 'both messages handled' });
    expect((await ingressOutcome(t.store, ids.ingressId)).map((e) => e.event_type)).toEqual(['ingress.received', 'ingress.accepted']);
    expect(await taskSubjectCount(t.nc, t.config)).toBe(tasksBefore + 1);
  });

  it('a replay under a new Nats-Msg-Id with the same action_request_id is refused, not a second task', async () => {
    // given an accepted request
    const request = actionRequest(agent.id);
    const jws = await sign(request, agent.key);
    await publishRaw(t.nc, subjectOf(agent.id), jws, request.action_request_id);
    const original = await ingressOutcome(t.store, idsOf(agent.id, request.action_request_id, jws).ingressId);
    const tasksBefore = await taskSubjectCount(t.nc, t.config);
    // when the same signed request is replayed under another idempotency key
    const replayKey = uniqueName('replay');
    await publishRaw(t.nc, subjectOf(agent.id), jws, replayKey);
    // then the replay is recorded and refused as a duplicate action_request_id, and no task is added
    const replay = await ingressOutcome(t.store, idsOf(agent.id, replayKey, jws).ingressId);
    const rejected = IngressRejected.parse(replay[1]!.payload);
    expect(rejected).toMatchObject({ reason_code: 'INGRESS_REQUEST_INVALID', action_request_id: request.action_request_id });
    expect(rejected.message).toContain(original[0]!.entity_id);
    expect(await taskSubjectCount(t.nc, t.config)).toBe(tasksBefore);
  });
});

describe('ingress over request/reply (SubmitAction, what POST /v1/actions forwards)', () => {
  it('accepts, and answers a second submission with the same key as a duplicate of the same task', async () => {
    // given a signed request
    const request = actionRequest(agent.id);
    const command = { jws: await sign(request, agent.key), idempotency_key: uniqueName('http') };
    // when it is submitted twice over the request subject
    const first = await bus.request<IngressReply>(querySubject(), command);
    const second = await bus.request<IngressReply>(querySubject(), command);
    // then the first is accepted into a new task and the second is that task's duplicate
    const ids = idsOf(agent.id, command.idempotency_key, command.jws);
    expect(first).toEqual({ ingress_id: ids.ingressId, status: 'accepted', action_request_id: request.action_request_id, task_id: ids.newTaskId });
    expect(second).toEqual({ ...first, status: 'duplicate' });
    const received = IngressReceived.parse((await t.store.readEntity('ingress', ids.ingressId))[0]!.event.payload);
    expect(received.source_channel).toBe('http');
    expect((await t.store.read(ids.newTaskId)).map((e) => e.event.event_type)).toEqual(TASK_PATH);
  });

  it('replies a refusal with its code', async () => {
    const request = actionRequest(agent.id, { proposed_at: new Date(Date.now() + 3_600_000).toISOString() });
    const reply = await bus.request<IngressReply>(querySubject(), { jws: await sign(request, agent.key), idempotency_key: uniqueName('http') });
    expect(reply).toMatchObject({ status: 'rejected', reason_code: 'INGRESS_STALE', action_request_id: request.action_request_id });
  });

  it('records and refuses a JWS over the size limit instead of failing the command', async () => {
    const key = uniqueName('big');
    const reply = await bus.request<IngressReply>(querySubject(), { jws: 'x'.repeat(300 * 1024), idempotency_key: key, principal_id: agent.id });
    expect(reply).toMatchObject({ ingress_id: idsOf(agent.id, key, 'x'.repeat(300 * 1024)).ingressId, status: 'rejected', reason_code: 'INGRESS_TOO_LARGE' });
    const received = IngressReceived.parse((await t.store.readEntity('ingress', reply.ingress_id))[0]!.event.payload);
    expect(received.raw).toBe('');
    expect(received.raw_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers a malformed command with CONTRACT_INVALID', async () => {
    await expect(bus.request(querySubject(), { jws: 'x' })).rejects.toSatisfy((e: { code?: string }) => e.code === 'CONTRACT_INVALID');
  });
});

describe('HTTP', () => {
  it('POST /v1/actions takes the compact JWS as the body', async () => {
    // given a signed request
    const request = actionRequest(agent.id);
    const jws = await sign(request, agent.key);
    // when it is posted with an Idempotency-Key, twice
    const post = () =>
      fetch(`${t.ingress.url}/v1/actions`, { method: 'POST', headers: { 'content-type': 'application/jose', 'idempotency-key': request.action_request_id }, body: jws });
    const first = await post();
    const second = await post();
    // then 202 accepted, then 200 duplicate of the same task
    expect(first.status).toBe(202);
    const body = (await first.json()) as IngressReply;
    expect(body).toMatchObject({ status: 'accepted', task_id: idsOf(agent.id, request.action_request_id, jws).newTaskId });
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ status: 'duplicate', task_id: body.task_id });
  });

  it('POST /v1/actions answers a refusal with 422 and its code', async () => {
    const request = actionRequest(agent.id);
    const response = await fetch(`${t.ingress.url}/v1/actions`, { method: 'POST', headers: { 'content-type': 'application/jose' }, body: await sign(request, await generateEd25519Key({ kid: agent.key.kid })) });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ status: 'rejected', reason_code: 'INGRESS_SIGNATURE_INVALID' });
  });

  it('POST /v1/actions records and refuses a body over the size limit (422 INGRESS_TOO_LARGE)', async () => {
    const response = await fetch(`${t.ingress.url}/v1/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/jose', 'idempotency-key': uniqueName('big'), 'writ-principal': agent.id },
      body: 'x'.repeat(300 * 1024),
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ status: 'rejected', reason_code: 'INGRESS_TOO_LARGE' });
  });

  it('serves /healthz and /readyz', async () => {
    expect((await fetch(`${t.ingress.url}/healthz`)).status).toBe(200);
    const ready = await waitFor(async () => {
      const response = await fetch(`${t.ingress.url}/readyz`);
      return response.status === 200 ? ((await response.json()) as { checks: Record<string, boolean> }) : undefined;
    });
    expect(ready.checks).toEqual({
      nats_connected: true,
      streams_ensured: true,
      quarantined: { total: 0 },
      consumers_stalled: [],
      consumer_bound: true,
      responders_listening: true,
      participant_timer_bound: true,
    });
  });
});
