import { WritError } from '@writ/contracts';

export type TelemetryErrorCode =
  /** `startTelemetry` was called while a previous handle is still running in this process. */
  | 'TELEMETRY_ALREADY_STARTED'
  /** The options or environment cannot configure an SDK (e.g. an empty service name). */
  | 'TELEMETRY_CONFIG_INVALID';

export class TelemetryError extends WritError<TelemetryErrorCode> {
  constructor(code: TelemetryErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'TelemetryError';
  }
}
