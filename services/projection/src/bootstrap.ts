import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { hasErrorCode, httpAudience } from '@writ/contracts';
import { EventStore } from '@writ/eventstore';
import { ServiceRuntime, connectNats, httpPrincipals, loadTrustAnchor, serviceAuthorship, verifyHttpBearer } from '@writ/runtime';
import { FAILED_START_CLEANUP_MS, settledWithin, startServiceApp } from '@writ/runtime/nest';
import { createLogger, type Logger } from '@writ/telemetry';
import type { DataSource } from 'typeorm';
import { ProjectionError } from './application/projection-errors.js';
import { Projector } from './application/projector.js';
import type { WiringProbe } from './application/readiness.js';
import { rebuildProjection, type RebuildReport } from './application/rebuild.js';
import { SERVICE_NAME, type ProjectionConfig } from './config.js';
import { accessTokenFromQuery } from './inbound/http/access-token.js';
import { consoleHandler } from './inbound/http/console-static.js';
import { HttpErrorFilter } from './inbound/http/http-error.filter.js';
import { dropProjectionSchema, openProjectionDatabase, schemaExists } from './outbound/database/projection-database.js';
import { TypeormProjectionStore } from './outbound/database/typeorm-projection-store.js';
import { JetStreamEventLog } from './outbound/nats/jetstream-event-log.js';
import { NestPinoLogger } from './outbound/telemetry/nest-logger.js';
import { ProjectionModule } from './projection.module.js';

/**
 * The largest body the API parses. Above a signed ActionRequest's 256 KiB on
 * purpose: ingress records an oversized request before refusing it
 * (INGRESS_TOO_LARGE, invariant 1), so it is forwarded; only what NATS cannot
 * carry (1 MiB) is refused here.
 */
const BODY_LIMIT = '960kb';

export interface ProjectionApp {
  readonly app: INestApplication;
  /** Base URL of the HTTP API, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  readonly config: ProjectionConfig;
  /** Graceful stop: HTTP closes, the consumer drains, Postgres and NATS are released. */
  close(): Promise<void>;
}

