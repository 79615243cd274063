export { startTelemetry, resolveTraceExport, type TelemetryHandle, type TelemetryOptions, type TraceExportMode } from './start-telemetry.js';
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
  markSpanFailed,
  withConsumerSpan,
  withProducerSpan,
  type ConsumerSpanOptions,
  type MessagingSpanOptions,
} from './messaging-spans.js';
export { createLogger, type Logger, type LoggerOptions } from './logger.js';
export { REDACTED, isSecretKey, redactSecrets, redactString } from './redaction.js';
export { TelemetryError, type TelemetryErrorCode } from './telemetry-errors.js';
