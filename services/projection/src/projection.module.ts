import { Inject, Injectable, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { BusClient, patternToken } from '@writ/bus';
import type { ServiceRuntime } from '@writ/runtime';
import type { Logger } from '@writ/telemetry';
import type { DataSource } from 'typeorm';
import { randomBytes } from 'node:crypto';
import { Forwarding } from './application/forwarding.js';
import { ProjectionStatusReader } from './application/projection-status.js';
import { Projector } from './application/projector.js';
import { ContextPackReads } from './application/context-packs.js';
import { ConversationReads } from './application/conversations.js';
import { ReadService } from './application/read-service.js';
import { NatsArtifactReader } from './outbound/nats/artifact-reader.js';
import { ReceiptProofs } from './application/receipt-proofs.js';
import { Readiness, type WiringProbe } from './application/readiness.js';
import { RebuildJobs } from './application/rebuild-job.js';
import { ChangeNotifier } from './application/change-notifier.js';
import { ChangeStreams } from './application/change-stream.js';
import { ChangesService } from './application/changes.js';
import type { UpdatePublisher } from './application/ports.js';
import { SERVICE_NAME, underRoot, type ProjectionConfig } from './config.js';
import { COMMANDS } from '@writ/contracts';
import { ActionsController } from './inbound/http/actions.controller.js';
import { ASYNCAPI_DOCUMENT, AsyncApiController, deploymentAsyncApi } from './inbound/http/asyncapi.controller.js';
import { ChangesController } from './inbound/http/changes.controller.js';
import { ApprovalsController } from './inbound/http/approvals.controller.js';
import { ArtifactsController } from './inbound/http/artifacts.controller.js';
import { CellsController } from './inbound/http/cells.controller.js';
import { HealthController } from './inbound/http/health.controller.js';
import { KeysController } from './inbound/http/keys.controller.js';
import { OpenApiController } from './inbound/http/openapi/openapi.controller.js';
import { ProblemsController } from './inbound/http/problems.controller.js';
import { ConversationsController } from './inbound/http/conversations.controller.js';
import { GrantsController } from './inbound/http/grants.controller.js';
import { PrincipalsController } from './inbound/http/principals.controller.js';
import { ProjectionsController } from './inbound/http/projections.controller.js';
import { ReceiptProofController } from './inbound/http/receipt-proof.controller.js';
import { ReceiptsController } from './inbound/http/receipts.controller.js';
import { StepsController } from './inbound/http/steps.controller.js';
import { TasksController } from './inbound/http/tasks.controller.js';
import { MemoryController } from './inbound/http/memory.controller.js';
import { createProjectorListener } from './inbound/projector.listener.js';
import { REBUILD_LOGGER, rebuildListener } from './inbound/rebuild.listener.js';
import { PostgresRebuildJobStore } from './outbound/database/rebuild-job-store.js';
import { PostgresRebuildTargets } from './outbound/database/rebuild-targets.js';
import { TypeormProjectionStore } from './outbound/database/typeorm-projection-store.js';
import { JetStreamEventLog } from './outbound/nats/jetstream-event-log.js';
import { NatsUpdatePublisher } from './outbound/nats/nats-update-publisher.js';
import { BusUpstream } from './outbound/nats/bus-upstream.js';
import { ProjectionGauges } from './outbound/telemetry/projection-gauges.js';

/** What the process opened before Nest starts (see `bootstrap.ts`); the module owns them from then on and releases them at shutdown. */
export interface ProjectionResources {
  readonly config: ProjectionConfig;
  /** NATS and the event log. */
  readonly runtime: ServiceRuntime;
  readonly dataSource: DataSource;
  readonly wiring: WiringProbe;
  readonly logger: Logger;
  /** Runs last at shutdown (e.g. flush telemetry). */
  readonly onShutdown?: () => Promise<void>;
}

export const PROJECTION_RESOURCES = Symbol.for('writ.projection.resources');

/** Releases what the process opened, after Nest has stopped HTTP and drained the consumer. */
@Injectable()
class ResourceLifecycle implements OnApplicationShutdown, BeforeApplicationShutdown {
  constructor(
    @Inject(PROJECTION_RESOURCES) private readonly resources: ProjectionResources,
    @Inject(ProjectionGauges) private readonly gauge: ProjectionGauges,
    @Inject(RebuildJobs) private readonly rebuilds: RebuildJobs,
    @Inject(ChangeStreams) private readonly streams: ChangeStreams,
  ) {}

  /** Open change streams end first (`closing`, shutdown): HTTP's close would wait for them. */
  beforeApplicationShutdown(): void {
    this.streams.closeAll();
  }

  async onApplicationShutdown(): Promise<void> {
    const { dataSource, runtime, logger, onShutdown } = this.resources;
    this.gauge.stop();
    // A running rebuild stops between two batches (nothing swapped) and records it, while Postgres and NATS are still there.
    await this.rebuilds.stop().catch((error: unknown) => logger.warn({ err: error }, 'the rebuild job did not stop cleanly'));
    if (dataSource.isInitialized) await dataSource.destroy().catch((error: unknown) => logger.warn({ err: error }, 'Postgres pool did not close cleanly'));
    await runtime.close();
    logger.info('projection stopped: consumer drained, Postgres and NATS released');
    await onShutdown?.();
  }
}

/**
 * Composition root: binds the application (projector, reads, forwarding,
 * readiness) to its adapters (Postgres through typeorm, the log through the
 * event store, NATS) and the inbound side (the durable consumer, HTTP).
 */
@Module({})
export class ProjectionModule {
  static register(resources: ProjectionResources): DynamicModule {
    const { config, logger } = resources;
    const pattern = config.subjects.projectorPattern;
    const listener = createProjectorListener(pattern, {
      stream: config.streams.events,
      ...config.projector,
      deadLetterSubject: `${config.subjects.deadLetters}.${SERVICE_NAME}.${patternToken(pattern)}`,
    });
    return {
      module: ProjectionModule,
      controllers: [
        listener,
        rebuildListener(config.subjects),
        ActionsController,
        TasksController,
        MemoryController,
        ApprovalsController,
        ReceiptsController,
        ReceiptProofController,
        KeysController,
        GrantsController,
        PrincipalsController,
        StepsController,
        ArtifactsController,
        CellsController,
        ProjectionsController,
        ChangesController,
        AsyncApiController,
        HealthController,
        OpenApiController,
        ProblemsController,
        ConversationsController,
      ],
      providers: [
        { provide: PROJECTION_RESOURCES, useValue: resources },
        { provide: TypeormProjectionStore, useFactory: () => new TypeormProjectionStore(resources.dataSource) },
        { provide: JetStreamEventLog, useFactory: () => new JetStreamEventLog(resources.runtime.store, resources.runtime.jsm) },
        { provide: ChangeNotifier, useValue: new ChangeNotifier() },
        {
          provide: Projector,
          useFactory: (store: TypeormProjectionStore, log: JetStreamEventLog, notifier: ChangeNotifier) => {
            const nats = new NatsUpdatePublisher(resources.runtime.nc, config.subjects.projections, logger);
            // After each commit: the rows on <root>.proj.*, and a wake-up for this instance's change streams.
            const publisher: UpdatePublisher = {
              publish: (changes) => {
                nats.publish(changes);
                if (changes.length > 0) notifier.notify();
              },
            };
            return new Projector({ store, log, publisher, eventsPrefix: config.subjects.eventsPrefix, eventsStream: config.streams.events, logger });
          },
          inject: [TypeormProjectionStore, JetStreamEventLog, ChangeNotifier],
        },
        { provide: ChangesService, useFactory: (store: TypeormProjectionStore) => new ChangesService(store), inject: [TypeormProjectionStore] },
        {
          provide: ChangeStreams,
          useFactory: (store: TypeormProjectionStore, notifier: ChangeNotifier) => new ChangeStreams({ feed: store, notifier, options: config.sse, logger }),
          inject: [TypeormProjectionStore, ChangeNotifier],
        },
        { provide: ASYNCAPI_DOCUMENT, useFactory: () => deploymentAsyncApi(config.subjects.root, config.nats.url) },
        { provide: ReadService, useFactory: (store: TypeormProjectionStore) => new ReadService(store), inject: [TypeormProjectionStore] },
        {
          provide: ContextPackReads,
          useFactory: (reads: ReadService) => new ContextPackReads(reads, new NatsArtifactReader(resources.runtime.nc, config.artifactsBucket)),
          inject: [ReadService],
        },
        {
          provide: ConversationReads,
          useFactory: (store: TypeormProjectionStore) => new ConversationReads(store, new NatsArtifactReader(resources.runtime.nc, config.artifactsBucket)),
          inject: [TypeormProjectionStore],
        },
        {
          provide: Forwarding,
          useFactory: () => new Forwarding(new BusUpstream(new BusClient(resources.runtime.nc), config.upstreamTimeoutMs), config.subjects),
        },
        {
          provide: ReceiptProofs,
          useFactory: () =>
            new ReceiptProofs(new BusUpstream(new BusClient(resources.runtime.nc), config.upstreamTimeoutMs), underRoot(COMMANDS.receiptInclusionProof, config.subjects.root)),
        },
        {
          provide: Readiness,
          useFactory: (store: TypeormProjectionStore, log: JetStreamEventLog) =>
            new Readiness({ wiring: resources.wiring, store, log, model: store, ...(config.streams.consumerStallMs === undefined ? {} : { stallAfterMs: config.streams.consumerStallMs }) }),
          inject: [TypeormProjectionStore, JetStreamEventLog],
        },
        {
          provide: ProjectionGauges,
          useFactory: (readiness: Readiness, store: TypeormProjectionStore) => new ProjectionGauges({ lag: () => readiness.lag(), pendingApprovals: () => store.pendingApprovals() }, logger),
          inject: [Readiness, TypeormProjectionStore],
        },
        { provide: REBUILD_LOGGER, useValue: logger },
        {
          provide: RebuildJobs,
          useFactory: (store: TypeormProjectionStore, log: JetStreamEventLog) =>
            new RebuildJobs({
              live: store,
              log,
              targets: new PostgresRebuildTargets(resources.dataSource, config.pg, config.rebuild.swapLockTimeoutMs),
              jobs: new PostgresRebuildJobStore(resources.dataSource, config.pg, logger),
              eventsPrefix: config.subjects.eventsPrefix,
              logger,
              now: () => new Date(),
              newJobId: () => `rebuild-${new Date().toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}-${randomBytes(4).toString('hex')}`,
            }),
          inject: [TypeormProjectionStore, JetStreamEventLog],
        },
        {
          provide: ProjectionStatusReader,
          useFactory: (readiness: Readiness, store: TypeormProjectionStore, rebuilds: RebuildJobs) => new ProjectionStatusReader({ readiness, model: store, store, rebuilds }),
          inject: [Readiness, TypeormProjectionStore, RebuildJobs],
        },
        ResourceLifecycle,
      ],
    };
  }
}
