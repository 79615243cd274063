import 'reflect-metadata';
import { jetstreamManager } from '@nats-io/jetstream';
import type { INestApplication } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import { HttpAuthGuard, withMetricsRoute } from '@writ/runtime/nest';
import { BusExceptionFilter, JetStreamServer, durableName, type JetStreamServerStatus } from '@writ/bus';
import { ConsumerStallWatch, NatsArtifactStore, QuarantineLedger, ResolutionAuthority, countDeadLetters, natsCredentialExpiry, observeRuntimeMetrics, resolutionRegistrationOptions, retiringKeyExpiry } from '@writ/runtime';
import { createLogger, type Logger } from '@writ/telemetry';
import { ApprovalModule } from './approval.module.js';
import { CancelApprovalHandler } from './application/cancel-approval.handler.js';
import { ExpireApprovalHandler } from './application/expire-approval.handler.js';
import { IssueGrantHandler } from './application/issue-grant.handler.js';
import type { Clock } from './application/ports.js';
import { RequestApprovalHandler } from './application/request-approval.handler.js';
import { ResolveApprovalHandler } from './application/resolve-approval.handler.js';
import { RevokeGrantHandler } from './application/revoke-grant.handler.js';
import { RotateKeyHandler } from './application/rotate-key.handler.js';
import { TrustedTaskLog } from './application/trusted-task-log.js';
import { approvalSubjects, type ApprovalConfig, type ApprovalSubjects } from './config.js';
import { ExpiryTimer, type TimerOutcome } from './inbound/approval-expiry.timer.js';
import { BusExpiryScheduler } from './outbound/bus-expiry-scheduler.js';
import { EventStoreTaskLog } from './outbound/event-store.task-log.js';
import { ExecutorWorkspaceWitness } from './outbound/executor-observer.js';
import { KeyGrantSigner } from './outbound/grant-signer.js';
import { artifactStoreFailure } from './outbound/nats-artifact-store.js';
import { NatsPolicyProfiles } from './outbound/policy-profile-bucket.js';
import { ServiceKeyringAdapter } from './outbound/service-keyring.js';
import { ServiceRuntime } from './outbound/service-runtime.js';

export const SERVICE_NAME = 'approval';

export interface ApprovalApp {
  readonly app: INestApplication;
  /** Base URL of the HTTP server (`/healthz`, `/readyz`). */
  readonly url: string;
  readonly subjects: ApprovalSubjects;
  readonly principalId: string;
  /** Key id of the signing key registered for `principalId` at start (a rotation switches it: see `activeKid`). */
  readonly kid: string;
  /** Key id of the key that signs now. */
  activeKid(): string;
  /** Graceful stop: the bus drains (in-flight commands finish and ack), then NATS closes. */
  close(): Promise<void>;
}

