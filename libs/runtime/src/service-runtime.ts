import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectBus, connectConsumerBus, serverList, type BusStartOptions, type NatsCredentialEnvironment } from '@writ/bus';
import type { PrincipalRole, QuarantineRecord } from '@writ/contracts';
import type { Ed25519SigningKey } from '@writ/crypto';
import { EventStore, eventSealer, type AuthorshipOptions } from '@writ/eventstore';
import type { Logger } from '@writ/telemetry';
import { PrincipalRegistry, registerServicePrincipal } from './principal-registry.js';
import { loadServiceEnrollment } from './service-enrollment.js';
import { RotatingServiceKey } from './rotating-service-key.js';
import { ConsumerStallWatch, type ConsumerRef } from './consumer-stall.js';
import { countDeadLetters, natsCredentialExpiry, observeRuntimeMetrics, retiringKeyExpiry, type DeadLetterSource } from './runtime-metrics.js';
import { QuarantineLedger } from './quarantine-ledger.js';
import { BusWatch, ReadinessRegistry, natsConnected, type BusServer } from './readiness.js';
import { RuntimeError } from './runtime-errors.js';
import { serviceAuthorship, useSealKey } from './service-authorship.js';
import { loadOrCreateServiceKey } from './service-key.js';
import type { ServiceStreams } from './service-environment.js';
import { writSubjects, type WritSubjects } from './subject-root.js';
import { ensureWritStreams } from './writ-streams.js';

export interface ServiceRuntimeOptions {
  /** Names the NATS connection (default) and the log lines. */
  readonly serviceName: string;
  /** The NATS connection's name, if not the service name. */
  readonly connectionName?: string;
  /** NATS server(s), comma-separated (`WRIT_NATS_URL`). */
  readonly natsUrl: string;
  /** `WRIT_SUBJECT_ROOT`: the bus streams capture `<root>.ingress.>`, `<root>.cmd.>`, `<root>.dlq.>`. */
  readonly subjectRoot: string;
  readonly streams: ServiceStreams;
  readonly logger: Logger;
  /** Runs last when the runtime closes, after NATS drained (e.g. flush telemetry). */
  readonly onClose?: () => Promise<void>;
  /**
   * Check every event's author as the log is read (docs/security.md,
   * "Authorship"): each service's principal id. An event whose seal does not
   * prove a service allowed to author it is quarantined and never handed on.
   * Default: as the environment says (`serviceAuthorship`: `WRIT_AUTHORSHIP`);
   * null: never.
   */
  readonly authorship?: AuthorshipOptions | null;
  /**
   * The service's own environment: its bus credential (`WRIT_NATS_CREDS` and the consumer
   * credential beside it), `WRIT_AUTHORSHIP`, its seal key directory and enrollment. Default
   * `process.env`; several services in one process (apps/serve) each pass their own, so none
   * connects with another's credential.
   */
  readonly env?: NatsCredentialEnvironment;
}

export interface SigningKeyOptions {
  /** The service principal (`writ-receipt`). */
  readonly principalId: string;
  readonly displayName: string;
  /** A private Ed25519 JWK (mode 0600), generated there on first start. */
  readonly keyFile: string;
  readonly roles?: PrincipalRole[];
  /** The principal's ServiceEnrollment JWS; default: `loadServiceEnrollment` (WRIT_SERVICE_ENROLLMENT, else under WRIT_HOME). */
  readonly authorization?: string;
}

export interface RotatingKeyOptions {
  /** The service principal (`writ-receipt`). */
  readonly principalId: string;
  readonly displayName: string;
  /** The key directory: `<kid>.jwk.json` (0600) and `keyring.json`; replicas of the service may share it. */
  readonly keyDir: string;
  /** The single key file of older releases, migrated into the directory on its first start. */
  readonly legacyKeyFile?: string;
  readonly roles?: PrincipalRole[];
  /** The principal's ServiceEnrollment JWS; default: `loadServiceEnrollment` (WRIT_SERVICE_ENROLLMENT, else under WRIT_HOME). */
  readonly authorization?: string;
  /** The clock of rotation and retirement (default: the system clock). */
  readonly clock?: () => Date;
}

/**
 * What a service process holds beside its Nest app: the NATS connection, the
 * bus streams and the event log (ensured at start, under the configured names
 * and subject root), and on request its signing key (registered as a service
 * principal in the log, where every verifier finds it) and the principal
 * registry. Also the readiness every service reports (`nats_connected`,
 * `streams_ensured`, `quarantined` — the messages its readers skipped as
 * junk, by reason — and `consumers_stalled`; the service adds its consumers)
 * and the watch on its bus server.
 *
 * Closed after the bus has drained: provide it in the composition root
 * (`onApplicationShutdown` runs after Nest closed the microservice and HTTP),
 * or close it from the service's own shutdown hook.
 */
