import { Module, type DynamicModule } from '@nestjs/common';
import { documentSignatures } from '@writ/crypto';
import { DEFAULT_SERVICE_PRINCIPALS, TrustAnchoredPrincipals, type ServiceRuntime } from '@writ/runtime';
import type { TrustAnchor } from '@writ/contracts';
import { HealthController, runtimeProviders } from '@writ/runtime/nest';
import type { Logger } from '@writ/telemetry';
import type { Clock } from './application/ports.js';
import { ReceiveActionHandler } from './application/receive-action.handler.js';
import { RegisterPrincipalHandler } from './application/register-principal.handler.js';
import { SeedVerificationHandler } from './application/seed-verification.handler.js';
import { SubmitMessageHandler } from './application/submit-message.handler.js';
import type { IngressConfig } from './config.js';
import { ActionsController } from './inbound/actions.controller.js';
import { IngressActionConsumer } from './inbound/ingress-action.consumer.js';
import { participantExpiryTimer, type ParticipantExpiryTimer, type ParticipantTimerOutcome } from './inbound/participant-expiry.timer.js';
import { seedListeners } from './inbound/seed-listeners.js';
import { SeedsController } from './inbound/seeds.controller.js';
import { registerPrincipalListener } from './inbound/register-principal.listener.js';
import { submitMessageListener } from './inbound/submit-message.listener.js';
import { submitActionListener } from './inbound/submit-action.listener.js';
import { LazyArtifactBucket } from './outbound/artifact-bucket.js';
import { EventStoreIngressLog } from './outbound/event-log.js';
import { LogParentDirectory } from './outbound/parent-directory.js';
import { BusParticipantExpiryScheduler } from './outbound/participant-expiry-scheduler.js';
import { EventStoreParticipantLog } from './outbound/participant-log.js';
import { LogParticipantSigners } from './outbound/participant-signers.js';
import { LogPrincipalDirectory } from './outbound/principal-directory.js';

export const SERVICE_NAME = 'ingress';

/** What the composition root is given: the process's runtime (NATS, the log, readiness; opened by `createIngressApp`). */
export interface IngressModuleOptions {
  readonly config: IngressConfig;
  readonly runtime: ServiceRuntime;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** The deployment's trust anchor (read by `createIngressApp` from WRIT_TRUST_ANCHOR); none: only logged operators administer. */
  readonly trustAnchor?: TrustAnchor;
  /** The participant TTL timer's pull wait (default 5 s) and an observer of its outcomes (tests). */
  readonly participantExpiry?: { readonly pullExpiresMs?: number; readonly onOutcome?: (outcome: ParticipantTimerOutcome) => void };
}

/** Starts the participant TTL timer with the app and stops it before the runtime drains NATS. */
class ParticipantExpiryLifecycle {
  constructor(private readonly timer: ParticipantExpiryTimer) {}

  onApplicationBootstrap(): Promise<void> {
    return this.timer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.timer.stop();
  }
}

/** Starts the consumer once the app is up and drains it first on shutdown (the runtime drains NATS last). */
class IngressLifecycle {
  constructor(private readonly consumer: IngressActionConsumer) {}

  onApplicationBootstrap(): Promise<void> {
    return this.consumer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }
}

