import { Module, type DynamicModule } from '@nestjs/common';
import type { ServiceRuntime } from '@writ/runtime';
import { HealthController, runtimeProviders } from '@writ/runtime/nest';
import type { Logger } from '@writ/telemetry';
import type { Clock } from './application/ports.js';
import { ReceiveActionHandler } from './application/receive-action.handler.js';
import type { IngressConfig } from './config.js';
import { ActionsController } from './inbound/actions.controller.js';
import { IngressActionConsumer } from './inbound/ingress-action.consumer.js';
import { submitActionListener } from './inbound/submit-action.listener.js';
import { EventStoreIngressLog } from './outbound/event-log.js';
import { LogPrincipalDirectory } from './outbound/principal-directory.js';

export const SERVICE_NAME = 'ingress';

/** What the composition root is given: the process's runtime (NATS, the log, readiness; opened by `createIngressApp`). */
export interface IngressModuleOptions {
  readonly config: IngressConfig;
  readonly runtime: ServiceRuntime;
  readonly logger: Logger;
  readonly clock?: Clock;
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
    const handler = new ReceiveActionHandler(new EventStoreIngressLog(runtime.store), new LogPrincipalDirectory(runtime.store), clock, {
      principalId: config.principalId,
      freshnessSeconds: config.freshnessSeconds,
      maxIngressBytes: config.maxIngressBytes,
      stepMaxAttempts: config.stepMaxAttempts,
    });
    const consumer = new IngressActionConsumer(
      runtime.nc,
      handler,
      {
        serviceName: SERVICE_NAME,
        stream: config.streams.ingress,
        pattern: config.subjects.ingressActions,
        deadLetterSubject: config.subjects.deadLetter,
        maxDeliver: config.consumer.maxDeliver,
        ackWaitMs: config.consumer.ackWaitMs,
      },
      logger,
    );
    runtime.readiness.add('consumer_bound', () => consumer.bound);
    return {
      module: IngressModule,
      controllers: [HealthController, ActionsController, submitActionListener(config.subjects.submitAction)],
      providers: [
        ...runtimeProviders(runtime),
        { provide: ReceiveActionHandler, useValue: handler },
        { provide: IngressActionConsumer, useValue: consumer },
        { provide: IngressLifecycle, useValue: new IngressLifecycle(consumer) },
      ],
    };
  }
}
