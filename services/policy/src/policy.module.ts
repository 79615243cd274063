import { Module, type DynamicModule } from '@nestjs/common';
import { EventStoreTaskLog, busConsumerSettings, type ServiceRuntime } from '@writ/runtime';
import { HealthController, runtimeProviders } from '@writ/runtime/nest';
import type { Logger } from '@writ/telemetry';
import { EvaluatePolicyHandler } from './application/evaluate-policy.handler.js';
import type { Clock, TaskLog } from './application/ports.js';
import type { PolicyConfig } from './config.js';
import { createPolicyCommandsListener } from './inbound/policy-commands.listener.js';

export const SERVICE_NAME = 'policy';
export const TASK_LOG = Symbol.for('writ.policy.TaskLog');
export const CLOCK = Symbol.for('writ.policy.Clock');

/** The durable consumer every policy instance shares (competing consumers). */
export const POLICY_DURABLE = 'policy';

export interface PolicyResources {
  readonly config: PolicyConfig;
  /** NATS, the log and readiness; drained by Nest at shutdown, after the bus stopped and acked its in-flight work. */
  readonly runtime: ServiceRuntime;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/** Composition root: ports bound to adapters, the listener bound to its configured subject. */
@Module({})
export class PolicyModule {
  static register(resources: PolicyResources): DynamicModule {
    const { config, runtime, logger } = resources;
    const env = config.env;
    const listener = createPolicyCommandsListener(config.subjects.policyEvaluate, {
      stream: env.WRIT_COMMANDS_STREAM,
      durable: POLICY_DURABLE,
      deadLetterSubject: config.subjects.deadLetter,
      concurrency: env.WRIT_POLICY_CONCURRENCY,
      ...busConsumerSettings(env),
    });
    return {
      module: PolicyModule,
      controllers: [HealthController, listener],
      providers: [
        ...runtimeProviders(runtime),
        { provide: CLOCK, useValue: resources.clock ?? (() => new Date()) },
        { provide: TASK_LOG, useFactory: () => new EventStoreTaskLog(runtime.store) },
        {
          provide: EvaluatePolicyHandler,
          useFactory: (log: TaskLog, clock: Clock) => new EvaluatePolicyHandler({ log, clock, principalId: env.WRIT_POLICY_PRINCIPAL_ID, logger }),
          inject: [TASK_LOG, CLOCK],
        },
      ],
    };
  }
}