/** Composition root: ports bound to adapters; `/readyz` also waits for the ingress consumer. */
@Module({})
export class IngressModule {
  static forRoot(options: IngressModuleOptions): DynamicModule {
    const { config, runtime, logger } = options;
    const clock: Clock = options.clock ?? { now: () => new Date() };
    const handler = new ReceiveActionHandler(
      new EventStoreIngressLog(runtime.store),
      new LogPrincipalDirectory(runtime.store),
      clock,
      {
        principalId: config.principalId,
        freshnessSeconds: config.freshnessSeconds,
        maxIngressBytes: config.maxIngressBytes,
        stepMaxAttempts: config.stepMaxAttempts,
      },
      new LogParticipantSigners(runtime.store),
    );
    // Pulled on the service's consumer connection, like every durable (runtime `pullNc`).
    const consumer = new IngressActionConsumer(
      runtime.pullNc,
      handler,
      {
        serviceName: SERVICE_NAME,
        stream: config.streams.ingress,
        pattern: config.subjects.ingressActions,
        deadLetterSubject: config.subjects.deadLetter,
        ...config.consumer,
      },
      logger,
    );
    runtime.readiness.add('consumer_bound', () => consumer.bound);
    // Not a bus durable, so the stall watch is told about it (readiness then says when it stalls).
    runtime.watchConsumer({ stream: config.streams.ingress, durable: consumer.durable });

    // Seed 002: spawn / heartbeat / retire / crash verification of participants (docs/spawn-retire.md).
    const participants = new EventStoreParticipantLog(runtime.store);
    const expiryScheduler = new BusParticipantExpiryScheduler(runtime.nc, config.seeds.subjects.expire);
    const seeds = new SeedVerificationHandler({
      log: participants,
      parents: new LogParentDirectory(new LogPrincipalDirectory(runtime.store), participants),
      artifacts: new LazyArtifactBucket(runtime.nc, config.seeds.artifacts),
      scheduler: expiryScheduler,
      clock,
      crypto: documentSignatures,
      install: config.seeds.install,
      principalId: config.principalId,
    });
    const expiryTimer = participantExpiryTimer({
      nc: runtime.pullNc,
      serviceName: SERVICE_NAME,
      stream: config.streams.commands,
      subject: config.seeds.subjects.expire,
      durable: config.seeds.subjects.expireDurable,
      deadLetterSubject: config.seeds.subjects.expireDeadLetter,
      handler: seeds,
      scheduler: expiryScheduler,
      refreshMs: config.seeds.expiryRefreshMs,
      logger,
      ...(options.participantExpiry?.pullExpiresMs === undefined ? {} : { pullExpiresMs: options.participantExpiry.pullExpiresMs }),
      ...(options.participantExpiry?.onOutcome === undefined ? {} : { onOutcome: options.participantExpiry.onOutcome }),
    });
    runtime.readiness.add('participant_timer_bound', () => expiryTimer.bound);
    const directory = new LogPrincipalDirectory(runtime.store);
    const registrations = new RegisterPrincipalHandler({
      store: runtime.store,
      principals: new TrustAnchoredPrincipals(directory, options.trustAnchor),
      servicePrincipals: new Set([...Object.values(DEFAULT_SERVICE_PRINCIPALS), config.principalId]),
      clock,
      logger,
    });
    // Free-form messages (issue 17): recorded, then bound, on the sender's conversation stream; the text in the artifact bucket.
    const messages = new SubmitMessageHandler({
      log: new EventStoreIngressLog(runtime.store),
      principals: new TrustAnchoredPrincipals(directory, options.trustAnchor),
      texts: new LazyArtifactBucket(runtime.nc, config.seeds.artifacts),
      clock,
      principalId: config.principalId,
      freshnessSeconds: config.freshnessSeconds,
    });
    return {
      module: IngressModule,
      controllers: [
        HealthController,
        ActionsController,
        submitActionListener(config.subjects.submitAction),
        registerPrincipalListener({ register: config.subjects.registerPrincipal, revoke: config.subjects.revokePrincipal }),
        submitMessageListener(config.subjects.submitMessage),
        SeedsController,
        seedListeners(config.seeds.subjects),
      ],
      providers: [
        ...runtimeProviders(runtime),
        { provide: ReceiveActionHandler, useValue: handler },
        { provide: SeedVerificationHandler, useValue: seeds },
        { provide: RegisterPrincipalHandler, useValue: registrations },
        { provide: SubmitMessageHandler, useValue: messages },
        { provide: ParticipantExpiryLifecycle, useValue: new ParticipantExpiryLifecycle(expiryTimer) },
        { provide: IngressActionConsumer, useValue: consumer },
        { provide: IngressLifecycle, useValue: new IngressLifecycle(consumer) },
      ],
    };
  }
}
