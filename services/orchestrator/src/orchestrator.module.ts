import type { NatsConnection } from '@nats-io/transport-node';
import { Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { BusClient } from '@writ/bus';
import type { EventStore } from '@writ/eventstore';
import type { SignedRequestPrincipals } from '@writ/runtime';
import type { Logger } from '@writ/telemetry';
import type { Clock, CommandPublisher, ContextPackStore, ResolutionRefusals, TaskLog } from './application/ports.js';
import { KnowledgeRequestHandler, type KnowledgeSigner } from './application/knowledge-request.handler.js';
import { LastWillBeliefsHandler } from './application/last-will-beliefs.handler.js';
import { SubmitClaimHandler } from './application/submit-claim.handler.js';
import { TaskEventHandler } from './application/task-event.handler.js';
import type { OrchestratorConfig } from './config.js';
import { createClaimsListener } from './inbound/claims.listener.js';
import { HealthController } from './inbound/health.controller.js';
import { createKnowledgeListener } from './inbound/knowledge.listener.js';
import { createParticipantEventsListener } from './inbound/participant-events.listener.js';
import { createTaskEventsListener } from './inbound/task-events.listener.js';
import { ArtifactPackStore } from './outbound/artifact-pack-store.js';
import { BusCommandPublisher } from './outbound/bus.command-publisher.js';
import { EventStoreParticipantStreams } from './outbound/event-store.participant-streams.js';
import { EventStoreTaskLog } from './outbound/event-store.task-log.js';
import { Readiness } from './outbound/readiness.js';

export const TASK_LOG = Symbol.for('writ.orchestrator.TaskLog');
export const COMMAND_PUBLISHER = Symbol.for('writ.orchestrator.CommandPublisher');
export const CLOCK = Symbol.for('writ.orchestrator.Clock');

/** The durable consumer every orchestrator instance shares (competing consumers, one per process at a time). */
export const ORCHESTRATOR_DURABLE = 'orchestrator';

/** The durable of participants' events (Last Wills landing as beliefs), shared the same way. */
export const ORCHESTRATOR_PARTICIPANTS_DURABLE = 'orchestrator-participants';

/** The resources the bootstrap opened (async) and hands to the composition root. */
export interface OrchestratorResources {
  readonly config: OrchestratorConfig;
  readonly nc: NatsConnection;
  readonly store: EventStore;
  readonly readiness: Readiness;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Principals and their keys from the log: who may sign a claim (the task's owner, with an active key) or a knowledge request (and of which type: a tier's admission depends on it). */
  readonly principals: SignedRequestPrincipals<KnowledgeSigner>;
  /** Which director decisions in a task fail their authority check: folded as absent (DESIGN invariant 9). */
  readonly authority: ResolutionRefusals;
  /** Where context packs are stored; the shared artifact bucket (WRIT_ARTIFACTS_BUCKET) unless given. */
  readonly packs?: ContextPackStore;
  /** Runs last at shutdown, after NATS drained (main: flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
}

/** Drains the NATS connection last, after the bus server has stopped and acked its in-flight work; then `onShutdown`. */
class NatsConnectionLifecycle implements OnApplicationShutdown {
  constructor(
    private readonly nc: NatsConnection,
    private readonly onShutdown: (() => Promise<void>) | undefined,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
    await this.onShutdown?.();
  }
}

/** Composition root: ports bound to adapters, the listener bound to its configured subject. */
@Module({})
export class OrchestratorModule {
  static register(resources: OrchestratorResources): DynamicModule {
    const { config, nc, store, readiness, logger } = resources;
    const env = config.env;
    const consumer = {
      stream: env.WRIT_EVENTS_STREAM,
      // Tasks side by side; the listener keeps one task's events in arrival order.
      concurrency: env.WRIT_ORCHESTRATOR_CONCURRENCY,
      maxDeliver: env.WRIT_BUS_MAX_DELIVER,
      ackWaitMs: env.WRIT_BUS_ACK_WAIT_MS,
      backoff: { initialMs: env.WRIT_BUS_BACKOFF_INITIAL_MS },
      pullExpiresMs: env.WRIT_BUS_PULL_EXPIRES_MS,
    };
    const listener = createTaskEventsListener(config.subjects.taskEvents, { ...consumer, durable: ORCHESTRATOR_DURABLE, deadLetterSubject: config.subjects.deadLetter });
    const participants = createParticipantEventsListener(
      config.subjects.participantEvents,
      { ...consumer, durable: ORCHESTRATOR_PARTICIPANTS_DURABLE, deadLetterSubject: config.subjects.participantDeadLetter },
      logger,
    );
    const artifacts = resources.packs ?? new ArtifactPackStore(nc, { bucket: env.WRIT_ARTIFACTS_BUCKET, maxBytes: env.WRIT_ARTIFACTS_MAX_BYTES, replicas: env.WRIT_STREAM_REPLICAS });
    return {
      module: OrchestratorModule,
      controllers: [HealthController, listener, participants, createClaimsListener(config.subjects, logger), createKnowledgeListener(config.subjects, logger)],
      providers: [
        { provide: Readiness, useValue: readiness },
        { provide: NatsConnectionLifecycle, useValue: new NatsConnectionLifecycle(nc, resources.onShutdown) },
        { provide: BusClient, useFactory: () => new BusClient(nc) },
        { provide: CLOCK, useValue: resources.clock ?? (() => new Date()) },
        { provide: TASK_LOG, useFactory: () => new EventStoreTaskLog(store) },
        { provide: COMMAND_PUBLISHER, useFactory: (bus: BusClient) => new BusCommandPublisher(bus, config.subjects), inject: [BusClient] },
        {
          provide: TaskEventHandler,
          useFactory: (log: TaskLog, commands: CommandPublisher, clock: Clock) =>
            new TaskEventHandler({
              log,
              commands,
              clock,
              authority: resources.authority,
              actorId: env.WRIT_ORCHESTRATOR_PRINCIPAL_ID,
              executorPrincipalId: env.WRIT_EXECUTOR_PRINCIPAL_ID,
              packs: artifacts,
              logger,
            }),
          inject: [TASK_LOG, COMMAND_PUBLISHER, CLOCK],
        },
        {
          provide: SubmitClaimHandler,
          useFactory: (log: TaskLog, clock: Clock, events: TaskEventHandler) =>
            new SubmitClaimHandler({
              log,
              principals: resources.principals,
              clock,
              actorId: env.WRIT_ORCHESTRATOR_PRINCIPAL_ID,
              freshnessSeconds: env.WRIT_CLAIM_FRESHNESS_SECONDS,
              judge: (event) => events.handle(event),
              logger,
            }),
          inject: [TASK_LOG, CLOCK, TaskEventHandler],
        },
        {
          provide: LastWillBeliefsHandler,
          useFactory: (log: TaskLog, clock: Clock) =>
            new LastWillBeliefsHandler({ log, participants: new EventStoreParticipantStreams(store), artifacts, clock, actorId: env.WRIT_ORCHESTRATOR_PRINCIPAL_ID, logger }),
          inject: [TASK_LOG, CLOCK],
        },
        {
          provide: KnowledgeRequestHandler,
          useFactory: (log: TaskLog, clock: Clock) =>
            new KnowledgeRequestHandler({
              log,
              principals: resources.principals,
              clock,
              actorId: env.WRIT_ORCHESTRATOR_PRINCIPAL_ID,
              freshnessSeconds: env.WRIT_CLAIM_FRESHNESS_SECONDS,
              logger,
            }),
          inject: [TASK_LOG, CLOCK],
        },
      ],
    };
  }
}
