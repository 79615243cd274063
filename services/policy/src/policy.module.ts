import { Module, type BeforeApplicationShutdown, type DynamicModule } from '@nestjs/common';
import { EventStoreTaskLog, busConsumerSettings, type ServiceRuntime } from '@writ/runtime';
import { HealthController, runtimeProviders } from '@writ/runtime/nest';
import type { Logger } from '@writ/telemetry';
import { ApplyProfileHandler } from './application/apply-profile.handler.js';
import { EvaluateDryRunHandler } from './application/evaluate-dry-run.handler.js';
import { EvaluatePolicyHandler } from './application/evaluate-policy.handler.js';
import type { Clock, PrincipalDirectory, ProfileLog, TaskLog } from './application/ports.js';
import type { ProfileAuthority } from './application/profile-authority.js';
import type { ProfileCatalog } from './application/profile-catalog.js';
import type { ProfileSync } from './application/profile-sync.js';
import type { PolicyConfig } from './config.js';
import { createPolicyCommandsListener } from './inbound/policy-commands.listener.js';
import { DryRunResponder } from './inbound/dry-run.responder.js';
import { POLICY_LOGGER, createPolicyQueriesListener } from './inbound/policy-queries.listener.js';
import type { ProfileWatch } from './outbound/kv-profile-bucket.js';
import type { LogParticipantScopes } from './outbound/log-participant-scopes.js';

export const SERVICE_NAME = 'policy';
export const TASK_LOG = Symbol.for('writ.policy.TaskLog');
export const CLOCK = Symbol.for('writ.policy.Clock');

/** The durable consumer every policy instance shares (competing consumers). */
export const POLICY_DURABLE = 'policy';

/** The profile store, opened and loaded before the app starts (readiness waits for the initial load). */
export interface PolicyProfileStore {
  readonly catalog: ProfileCatalog;
  readonly log: ProfileLog;
  readonly sync: ProfileSync;
  readonly watch: ProfileWatch;
  readonly principals: PrincipalDirectory;
  /** Who may have made a profile record (the catalog and the apply handler ask it). */
  readonly authority: ProfileAuthority;
}

export interface PolicyResources {
  readonly config: PolicyConfig;
  /** NATS, the log and readiness; drained by Nest at shutdown, after the bus stopped and acked its in-flight work. */
  readonly runtime: ServiceRuntime;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly profiles: PolicyProfileStore;
  /** Participants' manifest scopes, followed from the log (started before the app, stopped before NATS drains). */
  readonly participants: LogParticipantScopes;
}

/** Stops following the bucket before the connection drains (the loaded profiles stay in memory for in-flight work). */
class ProfileWatchShutdown implements BeforeApplicationShutdown {
  constructor(private readonly watch: ProfileWatch) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.watch.stop();
  }
}

/** Stops following the participant streams before the connection drains. */
class ParticipantScopesShutdown implements BeforeApplicationShutdown {
  constructor(private readonly participants: LogParticipantScopes) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.participants.stop();
  }
}

/** Composition root: ports bound to adapters, the listeners bound to their configured subjects. */
@Module({})
export class PolicyModule {
  static register(resources: PolicyResources): DynamicModule {
    const { config, runtime, logger, profiles, participants } = resources;
    const env = config.env;
    const commands = createPolicyCommandsListener(config.subjects.policyEvaluate, {
      stream: env.WRIT_COMMANDS_STREAM,
      durable: POLICY_DURABLE,
      deadLetterSubject: config.subjects.deadLetter,
      concurrency: env.WRIT_POLICY_CONCURRENCY,
      ...busConsumerSettings(env),
    });
    const queries = createPolicyQueriesListener(config.subjects);
    return {
      module: PolicyModule,
      controllers: [HealthController, commands, queries],
      providers: [
        ...runtimeProviders(runtime),
        { provide: CLOCK, useValue: resources.clock ?? (() => new Date()) },
        { provide: POLICY_LOGGER, useValue: logger },
        { provide: TASK_LOG, useFactory: () => new EventStoreTaskLog(runtime.store) },
        { provide: ProfileWatchShutdown, useFactory: () => new ProfileWatchShutdown(profiles.watch) },
        { provide: ParticipantScopesShutdown, useFactory: () => new ParticipantScopesShutdown(participants) },
        {
          provide: EvaluatePolicyHandler,
          useFactory: (log: TaskLog, clock: Clock) =>
            new EvaluatePolicyHandler({ log, clock, profiles: profiles.catalog, participants, principalId: env.WRIT_POLICY_PRINCIPAL_ID, logger }),
          inject: [TASK_LOG, CLOCK],
        },
        {
          provide: ApplyProfileHandler,
          useFactory: (clock: Clock) =>
            new ApplyProfileHandler({
              log: profiles.log,
              sync: profiles.sync,
              principals: profiles.principals,
              authority: profiles.authority,
              clock,
              principalId: env.WRIT_POLICY_PRINCIPAL_ID,
              freshnessSeconds: env.WRIT_POLICY_APPLY_FRESHNESS_SECONDS,
              logger,
            }),
          inject: [CLOCK],
        },
        { provide: EvaluateDryRunHandler, useFactory: () => new EvaluateDryRunHandler(profiles.catalog) },
        {
          provide: DryRunResponder,
          useFactory: (handler: EvaluateDryRunHandler) => new DryRunResponder(runtime.nc, config.subjects.evaluateDryRun, SERVICE_NAME, handler, logger),
          inject: [EvaluateDryRunHandler],
        },
      ],
    };
  }
}
