import { IngressAccepted } from '@writ/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRequest, registerPrincipal, revokeKey, sign, startTestIngress, type TestAgent, type TestIngress } from '../../test/fixtures.js';
import { EventStoreIngressLog } from '../outbound/event-log.js';
import { LogPrincipalDirectory } from '../outbound/principal-directory.js';
import { sha256Hex } from '@writ/crypto';
import { ingressIds } from './ingress-ids.js';
import type { Clock, IngressLog } from './ports.js';
import { ReceiveActionHandler, type InboundAction } from './receive-action.handler.js';

/**
 * The handler against the real log, with a process "crash" injected at the
 * outbound port: the crashed run stores a prefix of its appends and throws;
 * the redelivery (a fresh handler, as after a restart) must finish the same
 * work with no duplicate.
 */
let t: TestIngress;
let agent: TestAgent;

beforeAll(async () => {
  t = await startTestIngress();
  agent = await registerPrincipal(t.store);
});

afterAll(async () => {
  await t?.stop();
});

class Crash extends Error {
  readonly code = 'TEST_CRASH';
}

/** A log whose task append stores only the first `keep` drafts, then "crashes" (or crashes before claiming). */
function crashingLog(inner: IngressLog, crash: { keepTaskEvents?: number; beforeClaim?: boolean }): IngressLog {
  return {
    headOfIngress: (id) => inner.headOfIngress(id),
    readIngress: (id) => inner.readIngress(id),
    appendIngress: async (id, drafts, seq) => {
      if (crash.beforeClaim === true && id.startsWith('iar-')) throw new Crash('crash before the claim');
      return inner.appendIngress(id, drafts, seq);
    },
    headOfTask: (id) => inner.headOfTask(id),
    readTask: (id) => inner.readTask(id),
    appendTask: async (id, drafts, seq) => {
      const keep = crash.keepTaskEvents ?? drafts.length;
      if (keep > 0) await inner.appendTask(id, drafts.slice(0, keep), seq);
      throw new Crash(`crash after ${keep} task events`);
    },
  };
}

const settings = { principalId: 'ingress', freshnessSeconds: 300, maxIngressBytes: 256 * 1024, stepMaxAttempts: 3 };
const systemClock: Clock = { now: () => new Date() };

function handler(log: IngressLog, clock: Clock = systemClock): ReceiveActionHandler {
  return new ReceiveActionHandler(log, new LogPrincipalDirectory(t.store), clock, settings);
}

/** The ids the handler derives for `input`. */
const idsOfInput = (input: InboundAction) => ingressIds(input.subjectPrincipalId ?? '', input.idempotencyKey ?? '', sha256Hex(input.raw));

async function inbound(request = actionRequest(agent.id)): Promise<{ input: InboundAction; actionRequestId: string }> {
  const raw = await sign(request, agent.key);
  return {
    input: { channel: 'nats', raw, rawBytes: raw.length, subjectPrincipalId: agent.id, idempotencyKey: request.action_request_id },
    actionRequestId: request.action_request_id,
  };
}

