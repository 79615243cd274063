import { context, isSpanContextValid, metrics, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { startTelemetry, type TelemetryHandle } from './start-telemetry.js';
import { extractTraceContext, injectTraceContext } from './trace-context.js';

describe('startTelemetry', () => {
  let handle: TelemetryHandle | undefined;
  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
  });

  it('given no exporter configured, exports nothing but still mints ids and propagates them', () => {
    handle = startTelemetry({ serviceName: 'no-exporter' });
    expect(handle.traceExport).toBe('none');
    const span = trace.getTracer('t').startSpan('work');
    expect(isSpanContextValid(span.spanContext())).toBe(true);
    const headers: Record<string, string> = {};
    context.with(trace.setSpan(context.active(), span), () => injectTraceContext(headers));
    span.end();
    expect(trace.getSpanContext(extractTraceContext(headers))?.traceId).toBe(span.spanContext().traceId);
  });

  it('given a shut-down handle, can start again (globals were released)', async () => {
    const first = startTelemetry({ serviceName: 'first' });
    await first.shutdown();
    await first.shutdown(); // idempotent
    handle = startTelemetry({ serviceName: 'second' });
    expect(isSpanContextValid(trace.getTracer('t').startSpan('x').spanContext())).toBe(true);
  });

  it('given OTEL_TRACES_EXPORTER, then the SDK that builds exporters from OTEL_* runs (loaded only then) and honours it, and /metrics is served', async () => {
    process.env['OTEL_TRACES_EXPORTER'] = 'none';
    try {
      handle = startTelemetry({ serviceName: 'env-exporter' });
    } finally {
      delete process.env['OTEL_TRACES_EXPORTER'];
    }
    expect(handle.traceExport).toBe('env');
    // `none` as the SDK reads it: no tracer provider at all, so a span is not recorded (the `none` mode's own provider would mint ids).
    expect(isSpanContextValid(trace.getTracer('t').startSpan('x').spanContext())).toBe(false);
    expect(await handle.prometheus?.scrape()).toBeDefined();
  });

  it('given no exporter, then every metric series names the service (the resource its providers were given)', async () => {
    handle = startTelemetry({ serviceName: 'resource-test', resourceAttributes: { 'writ.services': 'a,b' } });
    metrics.getMeter('m').createCounter('writ_probe_total').add(1);
    expect(await handle.prometheus?.scrape()).toMatch(/^writ_probe_total\{service_name="resource-test"\} 1$/m);
  });

  it('rejects an empty service name', () => {
    expect(() => startTelemetry({ serviceName: ' ' })).toThrow(expect.objectContaining({ code: 'TELEMETRY_CONFIG_INVALID' }));
  });
});
