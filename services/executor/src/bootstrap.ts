import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication, LogLevel } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import { jetstreamManager } from '@nats-io/jetstream';
import { HttpAuthGuard, withMetricsRoute } from '@writ/runtime/nest';
import { JetStreamServer, connectBus } from '@writ/bus';
import { createLogger, type Logger } from '@writ/telemetry';
import { CellLifecycle } from './application/cell-lifecycle.js';
import { ExecutorError } from './application/executor-errors.js';
import { RunActionHandler } from './application/run-action.handler.js';
import { ConsumerStallWatch, NatsArtifactStore, QuarantineLedger, countDeadLetters, natsCredentialExpiry, observeRuntimeMetrics } from '@writ/runtime';
import { DEFAULT_CONSUMER_STALL, type ExecutorConfig } from './config.js';
import { ExecutorModule, type ExecutorOptions } from './executor.module.js';
import { ExecutorCells } from './outbound/executor-cells.js';
import { ExecutorReadiness } from './outbound/readiness.js';
import { deriveHostId } from './outbound/host-identity.js';
import { observeCellPool } from './outbound/cell-pool.metrics.js';

export interface CreateExecutorAppOptions extends ExecutorOptions {
  /** Nest's own log levels (default: errors and warnings). */
  readonly nestLogLevels?: LogLevel[] | false;
  /** Logger of the bus transport (default `@writ/bus`). */
  readonly busLogger?: Logger;
}

/** A started executor: HTTP on `url`, the RunAction consumer bound. */
export interface ExecutorApp {
  readonly app: INestApplication;
  /** Base URL of the HTTP server (`/healthz`, `/readyz`). */
  readonly url: string;
  /** The config it runs with: `hostId` always set (WRIT_EXECUTOR_HOST_ID, else derived from the Docker engine id and the cells root). */
  readonly config: ExecutorConfig & { readonly hostId: string };
  readonly nc: NatsConnection;
  readonly bus: JetStreamServer;
  readonly handler: RunActionHandler;
  readonly readiness: ExecutorReadiness;
  readonly artifacts: NatsArtifactStore;
  readonly cells: ExecutorCells;
  /** The Lazarus cell lifecycle (tests sweep, checkpoint or resurrect through it directly). */
  readonly cellLifecycle: CellLifecycle;
  /** Graceful stop: the bus drains (in-flight actions finish and are recorded), HTTP closes, NATS drains. */
  close(): Promise<void>;
}

/**
 * Starts the executor in this process: connects to NATS, builds the module
 * (event log, bus streams, principal registry, artifact bucket, cells), binds
 * the RunAction consumer on the JetStream transport and listens on HTTP.
 * `main.ts` uses it with the environment's config; tests with their own
 * subject root, streams, bucket and port 0.
 */
export async function createExecutorApp(given: ExecutorConfig, options: CreateExecutorAppOptions = {}): Promise<ExecutorApp> {
  const config = { ...given, hostId: given.hostId ?? (await deriveHostId(given.cells.socketPath, given.cells.cellsRoot)) };
  let nc: NatsConnection;
  try {
    nc = await connectBus({ servers: config.natsUrl, name: config.executorId }, options.env, { waitForServer: true });
  } catch (cause) {
    throw new ExecutorError('EXECUTOR_NOT_READY', `cannot connect to NATS at ${config.natsUrl}; is nats-server (with -js) running?`, { cause });
  }
  let app: INestApplication | undefined;
  let stalls: ConsumerStallWatch | undefined;
  let stopMetrics: (() => void) | undefined;
  try {
    app = await NestFactory.create(withMetricsRoute(ExecutorModule.register(config, nc, options)), { logger: options.nestLogLevels ?? ['error', 'warn'], abortOnError: false });
    const busLogger = options.busLogger ?? createLogger('@writ/bus');
    const bus = new JetStreamServer({ serviceName: 'executor', connection: nc, logger: busLogger, env: options.env });
    // What its consumer skipped as junk (invariant 10) or dead-lettered: logged and counted like every service's.
    const quarantine = new QuarantineLedger(busLogger);
    bus.on('quarantine', (record) => quarantine.record(record, 'bus'));
    countDeadLetters(bus);
    // BusExceptionFilter is bound on the listener (@UseFilters): Nest fixes a hybrid microservice's
    // filters when it connects, and a global one would also catch (and never answer) HTTP errors.
    app.connectMicroservice({ strategy: bus });
    await app.startAllMicroservices();
    const readiness = app.get(ExecutorReadiness);
    readiness.attachBus(bus);
    // Its durables are sampled like every service's (WRIT_CONSUMER_STALL_*): a stalled one fails /readyz and feeds the consumer figures.
    const stallConfig = config.consumerStall ?? DEFAULT_CONSUMER_STALL;
    stalls = new ConsumerStallWatch(await jetstreamManager(nc), {
      stallAfterMs: stallConfig.afterMs,
      checkMs: stallConfig.checkMs,
      consumers: () => bus.boundConsumers(),
      logger: busLogger,
    });
    stalls.start();
    readiness.watchStalls(stalls);
    const watched = stalls;
    const stopRuntimeMetrics = observeRuntimeMetrics({
      service: 'executor',
      ready: async () => (await readiness.check()).ready,
      consumers: () => watched.readings(),
      quarantined: () => quarantine.counts(),
      keys: () => natsCredentialExpiry(options.env),
    });
    const stopCellMetrics = observeCellPool(app.get(ExecutorCells));
    stopMetrics = () => {
      stopRuntimeMetrics();
      stopCellMetrics();
    };
    // Health, readiness (and the JWKS) are its only routes, all public; any other answers 401 (docs/security.md).
    app.useGlobalGuards(new HttpAuthGuard(app.get(Reflector), undefined));
    await app.listen(config.httpPort, config.httpHost);
    const started = app;
    return {
      app: started,
      url: (await started.getUrl()).replace('[::1]', '127.0.0.1'),
      config,
      nc,
      bus,
      handler: started.get(RunActionHandler),
      readiness,
      artifacts: started.get(NatsArtifactStore),
      cells: started.get(ExecutorCells),
      cellLifecycle: started.get(CellLifecycle),
      close: async () => {
        stopMetrics?.();
        await watched.stop();
        await started.close();
      },
    };
  } catch (error) {
    stopMetrics?.();
    await stalls?.stop();
    await app?.close().catch(() => undefined);
    if (!nc.isClosed()) await nc.drain().catch(() => undefined);
    throw error;
  }
}
