import { MeterProvider, MetricReader, type GaugeMetricData } from '@opentelemetry/sdk-metrics';
import { createLogger } from '@writ/telemetry';
import { describe, expect, it } from 'vitest';
import type { ProjectionLag } from '../../application/readiness.js';
import { LagGauge } from './lag-gauge.js';

/** A reader that collects on demand (no export loop). */
class CollectOnDemand extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function gauges(reader: MetricReader): Promise<Record<string, { value: number; unit: string }>> {
  const { resourceMetrics } = await reader.collect();
  const out: Record<string, { value: number; unit: string }> = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics as GaugeMetricData[]) {
      const point = metric.dataPoints.at(-1);
      if (point !== undefined) out[metric.descriptor.name] = { value: point.value, unit: metric.descriptor.unit };
    }
  }
  return out;
}

const quiet = createLogger('lag-gauge-test', { level: 'silent' });

describe('LagGauge', () => {
  it('given the views 42 events and 1.5 s behind the log, when metrics are collected, then both gauges say so', async () => {
    const reader = new CollectOnDemand();
    const provider = new MeterProvider({ readers: [reader] });
    const lag: ProjectionLag = { last_stream_seq: 142, checkpoint: 100, events_behind: 42, lag_ms: 1_500 };
    const gauge = new LagGauge(async () => lag, quiet, provider.getMeter('@writ/projection'));
    expect(await gauges(reader)).toEqual({ 'writ.projection.lag': { value: 42, unit: '{event}' }, 'writ.projection.lag_age': { value: 1_500, unit: 'ms' } });
    gauge.stop();
    await provider.shutdown();
  });

  it('given the lag cannot be measured, when collected, then no value is reported rather than a wrong one', async () => {
    const reader = new CollectOnDemand();
    const provider = new MeterProvider({ readers: [reader] });
    const gauge = new LagGauge(async () => Promise.reject(new Error('log down')), quiet, provider.getMeter('@writ/projection'));
    expect(await gauges(reader)).toEqual({});
    gauge.stop();
    await provider.shutdown();
  });
});
