import { MeterProvider, MetricReader, type GaugeMetricData } from '@opentelemetry/sdk-metrics';
import { createLogger, writMetrics } from '@writ/telemetry';
import { describe, expect, it } from 'vitest';
import type { ProjectionLag } from '../../application/readiness.js';
import { ProjectionGauges } from './projection-gauges.js';

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

const quiet = createLogger('projection-gauges-test', { level: 'silent' });
const NOW = Date.parse('2026-11-29T02:00:00Z');

describe('ProjectionGauges', () => {
  it('given the views 42 events and 1.5 s behind the log and two approvals waiting, the oldest for 90 s, when collected, then the gauges say so', async () => {
    const reader = new CollectOnDemand();
    const provider = new MeterProvider({ readers: [reader] });
    const lag: ProjectionLag = { last_stream_seq: 142, checkpoint: 100, events_behind: 42, lag_ms: 1_500 };
    const gauge = new ProjectionGauges(
      { lag: async () => lag, pendingApprovals: async () => ({ count: 2, oldestRequestedAt: new Date(NOW - 90_000) }), now: () => NOW },
      quiet,
      writMetrics(provider.getMeter('@writ/projection')),
    );
    expect(await gauges(reader)).toEqual({
      writ_projection_lag_events: { value: 42, unit: '{event}' },
      writ_projection_lag_seconds: { value: 1.5, unit: 's' },
      writ_approvals_pending: { value: 2, unit: '{approval}' },
      writ_approvals_pending_oldest_age_seconds: { value: 90, unit: 's' },
    });
    gauge.stop();
    await provider.shutdown();
  });

  it('given the lag cannot be measured, when collected, then no lag is reported rather than a wrong one, and none waiting reads as age 0', async () => {
    const reader = new CollectOnDemand();
    const provider = new MeterProvider({ readers: [reader] });
    const gauge = new ProjectionGauges(
      { lag: async () => Promise.reject(new Error('log down')), pendingApprovals: async () => ({ count: 0, oldestRequestedAt: null }) },
      quiet,
      writMetrics(provider.getMeter('@writ/projection')),
    );
    expect(await gauges(reader)).toEqual({ writ_approvals_pending: { value: 0, unit: '{approval}' }, writ_approvals_pending_oldest_age_seconds: { value: 0, unit: 's' } });
    gauge.stop();
    await provider.shutdown();
  });
});
