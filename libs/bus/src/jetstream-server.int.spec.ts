import 'reflect-metadata';
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Controller, Injectable, type INestMicroservice, type Type } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { ContractError, hasErrorCode, WritError, type QuarantineRecord } from '@writ/contracts';
import { createLogger } from '@writ/telemetry';
import { connectTestNats, deleteStreams, NATS_URL, uniqueName, waitFor } from '@writ/testing';
import { filter, firstValueFrom, Subject } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BusClient } from './bus-client.js';
import { JetStreamContext, type RequestContext } from './bus-context.js';
import { BusExceptionFilter } from './bus-exception.filter.js';
import { busOptions, type ConsumerOptions, type JetStreamServerOptions } from './bus-options.js';
import { durableName } from './consumer-names.js';
import { DeadLetterHeaders } from './dead-letter.js';
import { JetStreamServer } from './jetstream-server.js';

/**
 * Real NestJS microservices against the real NATS 2.9 server. Each test owns
 * a stream under its own subject prefix, a dead-letter stream for its own
 * service name, and deletes both afterwards. Tests wait on checkpoints
 * (handled messages, consumer ack floors, stored letters), never on sleeps.
 */

const quiet = createLogger('bus-test', { level: 'silent' });

interface Rig {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly client: BusClient;
  /** Subject prefix owned by this test: `<prefix>.>` is captured by `stream`. */
  readonly prefix: string;
  readonly service: string;
  readonly stream: string;
  readonly dlqStream: string;
  readonly apps: INestMicroservice[];
}

async function createRig(): Promise<Rig> {
  const nc = await connectTestNats('bus-int');
  const jsm = await jetstreamManager(nc);
  const prefix = uniqueName('bus');
  const service = uniqueName('svc');
  const stream = uniqueName('BUS');
  const dlqStream = uniqueName('DLQ');
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
  await jsm.streams.add({ name: dlqStream, subjects: [`${prefix}_dlq.${service}.>`] });
  return { nc, jsm, client: new BusClient(nc), prefix, service, stream, dlqStream, apps: [] };
}

async function disposeRig(rig: Rig): Promise<void> {
  await Promise.all(rig.apps.map((app) => app.close()));
  await rig.client.close();
  await deleteStreams(rig.nc, rig.stream, rig.dlqStream);
  await rig.nc.close();
}

/** Starts one instance of the test service: a Nest microservice on the JetStream transport. */
async function startApp(
  rig: Rig,
  controllers: Type[],
  options: Partial<JetStreamServerOptions> = {},
  providers: Array<{ provide: Type; useValue: unknown }> = [],
): Promise<{ app: INestMicroservice; server: JetStreamServer }> {
  const moduleRef = await Test.createTestingModule({ controllers, providers }).compile();
  const server = new JetStreamServer({
    serviceName: rig.service,
    servers: NATS_URL,
    // Letters under the test's own root: the machine may run Writ itself, whose WRIT_DLQ captures writ.dlq.>.
    deadLetterPrefix: `${rig.prefix}_dlq`,
    backoff: { initialMs: 10, maxMs: 100 },
    // Short pulls keep each idle app's graceful stop short.
    pullExpiresMs: 1_000,
    logger: quiet,
    ...options,
  });
  const app = moduleRef.createNestMicroservice({ strategy: server, logger: false });
  app.useGlobalFilters(new BusExceptionFilter());
  try {
    await app.listen();
  } catch (error) {
    await app.close();
    throw error;
  }
  rig.apps.push(app);
  return { app, server };
}

async function closeApp(rig: Rig, app: INestMicroservice): Promise<void> {
  rig.apps.splice(rig.apps.indexOf(app), 1);
  await app.close();
}

type EventHandler = (payload: unknown, ctx: JetStreamContext) => unknown;

/** A controller with one `@EventPattern` handler; classes are made per test because subjects are per test. */
function eventController(subject: string, handle: EventHandler, options: ConsumerOptions = {}): Type {
  @Controller()
  class EventHandlers {
    @EventPattern<string>(subject, busOptions(options))
    on(@Payload() payload: unknown, @Ctx() ctx: JetStreamContext): unknown {
      return handle(payload, ctx);
    }
  }
  return EventHandlers;
}

