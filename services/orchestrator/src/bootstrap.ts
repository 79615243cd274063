import 'reflect-metadata';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication, LogLevel } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import { HttpAuthGuard, withMetricsRoute } from '@writ/runtime/nest';
import { BusExceptionFilter, JetStreamServer, connectBus } from '@writ/bus';
import { EventStore } from '@writ/eventstore';
import { ConsumerStallWatch, PrincipalRegistry, QuarantineLedger, ResolutionAuthority, countDeadLetters, ensureWritStreams, natsCredentialExpiry, observeRuntimeMetrics, resolutionRegistrationOptions, serviceAuthorship, useSealKey, warnKeptCapacities } from '@writ/runtime';
import { createLogger, type Logger } from '@writ/telemetry';
import type { Clock } from './application/ports.js';
import type { OrchestratorConfig } from './config.js';
import { OrchestratorModule } from './orchestrator.module.js';
import { Readiness } from './outbound/readiness.js';

export interface OrchestratorAppOptions {
  readonly logger?: Logger;
  /** Nest's own log levels (default errors and warnings); false silences it. */
  readonly nestLogger?: false | LogLevel[];
  /** Tests may pin the clock; production reads the system clock. */
  readonly clock?: Clock;
  /** Runs last at shutdown, after NATS drained (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
  /** The service's own environment: its bus credential, authorship, seal keys, enrollment (default `process.env`; apps/serve gives each service its own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A running orchestrator: the HTTP app (health) with the JetStream listener attached. */
export interface OrchestratorApp {
  readonly app: INestApplication;
  readonly server: JetStreamServer;
  readonly readiness: Readiness;
  /** Base URL of the HTTP server (`/healthz`, `/readyz`). */
  readonly url: string;
  /** Graceful: stop pulling, finish and ack in-flight events, close HTTP, drain NATS. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the orchestrator in-process: connects to NATS, opens the event log
 * and ensures the bus streams (commands, ingress, dead letters) under the
 * configured names and subject root, binds the durable `orchestrator`
 * consumer of `<root>.evt.task.>`, answers the claim requests
 * (`<root>.qry.orchestrator.claim-*`, signers checked against the principals
 * in the log), and listens on `WRIT_HTTP_PORT` (0 picks a free port).
 */
export async function createOrchestratorApp(config: OrchestratorConfig, options: OrchestratorAppOptions = {}): Promise<OrchestratorApp> {
  const { env, streams } = config;
  const logger = options.logger ?? createLogger('orchestrator');
  const processEnv = options.env ?? process.env;
  const readiness = new Readiness(2);
  let nc: NatsConnection | undefined;
  let app: INestApplication | undefined;
  let stalls: ConsumerStallWatch | undefined;
  let stopMetrics: (() => void) | undefined;
  try {
    nc = await connectBus({ servers: env.WRIT_NATS_URL, name: 'orchestrator' }, processEnv, { waitForServer: true });
    readiness.connected(nc);
    const authorship = serviceAuthorship(processEnv);
    const store = await EventStore.open(
      nc,
      {
        stream: streams.events,
        subjectPrefix: streams.eventsPrefix,
        maxBytes: streams.eventsMaxBytes,
        readCacheEvents: streams.eventsReadCache,
        replicas: streams.replicas,
      },
      authorship.store === undefined ? {} : { authorship: authorship.store },
    );
    warnKeptCapacities(store, logger);
    // Every event the orchestrator appends is sealed by its key (docs/security.md, "Authorship").
    await useSealKey(store, { principalId: env.WRIT_ORCHESTRATOR_PRINCIPAL_ID, displayName: 'Writ orchestrator', keyFile: authorship.sealKeyFile(env.WRIT_ORCHESTRATOR_PRINCIPAL_ID) }, processEnv);
    await ensureWritStreams(await jetstreamManager(nc), {
      names: { ingress: streams.ingress, commands: streams.commands, dlq: streams.dlq },
      subjects: { ingress: config.subjects.ingressAll, commands: config.subjects.commandsAll, dlq: config.subjects.dlqAll },
      maxBytes: streams.busMaxBytes,
      replicas: streams.replicas,
    });
    readiness.streamsEnsured();
    // Claims are signed by the task's agent, resolutions by a director: their keys, as the log says.
    const principals = await PrincipalRegistry.start(nc, store, { stream: env.WRIT_EVENTS_STREAM, subjectPrefix: config.subjects.events });

    app = await NestFactory.create(
      withMetricsRoute(OrchestratorModule.register({
        config,
        nc,
        store,
        readiness,
        logger,
        principals,
        // A director's decision resumes an attempt only when its signature holds up against the principals' history.
        authority: new ResolutionAuthority(principals, await resolutionRegistrationOptions(store, env.WRIT_TRUST_ANCHOR, logger)),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        onShutdown: options.onShutdown,
      })),
      { logger: options.nestLogger ?? ['error', 'warn'], abortOnError: false },
    );
    const server = new JetStreamServer({ serviceName: 'orchestrator', connection: nc, logger, env: processEnv });
    // What it skipped as junk, and whether its durable stalls, is what /readyz tells beside the wiring (invariant 10).
    const quarantine = new QuarantineLedger(logger);
    store.onQuarantine((record) => quarantine.record(record, 'eventstore'));
    server.on('quarantine', (record) => quarantine.record(record, 'bus'));
    stalls = new ConsumerStallWatch(await jetstreamManager(nc), {
      stallAfterMs: env.WRIT_CONSUMER_STALL_SECONDS * 1000,
      checkMs: env.WRIT_CONSUMER_STALL_CHECK_MS,
      consumers: () => server.boundConsumers(),
      logger,
    });
    stalls.start();
    readiness.watching(stalls, quarantine);
    const watched = stalls;
    stopMetrics = observeRuntimeMetrics({
      service: 'orchestrator',
      ready: () => readiness.report().ready,
      consumers: () => watched.readings(),
      quarantined: () => quarantine.counts(),
      keys: () => natsCredentialExpiry(processEnv),
    });
    countDeadLetters(server);
    // Deferred, so the filter is in place before the handlers are bound: without it, error codes never reach the ack table.
    const microservice = app.connectMicroservice({ strategy: server }, { deferInitialization: true });
    microservice.useGlobalFilters(new BusExceptionFilter());
    await app.startAllMicroservices();
    readiness.listening(server);
    // Health, readiness (and the JWKS) are its only routes, all public; any other answers 401 (docs/security.md).
    app.useGlobalGuards(new HttpAuthGuard(app.get(Reflector), undefined));
    await app.listen(env.WRIT_HTTP_PORT, env.WRIT_HTTP_HOST);
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const running = app;
    let closing: Promise<void> | undefined;
    return {
      app: running,
      server,
      readiness,
      url,
      close: () => {
        closing ??= (async () => {
          stopMetrics?.();
          await stalls?.stop();
          await running.close();
          readiness.stop();
        })();
        return closing;
      },
    };
  } catch (error) {
    stopMetrics?.();
    await stalls?.stop();
    await app?.close().catch(() => undefined);
    if (nc !== undefined && !nc.isClosed()) await nc.close();
    throw error;
  }
}
