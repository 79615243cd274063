import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { EventStore } from '@writ/eventstore';
import { ensureWritStreams, loadTrustAnchor, NatsArtifactStore, PrincipalRegistry, RegistrationAuthority, serviceAuthorship, useSealKey, warnKeptCapacities } from '@writ/runtime';
import type { TrustAnchor } from '@writ/contracts';
import { createLogger, type Logger } from '@writ/telemetry';
import { CellLifecycle } from './application/cell-lifecycle.js';
import { CellRouter, MAX_FORWARD_HOPS } from './application/cell-routing.js';
import { CloseCellHandler } from './application/close-cell.handler.js';
import { RenewCellHandler } from './application/renew-cell.handler.js';
import { ResurrectCellHandler } from './application/resurrect-cell.handler.js';
import { ObserveWorkspaceHandler } from './application/observe-workspace.handler.js';
import { RunActionHandler } from './application/run-action.handler.js';
import { TaskSerializer } from './application/task-serializer.js';
import { DEFAULT_CELL_LIFECYCLE, DEFAULT_ROUTING, hostRoutes, PREIMAGE_MAX_BYTES_DEFAULT, type ExecutorConfig } from './config.js';
import { CellSweepTimer } from './inbound/cell-sweep.timer.js';
import { renewCellListener } from './inbound/renew-cell.listener.js';
import { resurrectCellListener } from './inbound/resurrect-cell.listener.js';
import { closeCellListener } from './inbound/close-cell.listener.js';
import { HealthController } from './inbound/health.controller.js';
import { observeListener } from './inbound/observe.listener.js';
import { resolveOutcomeListener } from './inbound/resolve-outcome.listener.js';
import { ResolveOutcomeHandler } from './application/resolve-outcome.handler.js';
import { runActionListener } from './inbound/run-action.listener.js';
import { BUS_STREAMS, EXECUTOR_CONFIG, EXECUTOR_LOGGER, EXECUTOR_OPTIONS, JOURNAL_SWEEP_TIMER, NATS_CONNECTION, TRUST_ANCHOR } from './executor.tokens.js';
import { artifactStoreFailure } from './outbound/artifact-store.js';
import { CELL_DEFAULTS, CellPool, CellRuntime, type CellRuntimeOptions } from './outbound/cells/index.js';
import { EventStoreCellLog } from './outbound/cell-event-log.js';
import { CellHost } from './outbound/cells/cell-host.js';
import { NatsCheckpointStore } from './outbound/checkpoint-store.js';
import { EventStoreMemoryLog, EventStoreTaskLog } from './outbound/event-log.js';
import { ExecutorCells, ExecutorUseRecords } from './outbound/executor-cells.js';
import { FileUseJournal } from './outbound/use-journal.js';
import { HostForwarder } from './outbound/host-forwarder.js';
import { DirectorySecretSource } from './outbound/secrets/index.js';
import Docker from 'dockerode';
import { EgressNetworks, type EgressNetworksOptions } from './outbound/egress/index.js';
import { ExecutorReadiness } from './outbound/readiness.js';
import { WorkspaceObserver } from './outbound/workspace-observer.js';

/** What a caller (main, or a test starting the service in-process) may add to the config. */
export interface ExecutorOptions {
  /** Extra cell runtime options (e.g. `labels` so tests can remove what they made). */
  readonly cells?: Omit<CellRuntimeOptions, 'image' | 'cellsRoot' | 'socketPath'>;
  /** The adapter clock (default: the system clock). */
  readonly clock?: () => Date;
  readonly logger?: Logger;
  /** Egress of actions whose grant names hosts: the proxy's resolver and extra network labels (tests). */
  readonly egress?: Pick<EgressNetworksOptions, 'lookup' | 'labels'>;
  /** Called last when the app closes (e.g. flushing telemetry). */
  readonly onShutdown?: () => Promise<void>;
  /** The service's own environment: its bus credential, authorship, seal keys, enrollment (default `process.env`; apps/serve gives each service its own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** ±window a director's signed outcome resolution (or cell resurrection or renewal) is accepted in (as for every director-signed request). */
const RESOLUTION_FRESHNESS_SECONDS = 300;

/** How long a RunAction may stay unacked by a crashed process: the action's timeout plus slack. */
export function runAckWaitMs(config: ExecutorConfig, hostGraceMs: number): number {
  return config.actionTimeoutMs + hostGraceMs + 30_000;
}

/** Drains what the executor opened, after the bus has drained (Nest closes microservices first). */
@Injectable()
class ExecutorLifecycle implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(PrincipalRegistry) private readonly registry: PrincipalRegistry,
    @Inject(RunActionHandler) private readonly handler: RunActionHandler,
    @Inject(EXECUTOR_OPTIONS) private readonly options: ExecutorOptions,
    @Inject(ExecutorCells) private readonly cells: ExecutorCells,
    @Inject(CellSweepTimer) private readonly sweepTimer: CellSweepTimer,
    @Inject(JOURNAL_SWEEP_TIMER) private readonly journalSweep: CellSweepTimer,
  ) {}

  onApplicationBootstrap(): void {
    this.sweepTimer.start();
    this.journalSweep.start();
  }

  /** Before the bus drains: a delivery waiting on another process's claim hands it back; no sweep starts any more. */
  async onModuleDestroy(): Promise<void> {
    this.handler.stop();
    await this.sweepTimer.stop();
    await this.journalSweep.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    // The bus has drained: no open can claim a pooled cell any more.
    await this.cells.stopPool();
    await this.registry.close();
    if (!this.nc.isClosed()) await this.nc.drain();
    await this.options.onShutdown?.();
  }
}

