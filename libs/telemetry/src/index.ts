export {
  startTelemetry,
  resolveTraceExport,
  runningPrometheus,
  type PrometheusMetrics,
  type TelemetryHandle,
  type TelemetryOptions,
  type TraceExportMode,
} from './start-telemetry.js';
export {
  METRICS,
  METRIC_CATALOGUE,
  WRIT_SERVICE_NAMES,
  exportedBy,
  seriesNames,
  type MetricDefinition,
  type MetricKey,
  type MetricKind,
  type WritServiceName,
} from './metrics/metric-catalogue.js';
export { prometheusEnabled } from './metrics/metric-readers.js';
export { WRIT_METER, WritMetrics, writMetrics, type CounterOptions, type MetricLabels, type MetricObserver, type WritCounter, type WritHistogram } from './metrics/writ-metrics.js';
export {
  activeTraceIds,
  extractTraceContext,
  injectTraceContext,
  type HeaderCarrier,
  type TraceCarrier,
  type TraceIds,
} from './trace-context.js';
export {
  MessagingAttributes,
  SERVICE_ATTRIBUTE,
  markSpanFailed,
  serviceTracer,
  withConsumerSpan,
  withProducerSpan,
  type ConsumerSpanOptions,
  type MessagingSpanOptions,
} from './messaging-spans.js';
export { createLogger, type Logger, type LoggerOptions } from './logger.js';
export { REDACTED, isSecretKey, redactSecrets, redactString } from './redaction.js';
export { TelemetryError, type TelemetryErrorCode } from './telemetry-errors.js';
