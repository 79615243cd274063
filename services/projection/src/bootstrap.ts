import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { JetStreamServer, type JetStreamServerStatus } from '@writ/bus';
import { EventStore } from '@writ/eventstore';
import { ensureWritStreams } from '@writ/runtime';
import { createLogger, type Logger } from '@writ/telemetry';
import type { DataSource } from 'typeorm';
import { ProjectionError } from './application/projection-errors.js';
import { Projector } from './application/projector.js';
import type { WiringProbe } from './application/readiness.js';
import { rebuildProjection, type RebuildReport } from './application/rebuild.js';
import { SERVICE_NAME, type ProjectionConfig } from './config.js';
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
}

async function connectNats(config: ProjectionConfig): Promise<NatsConnection> {
  const servers = config.nats.url.split(',').map((s) => s.trim());
  try {
    return await connect({ servers, name: SERVICE_NAME });
  } catch (cause) {
    throw new ProjectionError('PROJECTION_NATS_UNAVAILABLE', `cannot connect to NATS at ${config.nats.url}; check WRIT_NATS_URL`, { cause });
  }
}

/** Opens the event store (creating the log if needed) and the bus streams the consumer's dead letters need. */
async function openStreams(nc: NatsConnection, jsm: JetStreamManager, config: ProjectionConfig): Promise<EventStore> {
  const { streams, subjects } = config;
  const eventStore = await EventStore.open(nc, {
    stream: streams.events,
    subjectPrefix: subjects.eventsPrefix,
    replicas: streams.replicas,
    ...(streams.eventsMaxBytes === undefined ? {} : { maxBytes: streams.eventsMaxBytes }),
  });
  await ensureWritStreams(jsm, {
    replicas: streams.replicas,
    names: { ingress: streams.ingress, commands: streams.commands, dlq: streams.dlq },
    subjects: { ingress: `${subjects.root}.ingress.>`, commands: `${subjects.root}.cmd.>`, dlq: `${subjects.deadLetters}.>` },
    ...(streams.busMaxBytes === undefined ? {} : { maxBytes: streams.busMaxBytes }),
  });
  return eventStore;
}

/**
 * Starts the projection service in-process: NATS, the streams, Postgres
 * (migrations run), the HTTP API, a catch-up from the log, then the durable
 * consumer. Tests call it with test stream names and subject root; `main.ts`
 * with the environment's config.
 */
export async function createProjectionApp(config: ProjectionConfig, options: ProjectionAppOptions = {}): Promise<ProjectionApp> {
  const logger = options.logger ?? createLogger(SERVICE_NAME);
  const nc = await connectNats(config);
  let dataSource: DataSource | undefined;
  let app: NestExpressApplication | undefined;
  try {
    const jsm = await jetstreamManager(nc);
    const eventStore = await openStreams(nc, jsm, config);
    dataSource = await openProjectionDatabase(config.pg);

    const server = new JetStreamServer({ serviceName: SERVICE_NAME, connection: nc, logger });
    let busStatus: JetStreamServerStatus = 'connecting';
    server.status.subscribe((status) => (busStatus = status));
    const wiring: WiringProbe = {
      natsConnected: () => !nc.isClosed() && busStatus === 'connected',
      streamsEnsured: () => true,
      boundConsumers: () => server.boundConsumers().map((consumer) => consumer.durable),
    };

    app = await NestFactory.create<NestExpressApplication>(
      ProjectionModule.register({ config, nc, jsm, eventStore, dataSource, wiring, logger, ...(options.onShutdown ? { onShutdown: options.onShutdown } : {}) }),
      { bodyParser: false, abortOnError: false, logger: new NestPinoLogger(logger) },
    );
    app.useBodyParser('json', { limit: BODY_LIMIT });
    app.useBodyParser('text', { type: ['text/plain', 'application/jose'], limit: BODY_LIMIT });
    app.useGlobalFilters(new HttpErrorFilter(logger));
    // The bus's exception filter is bound on the listener (projector.listener.ts): a global one would come too late.
    app.connectMicroservice({ strategy: server });

    await app.listen(config.http.port, config.http.host);
    await app.get(Projector).catchUp();
    await app.startAllMicroservices();

    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address !== null ? address.port : config.http.port;
    const host = config.http.host === '0.0.0.0' || config.http.host === '::' ? '127.0.0.1' : config.http.host;
    const started = app;
    logger.info({ url: `http://${host}:${port}`, consumers: wiring.boundConsumers() }, 'projection started');
    return { app: started, url: `http://${host}:${port}`, config, close: () => started.close() };
  } catch (error) {
    if (app !== undefined) {
      await app.close().catch(() => undefined);
    } else {
      await dataSource?.destroy().catch(() => undefined);
      await nc.close().catch(() => undefined);
    }
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
  if (targetSchema === config.pg.schema || (await schemaExists(config.pg.url, targetSchema))) {
    throw new ProjectionError('PROJECTION_REBUILD_TARGET_INVALID', `schema ${targetSchema} is the live one or exists already; name a fresh schema`);
  }
  const nc = await connectNats(config);
  let live: DataSource | undefined;
  let target: DataSource | undefined;
  try {
    const jsm = await jetstreamManager(nc);
    const eventStore = await EventStore.open(nc, { stream: config.streams.events, subjectPrefix: config.subjects.eventsPrefix });
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
    if (options.keep !== true) await dropProjectionSchema(config.pg.url, targetSchema).catch(() => undefined);
    await nc.close().catch(() => undefined);
  }
}
