import { metrics, type BatchObservableCallback, type Meter, type ObservableGauge } from '@opentelemetry/api';
import type { Logger } from '@writ/telemetry';
import type { ProjectionLag } from '../../application/readiness.js';

/**
 * The projection lag as two OpenTelemetry gauges, measured once per
 * collection (the meter of `@writ/telemetry`'s SDK: exported only when the
 * process configures metrics, `OTEL_METRICS_EXPORTER` or an OTLP endpoint):
 * - `writ.projection.lag` {event}: the log's last stream sequence minus the checkpoint;
 * - `writ.projection.lag_age` ms: how long the oldest event not yet folded has
 *   waited in the log (0 when caught up).
 * A measurement that fails is logged and skipped (no value rather than a wrong one).
 */
export class LagGauge {
  private readonly events: ObservableGauge;
  private readonly age: ObservableGauge;
  private readonly callback: BatchObservableCallback;

  constructor(
    measure: () => Promise<ProjectionLag>,
    logger: Logger,
    private readonly meter: Meter = metrics.getMeter('@writ/projection'),
  ) {
    this.events = meter.createObservableGauge('writ.projection.lag', {
      description: 'Events of the log not yet folded into the projection (last stream seq minus checkpoint)',
      unit: '{event}',
    });
    this.age = meter.createObservableGauge('writ.projection.lag_age', {
      description: 'How long the oldest event not yet folded into the projection has waited in the log',
      unit: 'ms',
    });
    this.callback = async (result) => {
      try {
        const lag = await measure();
        result.observe(this.events, lag.events_behind);
        result.observe(this.age, lag.lag_ms);
      } catch (error) {
        logger.warn({ err: error }, 'projection lag not measured');
      }
    };
    meter.addBatchObservableCallback(this.callback, [this.events, this.age]);
  }

  stop(): void {
    this.meter.removeBatchObservableCallback(this.callback, [this.events, this.age]);
  }
}
