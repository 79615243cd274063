import type { INestApplication } from '@nestjs/common';
import { createLogger, startTelemetry, type TelemetryHandle, type TelemetryOptions } from '@writ/telemetry';

export interface ServiceProcessOptions<C> {
  /** The logger's name for start-up failures. */
  readonly serviceName: string;
  /** OpenTelemetry's `service.name` (and version) of this process. */
  readonly telemetry: TelemetryOptions;
  /** Reads and validates the configuration (fails fast: RUNTIME_CONFIG_INVALID). */
  readonly config: () => C;
  /** Starts the app; `onShutdown` must run last when it stops (it flushes telemetry). */
  readonly start: (config: C, onShutdown: () => Promise<void>) => Promise<{ readonly app: INestApplication }>;
}

/** How long a failed start may take to release what keeps the process alive before it is ended. */
const EXIT_GRACE_MS = 5_000;

/**
 * The body of a service's `main.ts`: configuration (fail fast), telemetry,
 * the app; SIGTERM / SIGINT close it gracefully (the bus drains, HTTP
 * closes, NATS drains, telemetry flushes), then the process ends. A failed
 * start is logged with its code and exits 1.
 */
export async function runServiceProcess<C>(options: ServiceProcessOptions<C>): Promise<void> {
  const logger = createLogger(options.serviceName);
  let telemetry: TelemetryHandle | undefined;
  try {
    const config = options.config();
    const handle = startTelemetry(options.telemetry);
    telemetry = handle;
    const service = await options.start(config, () => handle.shutdown());
    service.app.enableShutdownHooks();
  } catch (error) {
    logger.fatal({ err: error }, `${options.serviceName} failed to start`);
    await telemetry?.shutdown().catch(() => undefined);
    process.exitCode = 1;
    setTimeout(() => process.exit(1), EXIT_GRACE_MS).unref();
  }
}
