import type { NatsConnection } from '@nats-io/transport-node';
import { Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { EventStore } from '@writ/eventstore';
import type { Logger } from '@writ/telemetry';
import { EvaluatePolicyHandler } from './application/evaluate-policy.handler.js';
import type { Clock, TaskLog } from './application/ports.js';
import type { PolicyConfig } from './config.js';
import { HealthController } from './inbound/health.controller.js';
import { createPolicyCommandsListener } from './inbound/policy-commands.listener.js';
import { EventStoreTaskLog } from './outbound/event-store.task-log.js';
import { Readiness } from './outbound/readiness.js';

export const TASK_LOG = Symbol.for('writ.policy.TaskLog');
export const CLOCK = Symbol.for('writ.policy.Clock');

/** The durable consumer every policy instance shares (competing consumers). */
export const POLICY_DURABLE = 'policy';

export interface PolicyResources {
  readonly config: PolicyConfig;
  readonly nc: NatsConnection;
  readonly store: EventStore;
  readonly readiness: Readiness;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/** Drains the NATS connection last, after the bus server has stopped and acked its in-flight work. */
class NatsConnectionLifecycle implements OnApplicationShutdown {
  constructor(private readonly nc: NatsConnection) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

/** Composition root: ports bound to adapters, the listener bound to its configured subject. */
@Module({})
export class PolicyModule {
  static register(resources: PolicyResources): DynamicModule {
    const { config, nc, store, readiness, logger } = resources;
    const env = config.env;
    const listener = createPolicyCommandsListener(config.subjects.policyEvaluate, {
      stream: env.WRIT_COMMANDS_STREAM,
      durable: POLICY_DURABLE,
      deadLetterSubject: config.subjects.deadLetter,
      concurrency: env.WRIT_POLICY_CONCURRENCY,
      maxDeliver: env.WRIT_BUS_MAX_DELIVER,
      ackWaitMs: env.WRIT_BUS_ACK_WAIT_MS,
      backoff: { initialMs: env.WRIT_BUS_BACKOFF_INITIAL_MS },
      pullExpiresMs: env.WRIT_BUS_PULL_EXPIRES_MS,
    });
    return {
      module: PolicyModule,
      controllers: [HealthController, listener],
      providers: [
        { provide: Readiness, useValue: readiness },
        { provide: NatsConnectionLifecycle, useValue: new NatsConnectionLifecycle(nc) },
        { provide: CLOCK, useValue: resources.clock ?? (() => new Date()) },
        { provide: TASK_LOG, useFactory: () => new EventStoreTaskLog(store) },
        {
          provide: EvaluatePolicyHandler,
          useFactory: (log: TaskLog, clock: Clock) => new EvaluatePolicyHandler({ log, clock, principalId: env.WRIT_POLICY_PRINCIPAL_ID, logger }),
          inject: [TASK_LOG, CLOCK],
        },
      ],
    };
  }
}
