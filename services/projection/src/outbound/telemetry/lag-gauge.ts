import { metrics, type ObservableCallback, type ObservableGauge } from '@opentelemetry/api';
import type { Logger } from '@writ/telemetry';
import type { ProjectionLag } from '../../application/readiness.js';

/**
 * The gauge `writ.projection.lag`: events of the log not yet folded into the
 * views (log's last stream sequence minus the checkpoint), measured when the
 * metrics are collected. Exported only when the process configures metrics
 * (`OTEL_METRICS_EXPORTER` or an OTLP endpoint, see `@writ/telemetry`).
 */
export class LagGauge {
  private readonly gauge: ObservableGauge;
  private readonly callback: ObservableCallback;

  constructor(measure: () => Promise<ProjectionLag>, logger: Logger) {
    this.gauge = metrics.getMeter('@writ/projection').createObservableGauge('writ.projection.lag', {
      description: 'Events of the log not yet folded into the projection (last stream seq minus checkpoint)',
      unit: '{event}',
    });
    this.callback = async (result) => {
      try {
        result.observe((await measure()).events_behind);
      } catch (error) {
        logger.warn({ err: error }, 'projection lag not measured');
      }
    };
    this.gauge.addCallback(this.callback);
  }

  stop(): void {
    this.gauge.removeCallback(this.callback);
  }
}
