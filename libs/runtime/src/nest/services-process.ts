import { createLogger, startTelemetry, type Logger, type TelemetryHandle, type TelemetryOptions } from '@writ/telemetry';
import { sharedProcessEnvironments } from '../shared-process-environment.js';
import { exitSoon, type ServiceDefinition, type ServiceProcessEnvironment, type StartedService } from './service-process.js';

/** Services started in one process, in start order. */
export interface SharedProcessServices {
  readonly services: readonly { readonly name: string; readonly service: StartedService }[];
  /** Closes every service at once, each draining as it would alone; idempotent, never rejects. */
  close(): Promise<void>;
}

export interface StartServicesOptions {
  /** Logs each service's start, failure and stop (default `createLogger('writ-serve')`). */
  readonly logger?: Logger;
}

/**
 * Starts `definitions` one after the other in this process, each with its own share of
 * `env` (`sharedProcessEnvironments`: its own bus credential, HTTP port and config), so
 * each connects to the bus as itself, exactly as it would alone. The first that fails
 * to start (its config, its connection, its app) fails the whole start: those already
 * started are closed again and its error is thrown as it came (its code kept), with
 * `service` naming it in the log.
 */
export async function startServices(definitions: readonly ServiceDefinition<unknown>[], env: ServiceProcessEnvironment, options: StartServicesOptions = {}): Promise<SharedProcessServices> {
  const logger = options.logger ?? createLogger('writ-serve');
  const environments = sharedProcessEnvironments(definitions.map((definition) => definition.serviceName), env);
  const started: { name: string; service: StartedService }[] = [];
  let closing: Promise<void> | undefined;
  const close = () => {
    // All at once, as a supervisor stops separate processes: each drains its own in-flight work and none
    // waits on another (they meet only on the bus, which keeps what one has not consumed yet). One after
    // the other, every service's last pull wait (WRIT_BUS_PULL_EXPIRES_MS, 5 s) would add up past a
    // supervisor's stop timeout (Docker's 10 s): measured 25 s for the seven.
    closing ??= Promise.all(
      started.map(async ({ name, service }) => {
        try {
          await service.close();
          logger.info({ service: name }, 'service stopped');
        } catch (error) {
          logger.error({ err: error, service: name }, 'service did not stop cleanly');
        }
      }),
    ).then(() => undefined);
    return closing;
  };
  for (const definition of definitions) {
    const name = definition.serviceName;
    const own = environments.get(name) as Record<string, string>;
    try {
      const config = definition.config(own);
      // Telemetry is the process's (`runServicesProcess` flushes it once every service closed).
      const service = await definition.start(config, { onShutdown: async () => undefined, env: own });
      started.push({ name, service });
      logger.info({ service: name, http_port: own['WRIT_HTTP_PORT'] }, 'service started');
    } catch (error) {
      logger.fatal({ err: error, service: name }, `${name} failed to start: stopping the services already started`);
      await close();
      throw error;
    }
  }
  return { services: started, close };
}

export interface ServicesProcessOptions {
  /** The process's one OpenTelemetry SDK: `service.name` and the resource (spans name their service in `writ.service`). */
  readonly telemetry: TelemetryOptions;
  readonly logger?: Logger;
}

/**
 * The body of a process that runs several services (apps/serve): one telemetry SDK,
 * the services started in order (`startServices`); SIGTERM / SIGINT close them all at
 * once, each draining as it would alone, then the process ends 0.
 *
 * Failures end the whole process, non-zero, so its supervisor (scripts/writ-service.sh,
 * systemd, Compose, the kubelet) starts all of it again; a half-alive process, some
 * services up and one gone, is never left running:
 * - a service that fails to start: the others close, exit 1;
 * - an exception or a rejection nothing handled, in any service: logged, exit 1 at once
 *   (nothing drains: what was in flight is redelivered to the next start, as after a crash
 *   of a service alone).
 */
export async function runServicesProcess(definitions: readonly ServiceDefinition<unknown>[], options: ServicesProcessOptions, env: ServiceProcessEnvironment = process.env): Promise<void> {
  const logger = options.logger ?? createLogger('writ-serve');
  const crash = (error: unknown, origin: string) => {
    logger.fatal({ err: error, origin }, 'a service crashed: the process ends so that its supervisor starts every service again');
    process.exit(1);
  };
  process.on('uncaughtException', (error) => crash(error, 'uncaughtException'));
  process.on('unhandledRejection', (reason) => crash(reason, 'unhandledRejection'));
  let telemetry: TelemetryHandle | undefined;
  const starting = (async () => {
    telemetry = startTelemetry(options.telemetry);
    return startServices(definitions, env, { logger });
  })();
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping every service');
    void (async () => {
      // A signal during the start: the services started by then drain like the others (a failed start exits on its own).
      const running = await starting.catch(() => undefined);
      if (running === undefined) return;
      await running.close();
      await telemetry?.shutdown().catch(() => undefined);
      process.exit(0);
    })();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    const running = await starting;
    logger.info({ services: running.services.map(({ name }) => name) }, 'every service started');
  } catch (error) {
    logger.fatal({ err: error }, 'the services failed to start');
    await telemetry?.shutdown().catch(() => undefined);
    exitSoon();
  }
}
