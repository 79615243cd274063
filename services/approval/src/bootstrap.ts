import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BusExceptionFilter, JetStreamServer, type JetStreamServerStatus } from '@writ/bus';
import { createLogger, type Logger } from '@writ/telemetry';
import { ApprovalModule } from './approval.module.js';
import { IssueGrantHandler } from './application/issue-grant.handler.js';
import type { Clock } from './application/ports.js';
import { RequestApprovalHandler } from './application/request-approval.handler.js';
import { ResolveApprovalHandler } from './application/resolve-approval.handler.js';
import { approvalSubjects, type ApprovalConfig, type ApprovalSubjects } from './config.js';
import { EventStoreTaskLog } from './outbound/event-store.task-log.js';
import { ExecutorWorkspaceWitness } from './outbound/executor-observer.js';
import { KeyGrantSigner } from './outbound/grant-signer.js';
import { ServiceRuntime } from './outbound/service-runtime.js';

export const SERVICE_NAME = 'approval';

export interface ApprovalApp {
  readonly app: INestApplication;
  /** Base URL of the HTTP server (`/healthz`, `/readyz`). */
  readonly url: string;
  readonly subjects: ApprovalSubjects;
  readonly principalId: string;
  /** Key id of the signing key registered for `principalId`. */
  readonly kid: string;
  /** Graceful stop: the bus drains (in-flight commands finish and ack), then NATS closes. */
  close(): Promise<void>;
}

export interface ApprovalAppOptions {
  readonly logger?: Logger;
  /** The adapter edge's clock (default: the system clock). */
  readonly clock?: Clock;
  /** Bus consumer tuning for tests (short pulls keep a graceful stop short). */
  readonly pullExpiresMs?: number;
}

/**
 * Starts the approval service in this process: NATS, the bus streams, the
 * event log, the service key and principal, the principal registry, then the
 * Nest HTTP app with the JetStream transport attached, listening on the
 * configured port. Used by `main.ts` and by tests (with test streams and a
 * test subject root).
 */
export async function createApprovalApp(config: ApprovalConfig, options: ApprovalAppOptions = {}): Promise<ApprovalApp> {
  const logger = options.logger ?? createLogger(SERVICE_NAME);
  const clock = options.clock ?? (() => new Date());
  const subjects = approvalSubjects(config.subjectRoot);
  const runtime = await ServiceRuntime.start({
    serviceName: SERVICE_NAME,
    natsUrl: config.natsUrl,
    streams: config.streams,
    subjects: { ingress: subjects.ingress, commands: subjects.commands, dlq: subjects.dlq },
    principal: { id: config.principalId, displayName: 'Writ approval service', keyFile: config.keyFile },
    logger,
  });

  let app: INestApplication | undefined;
  try {
    const log = new EventStoreTaskLog(runtime.store);
    const common = { log, clock, principalId: config.principalId };
    const witness = new ExecutorWorkspaceWitness(runtime.nc, subjects.observe, config.observeTimeoutMs);
    const server = new JetStreamServer({
      serviceName: SERVICE_NAME,
      connection: runtime.nc,
      logger,
      ...(options.pullExpiresMs === undefined ? {} : { pullExpiresMs: options.pullExpiresMs }),
    });
    let busStatus: JetStreamServerStatus = 'connecting';
    server.status.subscribe((status) => (busStatus = status));
    const expectedConsumers = 2;

    app = await NestFactory.create(
      ApprovalModule.forRoot({
        subjects,
        commandsStream: config.streams.commands,
        runtime,
        handlers: {
          request: new RequestApprovalHandler({ ...common, approvalTtlSeconds: config.approvalTtlSeconds, witness }),
          resolve: new ResolveApprovalHandler({ ...common, principals: runtime.registry, witness }),
          issueGrant: new IssueGrantHandler({
            ...common,
            signer: new KeyGrantSigner(runtime.key),
            audience: config.grantAudience,
            grantTtlSeconds: config.grantTtlSeconds,
          }),
        },
        readiness: {
          check: () => {
            const checks = {
              nats_connected: runtime.connected,
              streams_ensured: true,
              consumers_bound: busStatus === 'connected' && server.boundConsumers().length === expectedConsumers,
            };
            return { ready: Object.values(checks).every(Boolean), checks };
          },
        },
        logger,
      }),
      { logger: ['error', 'warn'] },
    );
    // The bus filter only on the microservice (HTTP keeps Nest's own exception handling), and
    // before its listeners are registered: a hybrid app registers them at connect unless deferred.
    app.connectMicroservice({ strategy: server }, { deferInitialization: true }).useGlobalFilters(new BusExceptionFilter());
    await app.startAllMicroservices();
    await app.listen(config.http.port, config.http.host);
    const address = app.getHttpServer().address() as { port: number } | string | null;
    const port = typeof address === 'object' && address !== null ? address.port : config.http.port;
    const started = app;
    logger.info({ port, subjects: { request: subjects.request, resolve: subjects.resolve, issue_grant: subjects.issueGrant } }, 'approval service listening');
    return {
      app: started,
      url: `http://127.0.0.1:${port}`,
      subjects,
      principalId: config.principalId,
      kid: runtime.key.kid,
      close: () => started.close(),
    };
  } catch (error) {
    if (app !== undefined) await app.close().catch(() => undefined);
    await runtime.close();
    throw error;
  }
}