describe('a crash half way, then a redelivery', () => {
  it('finishes the task path once, after a crash between task appends', async () => {
    // given a run that stored 4 of the 9 task events and the claim, then died
    const { input } = await inbound();
    const log = new EventStoreIngressLog(t.store);
    await expect(handler(crashingLog(log, { keepTaskEvents: 4 })).receive(input)).rejects.toBeInstanceOf(Crash);
    const ids = idsOfInput(input);
    expect((await t.store.read(ids.newTaskId)).length).toBe(4);
    // when the message is delivered again to a fresh handler
    const reply = await handler(log).receive(input);
    // then the work is finished with every event exactly once
    expect(reply).toMatchObject({ status: 'accepted', task_id: ids.newTaskId });
    const types = (await t.store.read(ids.newTaskId)).map((e) => e.event.event_type);
    expect(types).toEqual([
      'task.created',
      'task.marked_ready',
      'task.started',
      'step.planned',
      'step.marked_ready',
      'step.attempt_opened',
      'attempt.created',
      'attempt.leased',
      'attempt.awaiting_policy',
    ]);
    expect((await t.store.readEntity('ingress', ids.ingressId)).map((e) => e.event.event_type)).toEqual(['ingress.received', 'ingress.accepted']);
    // and a third delivery is a duplicate that appends nothing
    expect(await handler(log).receive(input)).toMatchObject({ status: 'duplicate', task_id: ids.newTaskId });
    expect((await t.store.head(ids.newTaskId)).taskSeq).toBe(9);
  });

  it('keeps the acceptance decided before the crash even if the key is revoked before the redelivery', async () => {
    // given an agent whose accepted request crashed after 2 task events
    const late = await registerPrincipal(t.store);
    const request = actionRequest(late.id);
    const raw = await sign(request, late.key);
    const input: InboundAction = { channel: 'nats', raw, rawBytes: raw.length, subjectPrincipalId: late.id, idempotencyKey: request.action_request_id };
    const log = new EventStoreIngressLog(t.store);
    await expect(handler(crashingLog(log, { keepTaskEvents: 2 })).receive(input)).rejects.toBeInstanceOf(Crash);
    // when its key is revoked, then the message is redelivered
    await revokeKey(t.store, late.id, late.key.kid);
    const reply = await handler(log).receive(input);
    // then the redelivery completes the accepted request instead of leaving half a task
    expect(reply.status).toBe('accepted');
    expect((await t.store.head(idsOfInput(input).newTaskId)).taskSeq).toBe(9);
  });

  it('judges freshness against the time of receipt, so a late redelivery decides the same way', async () => {
    // given a run that recorded the request and died before claiming it
    const { input, actionRequestId } = await inbound();
    const log = new EventStoreIngressLog(t.store);
    await expect(handler(crashingLog(log, { beforeClaim: true })).receive(input)).rejects.toBeInstanceOf(Crash);
    // when it is redelivered an hour later
    const anHourLater: Clock = { now: () => new Date(Date.now() + 3_600_000) };
    const reply = await handler(log, anHourLater).receive(input);
    // then it is still accepted (proposed_at was fresh when received)
    expect(reply.status).toBe('accepted');
    const events = await t.store.readEntity('ingress', idsOfInput(input).ingressId);
    expect(IngressAccepted.parse(events.at(-1)!.event.payload).action_request_id).toBe(actionRequestId);
  });

  it('takes the time the bus stored the request as its time of receipt, so a request that waited out an ingress outage is not stale', async () => {
    // given a request the bus stored while it was fresh, first handled an hour later (ingress down or behind)
    const { input } = await inbound();
    const storedAt = new Date();
    const anHourLater: Clock = { now: () => new Date(storedAt.getTime() + 3_600_000) };
    // when ingress handles it
    const reply = await handler(new EventStoreIngressLog(t.store), anHourLater).receive({ ...input, storedAt });
    // then it is accepted, received when the bus stored it
    expect(reply.status).toBe('accepted');
    const received = (await t.store.readEntity('ingress', idsOfInput(input).ingressId))[0]!.event.payload as { received_at: string };
    expect(received.received_at).toBe(storedAt.toISOString());
  });

  it('never dates a receipt after its handling: a bus time ahead of the clock is not taken', async () => {
    // given a bus timestamp an hour ahead of the ingress host's clock
    const { input } = await inbound();
    const now = new Date();
    // when ingress handles it
    const reply = await handler(new EventStoreIngressLog(t.store), { now: () => now }).receive({ ...input, storedAt: new Date(now.getTime() + 3_600_000) });
    // then its time of receipt is the handler's clock
    expect(reply.status).toBe('accepted');
    const received = (await t.store.readEntity('ingress', idsOfInput(input).ingressId))[0]!.event.payload as { received_at: string };
    expect(received.received_at).toBe(now.toISOString());
  });

  it('two deliveries racing on the same request append one set of events', async () => {
    // given one request handled by two instances at once
    const { input } = await inbound();
    const log = new EventStoreIngressLog(t.store);
    const run = async (h: ReceiveActionHandler) => {
      for (;;) {
        try {
          return await h.receive(input);
        } catch (error) {
          if ((error as { code?: string }).code !== 'EVENTSTORE_CONFLICT') throw error;
        }
      }
    };
    // when both run
    const replies = await Promise.all([run(handler(log)), run(handler(new EventStoreIngressLog(t.store)))]);
    // then each saw it accepted (or finished), and the task path exists once
    for (const reply of replies) expect(['accepted', 'duplicate']).toContain(reply.status);
    expect(new Set(replies.map((r) => r.task_id)).size).toBe(1);
    const ids = idsOfInput(input);
    expect((await t.store.head(ids.newTaskId)).taskSeq).toBe(9);
    expect((await t.store.headOfEntity('ingress', ids.ingressId)).taskSeq).toBe(2);
  });
});