interface Delivery {
  readonly payload: unknown;
  readonly seq: number;
  readonly deliveryCount: number;
  readonly key: string | undefined;
}

const record = (payload: unknown, ctx: JetStreamContext): Delivery => ({
  payload,
  seq: ctx.streamSequence,
  deliveryCount: ctx.deliveryCount,
  key: ctx.idempotencyKey,
});

async function dlqMessages(rig: Rig, count: number): Promise<StoredMsg[]> {
  await waitFor(async () => ((await rig.jsm.streams.info(rig.dlqStream)).state.messages >= count ? true : undefined), {
    what: `${count} dead letter(s)`,
  });
  const letters: StoredMsg[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const letter = await rig.jsm.streams.getMessage(rig.dlqStream, { seq });
    if (letter === null) throw new Error(`dead letter ${seq} vanished`);
    letters.push(letter);
  }
  return letters;
}

async function consumerState(rig: Rig, durable: string) {
  const info = await rig.jsm.consumers.info(rig.stream, durable);
  return { ackFloor: info.ack_floor.stream_seq, pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
}

/** Waits until the durable has nothing left: everything delivered is acked or terminated. */
async function waitSettled(rig: Rig, durable: string, lastSeq: number): Promise<void> {
  await waitFor(
    async () => {
      const state = await consumerState(rig, durable);
      return state.ackFloor >= lastSeq && state.pending === 0 && state.ackPending === 0 ? true : undefined;
    },
    { what: `${durable} to settle at ${lastSeq}` },
  );
}

describe('JetStreamServer (real NestJS app, real NATS 2.9)', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await createRig();
  });
  afterEach(async () => {
    await disposeRig(rig);
  });

  it('redelivers a failing handler with backoff, then dead-letters it with the reason once retries are exhausted', async () => {
    const subject = `${rig.prefix}.cmd.flaky`;
    const deliveries: Delivery[] = [];
    const controller = eventController(subject, (payload, ctx) => {
      deliveries.push(record(payload, ctx));
      throw new WritError('UPSTREAM_UNAVAILABLE', 'the cell host did not answer');
    });
    const { server } = await startApp(rig, [controller], { maxDeliver: 3 });
    const deadLettered = new Promise((resolve) => server.on('dead-letter', resolve));

    const ack = await rig.client.publish(subject, { task_id: 't-1' }, { msgId: 'cmd-1', headers: { 'Writ-Correlation-Id': 'corr-1' } });
    const [letter] = await dlqMessages(rig, 1);
    await deadLettered;

    expect(deliveries.map((d) => d.deliveryCount)).toEqual([1, 2, 3]);
    const h = (name: string) => letter?.header.get(name);
    expect(h(DeadLetterHeaders.REASON)).toBe('exhausted');
    expect(h(DeadLetterHeaders.ERROR_CODE)).toBe('UPSTREAM_UNAVAILABLE');
    expect(h(DeadLetterHeaders.ERROR_MESSAGE)).toBe('the cell host did not answer');
    expect(h(DeadLetterHeaders.DELIVERY_COUNT)).toBe('3');
    expect(h(DeadLetterHeaders.SUBJECT)).toBe(subject);
    expect(h(DeadLetterHeaders.STREAM)).toBe(rig.stream);
    expect(h(DeadLetterHeaders.STREAM_SEQ)).toBe(String(ack.seq));
    expect(h(DeadLetterHeaders.MSG_ID)).toBe('cmd-1');
    expect(h(DeadLetterHeaders.SERVICE)).toBe(rig.service);
    expect(h('Writ-Correlation-Id')).toBe('corr-1');
    expect(letter?.subject.startsWith(`${rig.prefix}_dlq.${rig.service}.`)).toBe(true);
    expect(letter?.json()).toEqual({ task_id: 't-1' });
    // The original is terminated: nothing pending, nothing left to redeliver.
    const durable = server.boundConsumers()[0]?.durable ?? '';
    await waitSettled(rig, durable, ack.seq);
    expect(deliveries).toHaveLength(3);
  });

  it('dead-letters a contract violation at once, without retries', async () => {
    const subject = `${rig.prefix}.cmd.strict`;
    const deliveries: Delivery[] = [];
    const controller = eventController(subject, (payload, ctx) => {
      deliveries.push(record(payload, ctx));
      throw new ContractError('IssueGrant', [{ path: 'grant.scope', code: 'invalid_type', message: 'Required' }]);
    });
    const { server } = await startApp(rig, [controller], { maxDeliver: 5 });

    const ack = await rig.client.publish(subject, { grant: {} }, { msgId: 'cmd-2' });
    const [letter] = await dlqMessages(rig, 1);

    expect(deliveries.map((d) => d.deliveryCount)).toEqual([1]);
    expect(letter?.header.get(DeadLetterHeaders.REASON)).toBe('terminal');
    expect(letter?.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('CONTRACT_INVALID');
    expect(letter?.header.get(DeadLetterHeaders.DELIVERY_COUNT)).toBe('1');
    await waitSettled(rig, server.boundConsumers()[0]?.durable ?? '', ack.seq);
  });

  it('dead-letters a body that is not JSON without calling the handler, as a quarantined message, and goes on with the next', async () => {
    const subject = `${rig.prefix}.cmd.garbled`;
    const handled: unknown[] = [];
    const { server } = await startApp(rig, [eventController(subject, (payload) => void handled.push(payload))]);
    const quarantined = new Promise<QuarantineRecord>((resolve) => server.on('quarantine', resolve));

    const junk = await jetstream(rig.nc).publish(subject, new TextEncoder().encode('{not json'), { msgID: 'raw-1' });
    const next = await rig.client.publish(subject, { after: 'junk' }, { msgId: 'raw-2' });
    const [letter] = await dlqMessages(rig, 1);

    expect(letter?.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('BUS_PAYLOAD_INVALID');
    expect(letter?.string()).toBe('{not json');
    expect(await quarantined).toMatchObject({ subject, stream_seq: junk.seq, reason: 'QUARANTINE_NOT_JSON', bytes: 9 });
    await waitSettled(rig, server.boundConsumers()[0]?.durable ?? '', next.seq);
    expect(handled).toEqual([{ after: 'junk' }]);
  });

  it('dead-letters a message whose earlier attempts never reported back (a crashed process) without handling it again', async () => {
    const subject = `${rig.prefix}.cmd.crashy`;
    const durable = durableName(rig.service, subject);
    await rig.jsm.consumers.add(rig.stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, filter_subject: subject });
    await rig.client.publish(subject, { n: 1 }, { msgId: 'c-1' });
    // Two deliveries that ended without a verdict, as when a process dies mid-handler.
    const raw = await jetstream(rig.nc).consumers.get(rig.stream, durable);
    for (let attempt = 1; attempt <= 2; attempt++) {
      const message = await raw.next({ expires: 1_000 });
      expect(message?.info.deliveryCount).toBe(attempt);
      message?.nak();
    }

    let called = false;
    await startApp(rig, [eventController(subject, () => void (called = true))], { maxDeliver: 2 });
    const [letter] = await dlqMessages(rig, 1);

    expect(letter?.header.get(DeadLetterHeaders.REASON)).toBe('exhausted');
    expect(letter?.header.get(DeadLetterHeaders.ERROR_CODE)).toBe('BUS_RETRIES_EXHAUSTED');
    expect(letter?.header.get(DeadLetterHeaders.DELIVERY_COUNT)).toBe('3');
    expect(called).toBe(false);
  });

  it('resumes where it left off after a stop and restart: nothing missed, nothing acked handled again', async () => {
    const subject = `${rig.prefix}.evt.resume`;
    const seen: Array<Delivery & { instance: string }> = [];
    const controllerFor = (instance: string) =>
      eventController(subject, async (payload, ctx) => {
        seen.push({ ...record(payload, ctx), instance });
      });

    const first = await startApp(rig, [controllerFor('first')]);
    const durable = first.server.boundConsumers()[0]?.durable ?? '';
    for (let n = 1; n <= 5; n++) await rig.client.publish(subject, { n }, { msgId: `e-${n}` });
    await waitSettled(rig, durable, 5);
    await closeApp(rig, first.app);

    for (let n = 6; n <= 10; n++) await rig.client.publish(subject, { n }, { msgId: `e-${n}` });
    expect((await consumerState(rig, durable)).pending).toBe(5);

    const second = await startApp(rig, [controllerFor('second')]);
    expect(second.server.boundConsumers()[0]?.durable).toBe(durable);
    await waitSettled(rig, durable, 10);

    expect(seen.filter((d) => d.instance === 'first').map((d) => d.payload)).toEqual([1, 2, 3, 4, 5].map((n) => ({ n })));
    expect(seen.filter((d) => d.instance === 'second').map((d) => d.payload)).toEqual([6, 7, 8, 9, 10].map((n) => ({ n })));
    expect(seen.every((d) => d.deliveryCount === 1)).toBe(true);
  });

  it('loses nothing and applies each key once when publishes repeat and handlers crash on first deliveries', async () => {
    const subject = `${rig.prefix}.cmd.apply`;
    const keys = Array.from({ length: 24 }, (_, i) => `k-${i}`);

    /** The side effect, idempotent by key: in production a unique key in Postgres or the log. */
    @Injectable()
    class Ledger {
      readonly applied = new Map<string, number>();
      readonly attempts = new Map<string, number>();
    }
    const ledger = new Ledger();

    @Controller()
    class ApplyHandler {
      constructor(private readonly ledger: Ledger) {}

      @EventPattern<string>(subject, busOptions({ concurrency: 4, maxDeliver: 5 }))
      async apply(@Payload() payload: { key: string; index: number }, @Ctx() ctx: JetStreamContext): Promise<void> {
        const attempt = (this.ledger.attempts.get(payload.key) ?? 0) + 1;
        this.ledger.attempts.set(payload.key, attempt);
        // A crash before the effect, on the first delivery of every fourth key.
        if (payload.index % 4 === 0 && ctx.deliveryCount === 1) throw new WritError('CELL_CRASHED', 'crashed before the effect');
        if (!this.ledger.applied.has(payload.key)) this.ledger.applied.set(payload.key, 0);
        else return; // already applied: a redelivery or a duplicate the dedupe window missed
        this.ledger.applied.set(payload.key, 1);
        // A crash after the effect but before the ack, on the first delivery of the next key in four.
        if (payload.index % 4 === 1 && ctx.deliveryCount === 1) throw new WritError('CELL_CRASHED', 'crashed after the effect');
      }
    }

    const { server } = await startApp(rig, [ApplyHandler], {}, [{ provide: Ledger, useValue: ledger }]);
    const durable = server.boundConsumers()[0]?.durable ?? '';

    const acks = [];
    for (const [index, key] of keys.entries()) acks.push(await rig.client.publish(subject, { key, index }, { msgId: key }));
    // Retried publishes inside the duplicate window: JetStream drops them.
    const retried = await Promise.all(keys.slice(0, 6).map((key, index) => rig.client.publish(subject, { key, index }, { msgId: key })));
    expect(retried.every((ack) => ack.duplicate)).toBe(true);
    // Duplicates the window did not catch (another id for the same key): the handler's key absorbs them.
    for (const index of [2, 3, 7]) acks.push(await rig.client.publish(subject, { key: keys[index], index }, { msgId: `${keys[index]}-again` }));

    await waitSettled(rig, durable, Math.max(...acks.map((ack) => ack.seq)));

    expect([...ledger.applied.keys()].sort()).toEqual([...keys].sort());
    expect([...ledger.applied.values()].every((count) => count === 1)).toBe(true);
    // Every crash was retried, and nothing was dead-lettered.
    expect(ledger.attempts.get('k-0')).toBe(2);
    expect(ledger.attempts.get('k-1')).toBe(2);
    expect((await rig.jsm.streams.info(rig.dlqStream)).state.messages).toBe(0);
  });

  it('shares one durable between instances of a service (competing consumers): each message handled once', async () => {
    const subject = `${rig.prefix}.cmd.work`;
    const handled: Array<{ instance: string; n: unknown }> = [];
    const controllerFor = (instance: string) =>
      eventController(subject, (payload) => {
        handled.push({ instance, n: payload });
      });
    const a = await startApp(rig, [controllerFor('a')]);
    const b = await startApp(rig, [controllerFor('b')]);
    expect(b.server.boundConsumers()).toEqual(a.server.boundConsumers());

    for (let n = 1; n <= 30; n++) await rig.client.publish(subject, n, { msgId: `w-${n}` });
    await waitSettled(rig, a.server.boundConsumers()[0]?.durable ?? '', 30);

    expect(handled.map((h) => h.n).sort((x, y) => Number(x) - Number(y))).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it('given a serial consumer that pulls ahead, when a handler outlasts the ack wait, then the messages waiting behind it are neither redelivered nor reordered, and far fewer pulls than messages are made', async () => {
    // given one handler slot, eight messages pulled ahead, an ack wait of 1 s, and a first handler that takes 2.5 s
    const subject = `${rig.prefix}.evt.ordered`;
    const handled: Delivery[] = [];
    let slowDone = false;
    const { server } = await startApp(rig, [
      eventController(
        subject,
        async (payload, ctx) => {
          handled.push(record(payload, ctx));
          if (!slowDone) {
            slowDone = true;
            await new Promise((resolve) => setTimeout(resolve, 2_500));
          }
        },
        { concurrency: 1, pullBatch: 8, ackWaitMs: 1_000 },
      ),
    ]);
    const durable = server.boundConsumers()[0]?.durable ?? '';
    let pulls = 0;
    const pullWatch = rig.nc.subscribe(`$JS.API.CONSUMER.MSG.NEXT.${rig.stream}.${durable}`, { callback: () => void pulls++ });
    await rig.nc.flush();
    // when twenty messages arrive at once
    await Promise.all(Array.from({ length: 20 }, (_, index) => rig.client.publish(subject, index + 1, { msgId: `o-${index + 1}` })));
    await waitSettled(rig, durable, 20);
    // then each was handled once, in stream order, none delivered twice
    expect(handled.map((delivery) => delivery.seq)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    expect(handled.every((delivery) => delivery.deliveryCount === 1)).toBe(true);
    expect((await consumerState(rig, durable)).redelivered).toBe(0);
    // and the pulls were batches, not one per message
    pullWatch.unsubscribe();
    expect(pulls).toBeGreaterThan(0);
    expect(pulls).toBeLessThan(10);
  });

  it('drains gracefully: a handler in flight at shutdown completes and is acked; nothing new is taken', async () => {
    const subject = `${rig.prefix}.cmd.slow`;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const first: Delivery[] = [];
    // Two slots: while one handler runs, a pull for the second slot is open on the server.
    const { app, server } = await startApp(rig, [
      eventController(
        subject,
        async (payload, ctx) => {
          first.push(record(payload, ctx));
          started();
          await gate;
        },
        { concurrency: 2 },
      ),
    ]);
    const durable = server.boundConsumers()[0]?.durable ?? '';

    await rig.client.publish(subject, { n: 1 }, { msgId: 's-1' });
    await inFlight;
    rig.apps.splice(rig.apps.indexOf(app), 1);
    const closing = app.close();
    await firstValueFrom(server.status.pipe(filter((status) => status === 'draining')));
    await rig.client.publish(subject, { n: 2 }, { msgId: 's-2' });
    release();
    await closing;

    expect((await consumerState(rig, durable)).ackFloor).toBe(1);
    expect(first.map((d) => d.payload)).toEqual([{ n: 1 }]);

    // The message published during the drain went to the next instance at once (not after ack_wait), and only it.
    const next: Delivery[] = [];
    await startApp(rig, [eventController(subject, (payload, ctx) => void next.push(record(payload, ctx)))]);
    await waitSettled(rig, durable, 2);
    expect(next.map((d) => d.payload)).toEqual([{ n: 2 }]);
  });

  it('awaits a handler that returns an Observable before acking', async () => {
    const subject = `${rig.prefix}.cmd.observable`;
    const result = new Subject<string>();
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const { server } = await startApp(rig, [
      eventController(subject, () => {
        started();
        return result.asObservable();
      }),
    ]);
    const durable = server.boundConsumers()[0]?.durable ?? '';

    await rig.client.publish(subject, { n: 1 }, { msgId: 'o-1' });
    await inFlight;
    result.next('partial');
    // The handler has returned and emitted, but its stream is still open: the message is not acked.
    expect(await consumerState(rig, durable)).toMatchObject({ ackFloor: 0, ackPending: 1 });
    result.complete();
    await waitSettled(rig, durable, 1);
  });

  it('answers @MessagePattern requests over core NATS and maps failures to { code, message }', async () => {
    // Queries live outside any stream's subjects: a stream capturing them would answer with a PubAck.
    const sumSubject = `q_${rig.prefix}.sum`;
    const strictSubject = `q_${rig.prefix}.strict`;

    @Controller()
    class Queries {
      @MessagePattern(sumSubject)
      sum(@Payload() payload: { a: number; b: number }, @Ctx() ctx: RequestContext): { sum: number; subject: string } {
        return { sum: payload.a + payload.b, subject: ctx.subject };
      }

      @MessagePattern(strictSubject)
      strict(): never {
        throw new ContractError('Query', [{ path: 'id', code: 'invalid_type', message: 'Required; token=abc123secret' }]);
      }
    }
    await startApp(rig, [Queries]);

    await expect(rig.client.request(sumSubject, { a: 2, b: 3 })).resolves.toEqual({ sum: 5, subject: sumSubject });
    const failure = await rig.client.request(strictSubject, {}).catch((error: unknown) => error);
    expect(hasErrorCode(failure, 'CONTRACT_INVALID')).toBe(true);
    expect((failure as Error).message).not.toContain('abc123secret');
    const nobody = await rig.client.request(`q_${rig.prefix}.nobody`, {}, { timeoutMs: 500 }).catch((error: unknown) => error);
    expect(hasErrorCode(nobody, 'BUS_NO_RESPONDERS')).toBe(true);
  });

  it('refuses to listen when no stream captures a pattern or its dead-letter subject', async () => {
    const controller = eventController(`nostream_${rig.prefix}.cmd.x`, () => undefined);
    await expect(startApp(rig, [controller])).rejects.toMatchObject({ code: 'BUS_STREAM_NOT_FOUND', details: { role: 'pattern' } });
    const orphan = eventController(`${rig.prefix}.cmd.y`, () => undefined);
    await expect(startApp(rig, [orphan], { serviceName: uniqueName('nodlq') })).rejects.toMatchObject({
      code: 'BUS_STREAM_NOT_FOUND',
      details: { role: 'dead-letter subject' },
    });
  });

  it('maps publish failures to bus codes', async () => {
    const subject = `${rig.prefix}.evt.task.t1`;
    const first = await rig.client.publish(subject, { n: 1 }, { msgId: 'p-1', expectedLastSubjectSequence: 0 });
    await rig.client.publish(subject, { n: 2 }, { msgId: 'p-2', expectedLastSubjectSequence: first.seq });
    const conflict = await rig.client
      .publish(subject, { n: 3 }, { msgId: 'p-3', expectedLastSubjectSequence: first.seq })
      .catch((error: unknown) => error);
    expect(hasErrorCode(conflict, 'BUS_PUBLISH_SEQUENCE_CONFLICT')).toBe(true);
    const nowhere = await rig.client.publish(`nostream_${rig.prefix}.x`, {}, { msgId: 'p-4', timeoutMs: 1_000 }).catch((error: unknown) => error);
    expect(hasErrorCode(nowhere, 'BUS_STREAM_NOT_FOUND')).toBe(true);
  });
});
