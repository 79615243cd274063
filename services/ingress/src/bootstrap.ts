import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { JetStreamServer } from '@writ/bus';
import { EventStore } from '@writ/eventstore';
import { ensureWritStreams } from '@writ/runtime';
import { createLogger, type Logger } from '@writ/telemetry';
import type { Clock } from './application/ports.js';
import type { IngressConfig } from './config.js';
import { IngressReadiness } from './inbound/readiness.js';
import { IngressModule, SERVICE_NAME } from './ingress.module.js';

const HTTP_BODY_LIMIT = 1024 * 1024;

export interface IngressApp {
  readonly app: NestExpressApplication;
  /** `http://<host>:<port>` actually bound (port 0 picks a free one). */
  readonly url: string;
  /** Graceful stop: drain the consumer and responders, close HTTP, drain NATS. */
  close(): Promise<void>;
}

export interface IngressAppOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/**
 * Starts a complete ingress in this process: connects to NATS, ensures the bus
 * streams and the event log, binds the durable consumer and the request/reply
 * responders, and listens on HTTP. `main.ts` uses it; tests start a real
 * ingress with their own streams and subject root through it.
 */
export async function createIngressApp(config: IngressConfig, options: IngressAppOptions = {}): Promise<IngressApp> {
  const logger = options.logger ?? createLogger(SERVICE_NAME);
  const nc = await connect({ servers: config.natsUrl, name: SERVICE_NAME });
  try {
    const { streams } = config;
    await ensureWritStreams(await jetstreamManager(nc), {
      names: streams.names,
      subjects: streams.subjects,
      maxBytes: streams.busMaxBytes,
      replicas: streams.replicas,
    });
    const store = await EventStore.open(nc, {
      stream: streams.events,
      subjectPrefix: streams.eventsPrefix,
      maxBytes: streams.eventsMaxBytes,
      replicas: streams.replicas,
    });
    const app = await NestFactory.create<NestExpressApplication>(
      IngressModule.forRoot({ config, nc, store, logger, ...(options.clock === undefined ? {} : { clock: options.clock }) }),
      { logger: ['error', 'warn'] },
    );
    // The body of POST /v1/actions is the compact JWS itself.
    // The body of POST /v1/actions is the compact JWS itself (or a SubmitAction document). Up to NATS's
    // 1 MiB, a body over the ingress limit is still recorded and refused as INGRESS_TOO_LARGE.
    app.useBodyParser('text', { type: ['application/jose', 'text/plain'], limit: HTTP_BODY_LIMIT });
    app.useBodyParser('json', { limit: HTTP_BODY_LIMIT });
    // BusExceptionFilter (error codes in error replies) is bound on the listener itself: see submit-action.listener.ts.
    app.connectMicroservice({ strategy: new JetStreamServer({ serviceName: SERVICE_NAME, connection: nc, logger }) });
    app.enableShutdownHooks();
    await app.startAllMicroservices();
    await app.listen(config.http.port, config.http.host);
    app.get(IngressReadiness).respondersListening = true;
    const address = app.getHttpServer().address() as AddressInfo;
    const host = config.http.host === '0.0.0.0' || config.http.host === '::' ? '127.0.0.1' : config.http.host;
    logger.info({ port: address.port, submit: config.subjects.submitAction, consumer: config.subjects.ingressActions }, 'ingress listening');
    return {
      app,
      url: `http://${host}:${address.port}`,
      close: async () => {
        app.get(IngressReadiness).respondersListening = false;
        await app.close();
      },
    };
  } catch (error) {
    if (!nc.isClosed()) await nc.close();
    throw error;
  }
}