export interface ApprovalAppOptions {
  readonly logger?: Logger;
  /** The adapter edge's clock (default: the system clock). */
  readonly clock?: Clock;
  /** Bus consumer tuning for tests (short pulls keep a graceful stop short). */
  readonly pullExpiresMs?: number;
  /** Told what each delivery of an expiry timer came to (tests wait on it instead of sleeping). */
  readonly onExpiryOutcome?: (outcome: TimerOutcome) => void;
  /** Runs last at shutdown, after NATS drained (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
  /** The service's own environment: its bus credential, authorship, seal keys, enrollment (default `process.env`; apps/serve gives each service its own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
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
    principal: { id: config.principalId, displayName: 'Writ approval service', keyFile: config.keyFile, keyDir: config.keyDir },
    clock,
    logger,
    onClose: options.onShutdown,
    env: options.env,
  });

  let app: INestApplication | undefined;
  let stalls: ConsumerStallWatch | undefined;
  let stopMetrics: (() => void) | undefined;
  try {
    // A director's registration must chain back to the trust anchor (WRIT_TRUST_ANCHOR), checked before a resolution is recorded and again before it is acted on.
    const registrations = await resolutionRegistrationOptions(runtime.store, config.trustAnchorFile, logger);
    // Every handler folds the log with forged or unauthorized director decisions left out (invariant 9).
    const log = new TrustedTaskLog(
      new EventStoreTaskLog(runtime.store),
      // ... and a director's registration must chain back to the trust anchor.
      new ResolutionAuthority(runtime.registry, registrations),
    );
    const common = { log, clock, principalId: config.principalId };
    const keyring = new ServiceKeyringAdapter(runtime.keys, runtime.registry, config.grantTtlSeconds + config.keyRetireSkewSeconds);
    const signed = { principals: runtime.registry, clock, freshnessSeconds: config.freshnessSeconds };
    const witness = new ExecutorWorkspaceWitness(runtime.nc, subjects.observe, config.observeTimeoutMs, config.witnessWaitMs);
    const artifacts = await NatsArtifactStore.open(runtime.nc, { ...config.artifacts, replicas: config.streams.replicas, failure: artifactStoreFailure });
    const expiry = new BusExpiryScheduler(runtime.nc, subjects.expire);
    const expiryTimer = new ExpiryTimer({
      nc: runtime.nc,
      serviceName: SERVICE_NAME,
      stream: config.streams.commands,
      subject: subjects.expire,
      durable: durableName(SERVICE_NAME, subjects.expire),
      deadLetterSubject: subjects.deadLetter('expire'),
      handler: new ExpireApprovalHandler(common),
      scheduler: expiry,
      refreshMs: config.expiryRefreshMs,
      logger,
      ...(options.pullExpiresMs === undefined ? {} : { pullExpiresMs: options.pullExpiresMs }),
      ...(options.onExpiryOutcome === undefined ? {} : { onOutcome: options.onExpiryOutcome }),
    });
    const server = new JetStreamServer({
      serviceName: SERVICE_NAME,
      connection: runtime.nc,
      logger,
      env: options.env,
      ...(options.pullExpiresMs === undefined ? {} : { pullExpiresMs: options.pullExpiresMs }),
    });
    let busStatus: JetStreamServerStatus = 'connecting';
    server.status.subscribe((status) => (busStatus = status));
    // What it skipped as junk, and whether a durable stalls, is what /readyz tells beside the wiring (invariant 10).
    const quarantine = new QuarantineLedger(logger);
    runtime.store.onQuarantine((record) => quarantine.record(record, 'eventstore'));
    server.on('quarantine', (record) => quarantine.record(record, 'bus'));
    stalls = new ConsumerStallWatch(await jetstreamManager(runtime.nc), {
      stallAfterMs: config.consumerStall.afterMs,
      checkMs: config.consumerStall.checkMs,
      consumers: () => server.boundConsumers(),
      logger,
    });
    stalls.start();
    const watch = stalls;
    const expectedConsumers = 3;
    const readinessCheck = () => {
      const checks = {
        nats_connected: runtime.connected,
        streams_ensured: true,
        consumers_bound: busStatus === 'connected' && server.boundConsumers().length === expectedConsumers && expiryTimer.bound,
        consumers_not_stalled: watch.stalled.length === 0,
      };
      return { ready: Object.values(checks).every(Boolean), checks, consumers_stalled: watch.stalled.map((consumer) => consumer.durable), quarantined: quarantine.counts() };
    };
    stopMetrics = observeRuntimeMetrics({
      service: SERVICE_NAME,
      ready: () => readinessCheck().ready,
      consumers: () => watch.readings(),
      quarantined: () => quarantine.counts(),
      keys: async () => [...(await natsCredentialExpiry(options.env)), ...retiringKeyExpiry(runtime.keys.retiring())],
    });
    countDeadLetters(server);

    app = await NestFactory.create(
      withMetricsRoute(ApprovalModule.forRoot({
        subjects,
        commandsStream: config.streams.commands,
        runtime,
        handlers: {
          request: new RequestApprovalHandler({ ...common, approvalTtlSeconds: config.approvalTtlSeconds, witness, artifacts, expiry }),
          resolve: new ResolveApprovalHandler({ ...common, ...registrations, principals: runtime.registry, witness, policies: new NatsPolicyProfiles(runtime.nc, config.policyBucket) }),
          cancel: new CancelApprovalHandler(common),
          issueGrant: new IssueGrantHandler({
            ...common,
            signer: new KeyGrantSigner(() => runtime.keys.active),
            audience: config.grantAudience,
            grantTtlSeconds: config.grantTtlSeconds,
          }),
          revokeGrant: new RevokeGrantHandler({ ...common, ...signed }),
          rotateKey: new RotateKeyHandler({ ...signed, keys: keyring, service: SERVICE_NAME }),
        },
        jwks: keyring,
        expiryTimer,
        readiness: { check: readinessCheck },
        logger,
      })),
      { logger: ['error', 'warn'] },
    );
    // The bus filter only on the microservice (HTTP keeps Nest's own exception handling), and
    // before its listeners are registered: a hybrid app registers them at connect unless deferred.
    app.connectMicroservice({ strategy: server }, { deferInitialization: true }).useGlobalFilters(new BusExceptionFilter());
    await app.startAllMicroservices();
    // Health, readiness (and the JWKS) are its only routes, all public; any other answers 401 (docs/security.md).
    app.useGlobalGuards(new HttpAuthGuard(app.get(Reflector), undefined));
    await app.listen(config.http.port, config.http.host);
    const address = app.getHttpServer().address() as { port: number } | string | null;
    const port = typeof address === 'object' && address !== null ? address.port : config.http.port;
    const started = app;
    // The retirement schedule is the keyring on disk: checked now (a restart catches up) and then on an interval.
    runtime.keys.startRetirementChecks(config.keyCheckIntervalMs);
    logger.info({ port, subjects: { request: subjects.request, resolve: subjects.resolve, issue_grant: subjects.issueGrant } }, 'approval service listening');
    return {
      app: started,
      url: `http://127.0.0.1:${port}`,
      subjects,
      principalId: config.principalId,
      kid: runtime.key.kid,
      activeKid: () => runtime.keys.active.kid,
      close: async () => {
        stopMetrics?.();
        await watch.stop();
        await started.close();
      },
    };
  } catch (error) {
    stopMetrics?.();
    await stalls?.stop();
    if (app !== undefined) await app.close().catch(() => undefined);
    await runtime.close();
    throw error;
  }
}
