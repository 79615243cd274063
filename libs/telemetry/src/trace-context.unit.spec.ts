import { SpanKind, context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withConsumerSpan, withProducerSpan } from './messaging-spans.js';
import { resolveTraceExport, startTelemetry, type TelemetryHandle } from './start-telemetry.js';
import { activeTraceIds, extractTraceContext, injectTraceContext, type HeaderCarrier } from './trace-context.js';

/** Behaves like NATS MsgHdrs: `get` returns "" for a missing key. */
function natsLikeHeaders(): HeaderCarrier & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    get: (key) => map.get(key) ?? '',
    set: (key, value) => void map.set(key, value),
    keys: () => [...map.keys()],
  };
}

describe('resolveTraceExport', () => {
  it.each([
    [{}, false, 'none'],
    [{}, true, 'custom'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false, 'otlp'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, false, 'otlp'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false, 'none'],
    [{ OTEL_TRACES_EXPORTER: 'console' }, false, 'env'],
    [{ OTEL_SDK_DISABLED: 'true' }, true, 'disabled'],
  ] as const)('env %j, custom exporter %s → %s', (env, custom, want) => {
    expect(resolveTraceExport(env, custom)).toBe(want);
  });
});

describe('trace context over message headers', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: TelemetryHandle;
  beforeAll(() => {
    telemetry = startTelemetry({ serviceName: 'trace-test', spanExporter: exporter });
  });
  afterAll(async () => {
    await telemetry.shutdown();
  });
  beforeEach(async () => {
    await telemetry.forceFlush();
    exporter.reset();
  });

  it('refuses a second start while running', () => {
    expect(() => startTelemetry({ serviceName: 'again' })).toThrow(expect.objectContaining({ code: 'TELEMETRY_ALREADY_STARTED' }));
  });

  it('given an active span, when injected into NATS-like headers and extracted, then the remote parent is the same span', () => {
    const headers = natsLikeHeaders();
    const span = trace.getTracer('t').startSpan('origin');
    context.with(trace.setSpan(context.active(), span), () => injectTraceContext(headers));
    span.end();
    expect(headers.map.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const remote = trace.getSpanContext(extractTraceContext(headers));
    expect(remote?.traceId).toBe(span.spanContext().traceId);
    expect(remote?.spanId).toBe(span.spanContext().spanId);
    expect(remote?.isRemote).toBe(true);
  });

  it('given headers without trace context (or none), when extracted, then the base context is returned', () => {
    const base = context.active();
    expect(extractTraceContext(natsLikeHeaders(), base)).toBe(base);
    expect(extractTraceContext(undefined, base)).toBe(base);
    expect(trace.getSpanContext(extractTraceContext({ traceparent: 'garbage' }))).toBeUndefined();
  });

  it('given a publish in a PRODUCER span, when consumed in a CONSUMER span, then the consumer is the child, in the same trace', async () => {
    const headers: Record<string, string> = {};
    await withProducerSpan('writ.cmd.x.y', async () => {
      injectTraceContext(headers);
    });
    let seen: ReturnType<typeof activeTraceIds>;
    await withConsumerSpan(headers, 'writ.cmd.x.y', async () => {
      seen = activeTraceIds();
    });
    await telemetry.forceFlush();
    const [producer, consumer] = exporter.getFinishedSpans();
    expect(producer?.kind).toBe(SpanKind.PRODUCER);
    expect(consumer?.kind).toBe(SpanKind.CONSUMER);
    expect(consumer?.spanContext().traceId).toBe(producer?.spanContext().traceId);
    expect(consumer?.parentSpanContext?.spanId).toBe(producer?.spanContext().spanId);
    expect(seen?.span_id).toBe(consumer?.spanContext().spanId);
  });

  it('given a handler that throws, when run in a consumer span, then the span is marked failed and the error rethrown', async () => {
    await expect(
      withConsumerSpan({}, 'writ.cmd.x.y', async () => {
        throw Object.assign(new Error('boom password=pw1'), { code: 'X_BOOM' });
      }),
    ).rejects.toMatchObject({ code: 'X_BOOM' });
    await telemetry.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.status.code).toBe(2);
    expect(span?.status.message).not.toContain('pw1');
  });
});