export class ServiceRuntime {
  readonly readiness = new ReadinessRegistry();
  readonly bus = new BusWatch();
  /** What this process quarantined (invariant 10): counted for readiness, logged once each. */
  readonly quarantine: QuarantineLedger;
  /** The bus's durables and those `watchConsumer` adds, sampled for stalls. */
  readonly stalls: ConsumerStallWatch;
  readonly #watched: ConsumerRef[] = [];
  #registry: PrincipalRegistry | undefined;
  #keys: RotatingServiceKey | undefined;
  #closing: Promise<void> | undefined;
  readonly #stopMetrics: () => void;
  /** The environment the service was started with (`ServiceRuntimeOptions.env`). */
  readonly env: NatsCredentialEnvironment;

  private constructor(
    readonly nc: NatsConnection,
    /**
     * Where the service pulls from JetStream (its durables, followers of the log, long reads): the
     * connection of its consumer credential when it has one (bus `connectConsumerBus`), else `nc`.
     */
    readonly pullNc: NatsConnection,
    readonly jsm: JetStreamManager,
    readonly store: EventStore,
    readonly subjects: WritSubjects,
    private readonly options: ServiceRuntimeOptions,
  ) {
    this.env = options.env ?? process.env;
    this.quarantine = new QuarantineLedger(options.logger);
    store.onQuarantine((record) => this.quarantine.record(record, 'eventstore'));
    this.stalls = new ConsumerStallWatch(jsm, {
      stallAfterMs: options.streams.consumerStallMs ?? DEFAULT_STALL_MS,
      checkMs: options.streams.consumerStallCheckMs ?? DEFAULT_STALL_CHECK_MS,
      consumers: () => [...this.bus.consumers(), ...this.#watched],
      logger: options.logger,
    });
    this.stalls.start();
    this.readiness
      .add('nats_connected', natsConnected(nc))
      .add('streams_ensured', () => true)
      .add('quarantined', this.quarantine.check())
      .add('consumers_stalled', this.stalls.check());
    this.#stopMetrics = observeRuntimeMetrics({
      service: options.serviceName,
      ready: () => this.readiness.report().ready,
      consumers: () => this.stalls.readings(),
      quarantined: () => this.quarantine.counts(),
      keys: async () => [...(await natsCredentialExpiry(this.env)), ...retiringKeyExpiry(this.#keys?.retiring() ?? [])],
    });
  }

  /** Follows a bus server: its status and durables (readiness, stall watch) and the messages it quarantines. */
  attachBus(server: BusServer & { on(event: 'quarantine', listener: (record: QuarantineRecord) => void): unknown } & DeadLetterSource): void {
    this.bus.attach(server);
    server.on('quarantine', (record) => this.quarantine.record(record, 'bus'));
    countDeadLetters(server);
  }

  /** Watches a durable the bus server does not own (a service's own consumer) for stalls too. */
  watchConsumer(consumer: ConsumerRef): void {
    this.#watched.push(consumer);
  }

  /**
   * Connects (RUNTIME_NATS_UNAVAILABLE when NATS cannot be reached), ensures the
   * bus streams and opens the event log; on any failure the connection is
   * closed again and the error thrown.
   */
  static async start(options: ServiceRuntimeOptions): Promise<ServiceRuntime> {
    const env = options.env ?? process.env;
    const nc = await connectNats(options.natsUrl, options.connectionName ?? options.serviceName, { waitForServer: true }, env);
    let pulling: NatsConnection | undefined;
    try {
      pulling = await connectConsumerBus(options.connectionName ?? options.serviceName, options.natsUrl, env);
      const { streams } = options;
      const subjects = writSubjects(options.subjectRoot, streams.eventsPrefix);
      const jsm = await jetstreamManager(nc);
      await ensureWritStreams(jsm, {
        names: { ingress: streams.ingress, commands: streams.commands, dlq: streams.dlq },
        subjects: subjects.streams,
        maxBytes: streams.busMaxBytes,
        replicas: streams.replicas,
      });
      const store = await EventStore.open(nc, {
        stream: streams.events,
        subjectPrefix: streams.eventsPrefix,
        maxBytes: streams.eventsMaxBytes,
        readCacheEvents: streams.eventsReadCache,
        replicas: streams.replicas,
      }, authorshipOf(options.authorship, env), { scans: pulling });
      warnKeptCapacities(store, options.logger);
      return new ServiceRuntime(nc, pulling ?? nc, jsm, store, subjects, options);
    } catch (error) {
      await pulling?.close().catch(() => undefined);
      await nc.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Loads (or creates) the service's signing key and makes sure the log holds
   * it for the service principal: registered on first start, added after a
   * rotation, otherwise unchanged. The key seals every event the service
   * appends from then on, its own registration first (any service principal:
   * this is how each service gets its sealing key).
   */
  async useSigningKey(options: SigningKeyOptions): Promise<Ed25519SigningKey> {
    // The kid is only used when the key is generated: one per key, so a regenerated key is registered, never shadowed.
    const { key, created } = await loadOrCreateServiceKey(options.keyFile, `${options.principalId}-${Date.now().toString(36)}`);
    this.store.sealWith(eventSealer(options.principalId, key));
    const authorization = options.authorization ?? (await loadServiceEnrollment(options.principalId, this.env));
    const registration = await registerServicePrincipal(this.store, {
      principalId: options.principalId,
      displayName: options.displayName,
      key,
      roles: options.roles,
      ...(authorization === undefined ? {} : { authorization }),
    });
    this.options.logger.info({ principal_id: options.principalId, kid: key.kid, key_created: created, registration }, 'service principal ready');
    return key;
  }

  /**
   * Gives the service its sealing key (`useSealKey`: `WRIT_SEAL_KEY_DIR`, made
   * on first start, registered on its principal's own subject); every event
   * it appends is sealed from then on. Approval and receipt seal with their
   * rotating key instead (`useRotatingKey`).
   */
  async useSealKey(options: { readonly principalId: string; readonly displayName: string }): Promise<Ed25519SigningKey> {
    const { key, created, registration } = await useSealKey(this.store, { ...options, keyFile: serviceAuthorship(this.env).sealKeyFile(options.principalId) }, this.env);
    this.options.logger.info({ principal_id: options.principalId, kid: key.kid, key_created: created, registration }, 'service seal key ready');
    return key;
  }

  /**
   * Opens the service's rotating signing key (`RotatingServiceKey`: the key
   * directory, the legacy key file migrated in, the principal and its active
   * key made sure of in the log, a half-done rotation finished). Its
   * retirement checks, once started, stop when the runtime closes.
   */
  async useRotatingKey(options: RotatingKeyOptions): Promise<RotatingServiceKey> {
    const authorization = options.authorization ?? (await loadServiceEnrollment(options.principalId, this.env));
    const { key } = await RotatingServiceKey.start(this.store, { ...options, ...(authorization === undefined ? {} : { authorization }), logger: this.options.logger });
    this.#keys = key;
    return key;
  }

  /** Starts following the principals in the log (stopped when the runtime closes). */
  async startPrincipalRegistry(): Promise<PrincipalRegistry> {
    this.#registry ??= await PrincipalRegistry.start(this.nc, this.store, { stream: this.options.streams.events, subjectPrefix: this.options.streams.eventsPrefix });
    return this.#registry;
  }

  /** Open and not closing. */
  get connected(): boolean {
    return this.#closing === undefined && !this.nc.isClosed();
  }

  /** Nest calls it once the microservice and HTTP are closed. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /** Stops the key's retirement checks and the registry, drains the connection, then runs `onClose`; idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const { logger } = this.options;
      this.bus.detach();
      this.#stopMetrics();
      await this.stalls.stop();
      await this.#keys?.stop();
      await this.#registry?.close().catch((error: unknown) => logger.warn({ err: error }, 'principal registry did not close cleanly'));
      if (this.pullNc !== this.nc && !this.pullNc.isClosed()) await this.pullNc.drain().catch((error: unknown) => logger.warn({ err: error }, 'the consumers\' NATS connection did not drain cleanly'));
      if (!this.nc.isClosed()) await this.nc.drain().catch((error: unknown) => logger.warn({ err: error }, 'NATS connection did not drain cleanly'));
      await this.options.onClose?.();
    })();
    return this.#closing;
  }
}

/** The store's authorship: as given, none for null, else as the environment says. */
function authorshipOf(option: AuthorshipOptions | null | undefined, env: NatsCredentialEnvironment): { authorship?: AuthorshipOptions } {
  if (option === null) return {};
  const authorship = option ?? serviceAuthorship(env).store;
  return authorship === undefined ? {} : { authorship };
}

const DEFAULT_STALL_MS = 120_000;
const DEFAULT_STALL_CHECK_MS = 5_000;

/**
 * Tells the service's log when the event log runs higher capacities than the service is configured
 * with (replicas, bytes, messages, message size): kept as they are, since only `writ streams ensure`
 * lowers them (docs/operations.md); the operator configures the service like the stream.
 */
export function warnKeptCapacities(store: Pick<EventStore, 'stream'>, logger: Pick<Logger, 'warn'>): void {
  if (Object.keys(store.stream.kept).length === 0) return;
  logger.warn({ stream: store.stream.stream, kept: store.stream.kept }, 'the event log runs higher capacities than this service is configured with: kept as they are (only writ streams ensure changes them); configure the service like the stream');
}

/** Connects to the comma-separated `servers` with `env`'s credential; RUNTIME_NATS_UNAVAILABLE when none answers. */
export async function connectNats(servers: string, name: string, start: BusStartOptions = {}, env: NatsCredentialEnvironment = process.env): Promise<NatsConnection> {
  const list = serverList(servers) ?? [];
  try {
    return await connectBus({ servers: list, name }, env, start);
  } catch (cause) {
    // A URL may carry credentials (nats://user:password@host): never in an error.
    const shown = list.map((server) => server.replace(/\/\/[^/@\s]*@/, '//[REDACTED]@')).join(',');
    throw new RuntimeError('RUNTIME_NATS_UNAVAILABLE', `cannot connect to NATS at ${shown}; check WRIT_NATS_URL (is nats-server running with -js?)`, {
      cause,
      details: { servers: shown },
    });
  }
}