/**
 * The executor's composition root: NATS, the event log, the bus streams, the
 * principal registry (grant issuer keys from the log), the artifact bucket and
 * the Docker cells, bound to the RunAction handler; `/healthz` and `/readyz`;
 * the `<root>.cmd.executor.run` listener and the `<root>.qry.executor.observe` responder, and
 * this host's own copies of run, close-cell and observe (README → Several hosts).
 */
@Module({})
export class ExecutorModule {
  /** `nc` is the service's NATS connection (opened by the bootstrap, drained at shutdown). */
  static register(config: ExecutorConfig, nc: NatsConnection, options: ExecutorOptions = {}): DynamicModule {
    const hostGraceMs = options.cells?.hostGraceMs ?? CELL_DEFAULTS.hostGraceMs;
    // createExecutorApp resolves the host id (WRIT_EXECUTOR_HOST_ID or derived); a module registered by hand is one host per process.
    const hostId = config.hostId ?? config.executorId;
    const routes = hostRoutes(config.subjects, config.durable, hostId);
    const runOptions = {
      stream: config.streams.commands,
      concurrency: config.concurrency,
      ackWaitMs: runAckWaitMs(config, hostGraceMs),
      maxDeliver: config.bus.maxDeliver,
      pullExpiresMs: config.bus.pullExpiresMs,
      deadLetterSubject: config.subjects.runDeadLetter,
    };
    const listener = runActionListener(config.subjects.run, { ...runOptions, durable: config.durable });
    // This host's own subject: RunActions of tasks whose cell it holds, forwarded by other hosts. A filter
    // without wildcards matches its own subject only, so the shared durable above never sees these.
    const hostListener = runActionListener(routes.run, { ...runOptions, durable: routes.runDurable });
    // Its own durable on the commands stream (competing consumers, like run); closing is quick.
    const closeOptions = {
      stream: config.streams.commands,
      concurrency: config.concurrency,
      maxDeliver: config.bus.maxDeliver,
      pullExpiresMs: config.bus.pullExpiresMs,
      deadLetterSubject: config.subjects.closeCellDeadLetter,
    };
    const closeListener = closeCellListener(config.subjects.closeCell, { ...closeOptions, durable: `${config.durable}-close-cell` });
    const hostCloseListener = closeCellListener(routes.closeCell, { ...closeOptions, durable: routes.closeCellDurable });
    return {
      module: ExecutorModule,
      controllers: [
        HealthController,
        listener,
        hostListener,
        closeListener,
        hostCloseListener,
        observeListener(config.subjects.observe, { routed: true }),
        // Observations relayed by other hosts: answered from this host's files, never relayed again.
        observeListener(routes.observe, { routed: false }),
        resolveOutcomeListener(config.subjects.resolveOutcome),
        resurrectCellListener(config.subjects.resurrectCell),
        // Not routed to the cell's holder: a renewal only appends to the cell's log (README → Cells).
        renewCellListener(config.subjects.renewCell),
      ],
      providers: [
        { provide: EXECUTOR_CONFIG, useValue: config },
        { provide: EXECUTOR_OPTIONS, useValue: options },
        { provide: EXECUTOR_LOGGER, useValue: options.logger ?? createLogger('executor', { base: { executor_id: config.executorId } }) },
        { provide: NATS_CONNECTION, useValue: nc },
        {
          provide: EventStore,
          inject: [NATS_CONNECTION, EXECUTOR_LOGGER],
          useFactory: async (nc: NatsConnection, logger: Logger) => {
            const authorship = serviceAuthorship(options.env);
            const store = await EventStore.open(
              nc,
              {
                stream: config.streams.events,
                subjectPrefix: config.subjects.eventsPrefix,
                maxBytes: config.streams.eventsMaxBytes,
                readCacheEvents: config.streams.eventsReadCache,
                replicas: config.streams.replicas,
              },
              authorship.store === undefined ? {} : { authorship: authorship.store },
            );
            warnKeptCapacities(store, logger);
            // Every event the executor appends is sealed by its key (docs/security.md, "Authorship").
            await useSealKey(store, { principalId: config.principalId, displayName: 'Writ executor', keyFile: authorship.sealKeyFile(config.principalId) }, options.env);
            return store;
          },
        },
        {
          provide: BUS_STREAMS,
          inject: [NATS_CONNECTION],
          useFactory: async (nc: NatsConnection) => {
            await ensureWritStreams(await jetstreamManager(nc), {
              names: { ingress: config.streams.ingress, commands: config.streams.commands, dlq: config.streams.dlq },
              subjects: { ingress: config.subjects.ingress, commands: config.subjects.commands, dlq: config.subjects.dlq },
              maxBytes: config.streams.busMaxBytes,
              replicas: config.streams.replicas,
            });
            return true;
          },
        },
        {
          provide: TRUST_ANCHOR,
          inject: [EXECUTOR_LOGGER],
          useFactory: async (logger: Logger): Promise<{ anchor: TrustAnchor | undefined }> => {
            if (config.grant.trustAnchorFile === undefined) {
              logger.warn('no WRIT_TRUST_ANCHOR: no grant issuer key can be checked back to an operator, so every grant is refused (GRANT_ISSUER_UNAUTHORIZED)');
              return { anchor: undefined };
            }
            return { anchor: await loadTrustAnchor(config.grant.trustAnchorFile) };
          },
        },
        {
          provide: PrincipalRegistry,
          inject: [NATS_CONNECTION, EventStore],
          useFactory: (nc: NatsConnection, store: EventStore) =>
            PrincipalRegistry.start(nc, store, { stream: config.streams.events, subjectPrefix: config.subjects.eventsPrefix }),
        },
        {
          provide: NatsArtifactStore,
          inject: [NATS_CONNECTION],
          useFactory: (nc: NatsConnection) =>
            NatsArtifactStore.open(nc, { bucket: config.artifacts.bucket, maxBytes: config.artifacts.maxBytes, replicas: config.streams.replicas, failure: artifactStoreFailure }),
        },
        {
          provide: ExecutorCells,
          inject: [EXECUTOR_LOGGER],
          useFactory: async (logger: Logger) => {
            // useRecords: every action keeps a per-use record outside its workspace (crash reconciliation).
            const runtime = new CellRuntime({ ...options.cells, image: config.cells.image, cellsRoot: config.cells.cellsRoot, socketPath: config.cells.socketPath, useRecords: true, diskQuotaBytes: config.cells.diskQuotaBytes ?? 0, supervisor: config.cells.supervisor ?? true });
            // The pool's owner is this executor: a restart with the same id reaps what the last process left.
            const pool = config.cells.poolSize > 0 ? new CellPool(runtime, { size: config.cells.poolSize, owner: config.executorId, logger }) : undefined;
            // Egress: per-action internal networks + proxy for grants naming hosts; a crashed process's are reaped first.
            const egress = new EgressNetworks(new Docker({ socketPath: config.cells.socketPath }), { ...options.egress, owner: config.executorId, logger });
            await egress.reap().catch((error: unknown) => logger.warn({ err: error }, 'egress networks of an earlier process could not be reaped'));
            const cells = new ExecutorCells(runtime, pool, new DirectorySecretSource(config.secretsDir), egress);
            await cells.startPool();
            return cells;
          },
        },
        {
          provide: ExecutorReadiness,
          inject: [NATS_CONNECTION, ExecutorCells, BUS_STREAMS, NatsArtifactStore],
          useFactory: (nc: NatsConnection, cells: ExecutorCells) => {
            // Both were awaited as dependencies: start-up fails before here if either cannot be ensured.
            const readiness = new ExecutorReadiness(nc, cells, config.durable);
            readiness.markStreamsEnsured();
            readiness.markArtifactsEnsured();
            return readiness;
          },
        },
        { provide: TaskSerializer, useValue: new TaskSerializer() },
        {
          provide: CellLifecycle,
          inject: [NATS_CONNECTION, EventStore, ExecutorCells, NatsArtifactStore, TaskSerializer, EXECUTOR_LOGGER],
          useFactory: async (nc: NatsConnection, store: EventStore, cells: ExecutorCells, artifacts: NatsArtifactStore, serializer: TaskSerializer, logger: Logger) => {
            const lifecycle = config.cellLifecycle ?? DEFAULT_CELL_LIFECYCLE;
            return new CellLifecycle(
              {
                log: new EventStoreCellLog(store, await jetstreamManager(nc)),
                host: new CellHost(cells.runtime, { checkpointMaxBytes: lifecycle.checkpointMaxBytes, checkpointTimeoutMs: lifecycle.checkpointTimeoutMs }),
                // The same bucket, with owner notes: a purge after the archive retention deletes only the cell's own objects.
                store: new NatsCheckpointStore(nc, artifacts),
                tasks: new EventStoreTaskLog(store),
                serializer,
                clock: options.clock ?? (() => new Date()),
                // The executor's own heartbeat: liveness on core NATS, never a fact of the log.
                beacon: { beat: (beat) => nc.publish(`${config.subjects.heartbeatPrefix}.${config.executorId}`, JSON.stringify({ ...beat, host_id: hostId })) },
                logger,
              },
              { executorId: config.executorId, hostId, principalId: config.principalId, policy: lifecycle.policy, checkpointIntervalMs: lifecycle.checkpointIntervalMs },
            );
          },
        },
        {
          provide: CellRouter,
          inject: [NATS_CONNECTION, CellLifecycle, EXECUTOR_LOGGER],
          useFactory: (nc: NatsConnection, lifecycle: CellLifecycle, logger: Logger) => {
            const forwarder = new HostForwarder(nc, config.subjects, (config.routing ?? DEFAULT_ROUTING).observeRelayTimeoutMs);
            return new CellRouter({ cells: lifecycle, forwarder, relay: forwarder, clock: options.clock ?? (() => new Date()), logger }, { hostId, maxHops: MAX_FORWARD_HOPS });
          },
        },
        {
          provide: CellSweepTimer,
          inject: [CellLifecycle, EXECUTOR_LOGGER],
          useFactory: (lifecycle: CellLifecycle, logger: Logger) => new CellSweepTimer(lifecycle, (config.cellLifecycle ?? DEFAULT_CELL_LIFECYCLE).sweepIntervalMs, logger),
        },
        {
          // A journaled use whose delivery is gone unsettled (its message dead-lettered after repeated
          // failures, its completion append failing past the bus's retries) is settled here, on the
          // cell sweep's interval, without waiting for the next start (issue 13).
          provide: JOURNAL_SWEEP_TIMER,
          inject: [RunActionHandler, EXECUTOR_LOGGER],
          useFactory: (handler: RunActionHandler, logger: Logger) =>
            new CellSweepTimer({ sweep: () => handler.reconcileJournal() }, (config.cellLifecycle ?? DEFAULT_CELL_LIFECYCLE).sweepIntervalMs, logger),
        },
        {
          provide: CloseCellHandler,
          inject: [ExecutorCells, TaskSerializer, CellLifecycle, CellRouter, EXECUTOR_LOGGER],
          useFactory: (cells: ExecutorCells, serializer: TaskSerializer, lifecycle: CellLifecycle, router: CellRouter, logger: Logger) => new CloseCellHandler({ cells, serializer, lifecycle, routing: router, logger }),
        },
        {
          provide: ResurrectCellHandler,
          inject: [CellLifecycle, PrincipalRegistry],
          useFactory: (lifecycle: CellLifecycle, registry: PrincipalRegistry) =>
            new ResurrectCellHandler({
              lifecycle,
              // The signer's keys and roles as its stream says now.
              principals: { lookup: (id) => registry.current(id), verificationKeys: (id) => registry.verificationKeys(id, { fresh: true }) },
              clock: options.clock ?? (() => new Date()),
              freshnessSeconds: RESOLUTION_FRESHNESS_SECONDS,
            }),
        },
        {
          provide: RenewCellHandler,
          inject: [CellLifecycle, PrincipalRegistry],
          useFactory: (lifecycle: CellLifecycle, registry: PrincipalRegistry) =>
            new RenewCellHandler({
              lifecycle,
              principals: { lookup: (id) => registry.current(id), verificationKeys: (id) => registry.verificationKeys(id, { fresh: true }) },
              clock: options.clock ?? (() => new Date()),
              freshnessSeconds: RESOLUTION_FRESHNESS_SECONDS,
            }),
        },
        {
          provide: RunActionHandler,
          inject: [EventStore, PrincipalRegistry, ExecutorCells, NatsArtifactStore, TaskSerializer, CellLifecycle, CellRouter, EXECUTOR_LOGGER, TRUST_ANCHOR],
          useFactory: (
            store: EventStore,
            registry: PrincipalRegistry,
            cells: ExecutorCells,
            artifacts: NatsArtifactStore,
            serializer: TaskSerializer,
            lifecycle: CellLifecycle,
            router: CellRouter,
            logger: Logger,
            trust: { anchor: TrustAnchor | undefined },
          ) => {
            const handler = new RunActionHandler(
              {
                log: new EventStoreTaskLog(store),
                // The issuer's keys as its stream says now, not as the follower last saw it: a retired
                // (revoked) signing key is refused from the next use on, like a revoked grant.
                keys: {
                  verificationKeys: (principalId) => registry.verificationKeys(principalId, { fresh: true }),
                  // Read fresh at each use: the issuer's key must chain to the trust anchor (its enrollment by an operator).
                  unauthorized: async (principalId, kid) => {
                    const authority = new RegistrationAuthority(async (id) => (await store.readEntity('principal', id)).map(({ event }) => event), trust.anchor);
                    const refusal = await authority.key(principalId, kid);
                    return refusal === undefined ? undefined : `${refusal.code}: ${refusal.message}`;
                  },
                },
                cells,
                artifacts,
                clock: options.clock ?? (() => new Date()),
                logger,
                serializer,
                journal: new FileUseJournal(config.cells.cellsRoot, config.executorId),
                records: new ExecutorUseRecords(cells.runtime),
                cellSessions: lifecycle,
                routing: router,
                // memory_write (issue 17): the record's own stream, and the proposer's registration as its stream says now.
                memory: { log: new EventStoreMemoryLog(store), proposers: { principalType: async (id) => (await registry.current(id))?.principal_type } },
              },
              {
                executorId: config.executorId,
                hostId,
                principalId: config.principalId,
                grantIssuer: config.grant.issuer,
                grantAudience: config.grant.audience,
                actionTimeoutMs: config.actionTimeoutMs,
                outputCapBytes: config.outputCapBytes,
                hostGraceMs,
                claimGraceMs: config.claimGraceMs,
                claimPollMs: config.claimPollMs,
                artifactFileMaxBytes: config.artifacts.fileMaxBytes,
                artifactFilesMax: config.artifacts.filesMax,
                preimageMaxBytes: config.artifacts.preimageMaxBytes ?? PREIMAGE_MAX_BYTES_DEFAULT,
                ...(config.tls === undefined ? {} : { extraCaPem: config.tls.extraCaPem }),
              },
            );
            // Uses this executor left in flight on this host (a crash, kill -9) are settled in the background.
            void handler.reconcileJournal().then(
              ({ settled }) => (settled > 0 ? logger.info({ settled }, 'journaled uses reconciled after start') : undefined),
              (error: unknown) => logger.error({ err: error }, 'journal reconciliation failed'),
            );
            return handler;
          },
        },
        {
          provide: ObserveWorkspaceHandler,
          inject: [ExecutorCells],
          useFactory: (cells: ExecutorCells) =>
            new ObserveWorkspaceHandler(
              {
                observer: new WorkspaceObserver((taskId) => cells.runtime.hostPaths(taskId).workspaceDir, config.observe),
                clock: options.clock ?? (() => new Date()),
              },
              { maxPasses: config.observe.maxPasses },
            ),
        },
        {
          provide: ResolveOutcomeHandler,
          inject: [EventStore, PrincipalRegistry],
          useFactory: (store: EventStore, registry: PrincipalRegistry) =>
            new ResolveOutcomeHandler({
              log: new EventStoreTaskLog(store),
              // The signer's keys and roles as its stream says now: a key revoked a moment ago does not resolve.
              principals: { lookup: (id) => registry.current(id), verificationKeys: (id) => registry.verificationKeys(id, { fresh: true }) },
              clock: options.clock ?? (() => new Date()),
              principalId: config.principalId,
              freshnessSeconds: RESOLUTION_FRESHNESS_SECONDS,
            }),
        },
        ExecutorLifecycle,
      ],
    };
  }
}