export interface ProjectionAppOptions {
  readonly logger?: Logger;
  /** Runs last at shutdown (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
  /** The service's own environment: its bus credential, authorship, seal keys, enrollment (default `process.env`; apps/serve gives each service its own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** NATS unreachable is this service's PROJECTION_NATS_UNAVAILABLE (the URL's credentials never shown). */
function natsUnavailable(error: unknown): never {
  if (hasErrorCode(error, 'RUNTIME_NATS_UNAVAILABLE')) throw new ProjectionError('PROJECTION_NATS_UNAVAILABLE', error.message, { cause: error });
  throw error;
}

async function connectProjectionNats(config: ProjectionConfig): Promise<NatsConnection> {
  return connectNats(config.nats.url, SERVICE_NAME, { waitForServer: true }).catch(natsUnavailable);
}

/**
 * Starts the projection service in-process: NATS, the streams, Postgres
 * (migrations run), the HTTP API, a catch-up from the log, then the durable
 * consumer. Tests call it with test stream names and subject root; `main.ts`
 * with the environment's config.
 */
export async function createProjectionApp(config: ProjectionConfig, options: ProjectionAppOptions = {}): Promise<ProjectionApp> {
  const logger = options.logger ?? createLogger(SERVICE_NAME);
  // The event log, and the bus streams the consumer's dead letters need.
  const runtime = await ServiceRuntime.start({ serviceName: SERVICE_NAME, natsUrl: config.nats.url, subjectRoot: config.subjects.root, streams: config.streams, logger, env: options.env }).catch(
    natsUnavailable,
  );
  let dataSource: DataSource | undefined;
  try {
    dataSource = await openProjectionDatabase(config.pg);
    // Who calls the API: bearer tokens are verified against the principals and their active keys in the log.
    const anchor = config.trustAnchorFile === undefined ? undefined : await loadTrustAnchor(config.trustAnchorFile);
    const principals = httpPrincipals(await runtime.startPrincipalRegistry(), anchor);
    const audience = httpAudience(config.subjects.root);
    const consoleFiles = await consoleHandler(config.console, { audience }, logger);
    const wiring: WiringProbe = {
      // Before the bus starts ('not_started', 'connecting') the boot replay runs over the runtime's connection, which is up.
      natsConnected: () => !runtime.nc.isClosed() && ['connected', 'connecting', 'not_started'].includes(runtime.bus.status),
      streamsEnsured: () => true,
      boundConsumers: () => runtime.bus.durables(),
      stalledConsumers: () => runtime.stalls.stalled.map((consumer) => `${consumer.durable}: ${consumer.pending} message(s) waiting, no progress for ${Math.round(consumer.stuckMs / 1000)} s`),
    };
    const service = await startServiceApp({
      serviceName: SERVICE_NAME,
      runtime,
      module: ProjectionModule.register({ config, runtime, dataSource, wiring, logger, onShutdown: options.onShutdown }),
      http: config.http,
      logger,
      nestLogger: new NestPinoLogger(logger),
      bodyParser: false,
      httpAuth: () => (authorization) => verifyHttpBearer(authorization, { principals, audience, clock: () => new Date() }),
      configure: (app) => {
        // Before the guard: the change stream's `?access_token=` (browsers' EventSource sends no headers) becomes its Authorization header.
        app.use(accessTokenFromQuery);
        if (consoleFiles !== undefined) app.use(consoleFiles);
        app.useBodyParser('json', { limit: BODY_LIMIT });
        app.useBodyParser('text', { type: ['text/plain', 'application/jose'], limit: BODY_LIMIT });
        app.useGlobalFilters(new HttpErrorFilter(logger));
      },
      // HTTP answers (health, reads) while the views catch up with the log; the consumer binds after.
      beforeConsumers: (app) => app.get(Projector).catchUp(),
    });
    logger.info({ url: service.url, consumers: wiring.boundConsumers() }, 'projection started');
    return { app: service.app, url: service.url, config, close: service.close };
  } catch (error) {
    // Once the app existed its shutdown released the pool; otherwise it is released here. Bounded: a failed start must end.
    if (dataSource?.isInitialized === true) await settledWithin(dataSource.destroy(), FAILED_START_CLEANUP_MS);
    await settledWithin(runtime.close(), FAILED_START_CLEANUP_MS);
    throw error;
  }
}

export interface RebuildOptions {
  /** Fresh schema to rebuild into; default `<live schema>_rebuild_<random>`. Must not exist. */
  readonly targetSchema?: string;
  /** Keep the rebuilt schema for inspection (default: dropped afterwards). */
  readonly keep?: boolean;
}

/**
 * Rebuilds the projection from the log into a fresh schema and compares
 * every view's checksum with the live one (invariant 2). Read-only for the
 * live schema; the target is dropped afterwards unless `keep`.
 */
export async function rebuildIntoFreshSchema(config: ProjectionConfig, options: RebuildOptions = {}): Promise<RebuildReport & { readonly targetSchema: string }> {
  const targetSchema = options.targetSchema ?? `${config.pg.schema.slice(0, 40)}_rebuild_${randomBytes(4).toString('hex')}`;
  if (targetSchema === config.pg.schema || (await schemaExists(config.pg, targetSchema))) {
    throw new ProjectionError('PROJECTION_REBUILD_TARGET_INVALID', `schema ${targetSchema} is the live one or exists already; name a fresh schema`);
  }
  const nc = await connectProjectionNats(config);
  let live: DataSource | undefined;
  let target: DataSource | undefined;
  try {
    const jsm = await jetstreamManager(nc);
    const { store: authorship } = serviceAuthorship();
    // The log as configured for every service (its limits are checked, never rewritten: a default here would refuse a configured stream).
    const eventStore = await EventStore.open(
      nc,
      { stream: config.streams.events, subjectPrefix: config.subjects.eventsPrefix, maxBytes: config.streams.eventsMaxBytes, replicas: config.streams.replicas },
      authorship === undefined ? {} : { authorship },
    );
    live = await openProjectionDatabase(config.pg);
    target = await openProjectionDatabase({ ...config.pg, schema: targetSchema });
    const report = await rebuildProjection({
      log: new JetStreamEventLog(eventStore, jsm),
      live: new TypeormProjectionStore(live),
      target: new TypeormProjectionStore(target),
      eventsPrefix: config.subjects.eventsPrefix,
    });
    return { ...report, targetSchema };
  } finally {
    await target?.destroy().catch(() => undefined);
    await live?.destroy().catch(() => undefined);
    if (options.keep !== true) await dropProjectionSchema(config.pg, targetSchema).catch(() => undefined);
    await nc.close().catch(() => undefined);
  }
}
