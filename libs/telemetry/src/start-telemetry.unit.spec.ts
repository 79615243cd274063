import { context, isSpanContextValid, trace } from '@opentelemetry/api';
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

  it('rejects an empty service name', () => {
    expect(() => startTelemetry({ serviceName: ' ' })).toThrow(expect.objectContaining({ code: 'TELEMETRY_CONFIG_INVALID' }));
  });
});
