import 'reflect-metadata';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { SpanKind, trace, type SpanContext } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { WritError } from '@writ/contracts';
import { createLogger, startTelemetry, type TelemetryHandle } from '@writ/telemetry';
import { connectTestNats, deleteStreams, NATS_URL, uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BusClient } from './bus-client.js';
import type { JetStreamContext } from './bus-context.js';
import { BusExceptionFilter } from './bus-exception.filter.js';
import { busOptions } from './bus-options.js';
import { JetStreamServer } from './jetstream-server.js';

/**
 * One action is one trace across services: the publisher's span, the
 * PRODUCER span of the publish, the CONSUMER span around the handler (and a
 * dead letter written from it) share one trace id, each the child of the last.
 */
describe('trace context across the bus (real NestJS app, real NATS 2.9)', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: TelemetryHandle;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let client: BusClient;
  let app: INestMicroservice;
  const prefix = uniqueName('trc');
  const service = uniqueName('svc');
  const stream = uniqueName('TRC');
  const dlqStream = uniqueName('DLQ');
  const eventSubject = `${prefix}.evt.happened`;
  const failingSubject = `${prefix}.cmd.fails`;
  const querySubject = `q_${prefix}.lookup`;
  const seenInHandler: Array<{ subject: string; span: SpanContext | undefined }> = [];
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    telemetry = startTelemetry({ serviceName: 'bus-tracing-test', spanExporter: exporter });
    nc = await connectTestNats('bus-tracing');
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
    await jsm.streams.add({ name: dlqStream, subjects: [`${prefix}_dlq.${service}.>`] });
    client = new BusClient(nc);
    const log = createLogger('handler', { destination: { write: (line: string) => void logLines.push(JSON.parse(line)) } });

    @Controller()
    class Handlers {
      @EventPattern<string>(eventSubject)
      happened(@Payload() _payload: unknown, @Ctx() ctx: JetStreamContext): void {
        seenInHandler.push({ subject: ctx.subject, span: trace.getActiveSpan()?.spanContext() });
        log.info('handling');
      }

      @EventPattern<string>(failingSubject, busOptions({ maxDeliver: 1 }))
      fails(): never {
        throw new WritError('UPSTREAM_UNAVAILABLE', 'down');
      }

      @MessagePattern(querySubject)
      lookup(@Ctx() ctx: { subject: string }): { ok: true } {
        seenInHandler.push({ subject: ctx.subject, span: trace.getActiveSpan()?.spanContext() });
        return { ok: true };
      }
    }

    const moduleRef = await Test.createTestingModule({ controllers: [Handlers] }).compile();
    app = moduleRef.createNestMicroservice({
      strategy: new JetStreamServer({ serviceName: service, servers: NATS_URL, deadLetterPrefix: `${prefix}_dlq`, pullExpiresMs: 1_000, logger: createLogger('bus', { level: 'silent' }) }),
      logger: false,
    });
    app.useGlobalFilters(new BusExceptionFilter());
    await app.listen();
  });

  afterAll(async () => {
    await app?.close();
    await client?.close();
    await deleteStreams(nc, stream, dlqStream);
    await nc?.close();
    await telemetry?.shutdown();
  });

  async function finishedSpans(): Promise<ReadableSpan[]> {
    await telemetry.forceFlush();
    return exporter.getFinishedSpans();
  }

  /** Runs `fn` in an "agent action" span, as a caller at the edge would, and returns that span's context. */
  async function inAction(fn: () => Promise<unknown>): Promise<SpanContext> {
    return trace.getTracer('test').startActiveSpan('agent.action', async (span) => {
      await fn();
      span.end();
      return span.spanContext();
    });
  }

  it('given a publish inside an action, the handler runs in a CONSUMER span of the same trace, child of the PRODUCER span', async () => {
    const action = await inAction(() => client.publish(eventSubject, { x: 1 }, { msgId: 'evt-1' }));
    const seen = await waitFor(() => seenInHandler.find((s) => s.subject === eventSubject), { what: 'the handler' });

    expect(seen.span?.traceId).toBe(action.traceId);
    const spans = await waitFor(async () => {
      const all = await finishedSpans();
      return all.some((s) => s.kind === SpanKind.CONSUMER && s.spanContext().spanId === seen.span?.spanId) ? all : undefined;
    });
    const producer = spans.find((s) => s.kind === SpanKind.PRODUCER && s.name === `publish ${eventSubject}`);
    const consumer = spans.find((s) => s.spanContext().spanId === seen.span?.spanId);
    expect(producer?.parentSpanContext?.spanId).toBe(action.spanId);
    expect(consumer?.kind).toBe(SpanKind.CONSUMER);
    expect(consumer?.parentSpanContext?.spanId).toBe(producer?.spanContext().spanId);
    expect(consumer?.attributes['writ.bus.outcome']).toBe('ack');
    // Logs written in the handler carry the same ids.
    expect(logLines.at(-1)).toMatchObject({ trace_id: action.traceId, span_id: seen.span?.spanId });
  });

  it('given a request inside an action, the responder runs in a SERVER span of the same trace', async () => {
    const action = await inAction(() => client.request(querySubject, {}));
    const seen = seenInHandler.find((s) => s.subject === querySubject);
    expect(seen?.span?.traceId).toBe(action.traceId);
    const spans = await finishedSpans();
    expect(spans.find((s) => s.spanContext().spanId === seen?.span?.spanId)?.kind).toBe(SpanKind.SERVER);
  });

  it('given a failure that is dead-lettered, the letter carries the trace and the span is marked failed', async () => {
    const action = await inAction(() => client.publish(failingSubject, { y: 1 }, { msgId: 'fail-1' }));
    await waitFor(async () => ((await jsm.streams.info(dlqStream)).state.messages === 1 ? true : undefined), { what: 'the dead letter' });
    const letter = await jsm.streams.getMessage(dlqStream, { seq: 1 });

    expect(letter?.header.get('traceparent').split('-')[1]).toBe(action.traceId);
    const spans = await waitFor(async () => {
      const all = await finishedSpans();
      return all.some((s) => s.name === `process ${failingSubject}`) ? all : undefined;
    });
    const consumer = spans.find((s) => s.name === `process ${failingSubject}`);
    expect(consumer?.status.code).toBe(2);
    expect(consumer?.attributes['writ.bus.outcome']).toBe('dead-letter');
  });
});
