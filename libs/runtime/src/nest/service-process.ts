import type { INestApplication } from '@nestjs/common';
import { createLogger, startTelemetry, type TelemetryHandle, type TelemetryOptions } from '@writ/telemetry';

/** A process environment (variable → value), as `process.env` or one service's share of it. */
export type ServiceProcessEnvironment = Readonly<Record<string, string | undefined>>;

/** What a service's start is handed beside its config. */
export interface ServiceStartContext {
  /** Must run last when the service stops (alone in its process it flushes telemetry). */
  readonly onShutdown: () => Promise<void>;
  /**
   * The service's own environment: its bus credential, seal key directory, enrollment and
   * authorship setting are read from it, never from `process.env` directly, so services
   * sharing one process (apps/serve) each connect as themselves.
   */
  readonly env: ServiceProcessEnvironment;
}

/** A started service, as its `create<Name>App` returns it. */
export interface StartedService {
  readonly app: INestApplication;
  /** Graceful: the bus drains, HTTP closes, NATS drains; idempotent. */
  close(): Promise<void>;
}

/**
 * One Writ service as a process runs it: how it reads its configuration from an
 * environment and how it starts. Each service's `main.ts` exports its own; the
 * service's process entry runs it alone (`runServiceProcess`), apps/serve runs the
 * seven in one process (`startServices`).
 */
export interface ServiceDefinition<C = unknown> {
  /** The service's name: its logger's, its HTTP port's and its credential's (`<creds dir>/<name>.creds`). */
  readonly serviceName: string;
  /** OpenTelemetry's `service.name` (and version) when the service runs alone. */
  readonly telemetry: TelemetryOptions;
  /** Reads and validates the configuration from `env` (fails fast: RUNTIME_CONFIG_INVALID). */
  config(env: ServiceProcessEnvironment): C;
  start(config: C, context: ServiceStartContext): Promise<StartedService>;
}

/** How long a failed start may take to release what keeps the process alive before it is ended. */
const EXIT_GRACE_MS = 5_000;

/**
 * The body of a service's `main.ts`: configuration (fail fast), telemetry,
 * the app; SIGTERM / SIGINT close it gracefully (the bus drains, HTTP
 * closes, NATS drains, telemetry flushes), then the process ends. A failed
 * start is logged with its code and exits 1.
 */
export async function runServiceProcess<C>(definition: ServiceDefinition<C>, env: ServiceProcessEnvironment = process.env): Promise<void> {
  const logger = createLogger(definition.serviceName);
  let telemetry: TelemetryHandle | undefined;
  try {
    const config = definition.config(env);
    const handle = startTelemetry(definition.telemetry);
    telemetry = handle;
    const service = await definition.start(config, { onShutdown: () => handle.shutdown(), env });
    service.app.enableShutdownHooks();
  } catch (error) {
    logger.fatal({ err: error }, `${definition.serviceName} failed to start`);
    await telemetry?.shutdown().catch(() => undefined);
    exitSoon();
  }
}

/** Ends the process with 1 once what keeps it alive is released, or after EXIT_GRACE_MS at the latest. */
export function exitSoon(): void {
  process.exitCode = 1;
  setTimeout(() => process.exit(1), EXIT_GRACE_MS).unref();
}
