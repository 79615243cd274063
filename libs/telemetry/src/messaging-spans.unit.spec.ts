import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVICE_ATTRIBUTE, serviceTracer, withConsumerSpan } from './messaging-spans.js';
import { startTelemetry, type TelemetryHandle } from './start-telemetry.js';

describe('serviceTracer: spans name their service where several share one process (and so one service.name)', () => {
  let handle: TelemetryHandle | undefined;
  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
  });

  it('given a service tracer, when a consumer span and an active span are made with it, then both carry writ.service and keep their own attributes', async () => {
    const exporter = new InMemorySpanExporter();
    handle = startTelemetry({ serviceName: 'writ', spanExporter: exporter });
    const tracer = serviceTracer(trace.getTracer('@writ/bus'), 'policy');
    await withConsumerSpan(undefined, 'writ.cmd.policy.evaluate', async () => undefined, { tracer, attributes: { 'messaging.consumer.group.name': 'policy' } });
    tracer.startActiveSpan('work', (span) => span.end());
    await handle.forceFlush();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.attributes[SERVICE_ATTRIBUTE]])).toEqual([
      ['process writ.cmd.policy.evaluate', 'policy'],
      ['work', 'policy'],
    ]);
    expect(spans[0]?.attributes['messaging.consumer.group.name']).toBe('policy');
    expect(spans[0]?.resource.attributes['service.name']).toBe('writ');
  });
});
