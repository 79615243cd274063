import { Module, type DynamicModule } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { EventStore } from '@writ/eventstore';
import type { Logger } from '@writ/telemetry';
import type { Clock } from './application/ports.js';
import { ReceiveActionHandler } from './application/receive-action.handler.js';
import type { IngressConfig } from './config.js';
import { ActionsController } from './inbound/actions.controller.js';
import { HealthController } from './inbound/health.controller.js';
import { IngressActionConsumer } from './inbound/ingress-action.consumer.js';
import { IngressReadiness } from './inbound/readiness.js';
import { submitActionListener } from './inbound/submit-action.listener.js';
import { EventStoreIngressLog } from './outbound/event-log.js';
import { LogPrincipalDirectory } from './outbound/principal-directory.js';

export const SERVICE_NAME = 'ingress';

/** What the composition root is given: the process's connection and event store (opened by `createIngressApp`). */
export interface IngressModuleOptions {
  readonly config: IngressConfig;
  readonly nc: NatsConnection;
  readonly store: EventStore;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/** Starts the consumer once the app is up; drains it first on shutdown, and the connection last. */
class IngressLifecycle {
  constructor(
    private readonly consumer: IngressActionConsumer,
    private readonly nc: NatsConnection,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    return this.consumer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

/** Composition root: ports bound to adapters. */
@Module({})
export class IngressModule {
  static forRoot(options: IngressModuleOptions): DynamicModule {
    const { config, nc, store, logger } = options;
    const clock: Clock = options.clock ?? { now: () => new Date() };
    const handler = new ReceiveActionHandler(new EventStoreIngressLog(store), new LogPrincipalDirectory(store), clock, {
      principalId: config.principalId,
      freshnessSeconds: config.freshnessSeconds,
      maxIngressBytes: config.maxIngressBytes,
      stepMaxAttempts: config.stepMaxAttempts,
    });
    const consumer = new IngressActionConsumer(
      nc,
      handler,
      {
        serviceName: SERVICE_NAME,
        stream: config.streams.names.ingress,
        pattern: config.subjects.ingressActions,
        deadLetterSubject: config.subjects.deadLetter,
        maxDeliver: config.consumer.maxDeliver,
        ackWaitMs: config.consumer.ackWaitMs,
      },
      logger,
    );
    return {
      module: IngressModule,
      controllers: [HealthController, ActionsController, submitActionListener(config.subjects.submitAction)],
      providers: [
        { provide: ReceiveActionHandler, useValue: handler },
        { provide: IngressActionConsumer, useValue: consumer },
        { provide: IngressReadiness, useValue: new IngressReadiness(nc, consumer) },
        { provide: IngressLifecycle, useValue: new IngressLifecycle(consumer, nc) },
      ],
    };
  }
}
