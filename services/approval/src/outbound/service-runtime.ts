import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectBus } from '@writ/bus';
import type { OnApplicationShutdown } from '@nestjs/common';
import { EventStore } from '@writ/eventstore';
import { PrincipalRegistry, RotatingServiceKey, ensureWritStreams, loadServiceEnrollment, serviceAuthorship, warnKeptCapacities, type ServiceStreams } from '@writ/runtime';
import type { Ed25519SigningKey } from '@writ/crypto';
import type { Logger } from '@writ/telemetry';

export interface ServiceRuntimeOptions {
  readonly serviceName: string;
  readonly natsUrl: string;
  /** The log and the bus streams, as every service configures them (`serviceStreams`). */
  readonly streams: ServiceStreams;
  readonly subjects: { readonly ingress: string; readonly commands: string; readonly dlq: string };
  /** `keyDir`: the rotating keyring; `keyFile`: the single key file of older releases, migrated in on first start. */
  readonly principal: { readonly id: string; readonly displayName: string; readonly keyFile: string; readonly keyDir: string };
  /** The clock of key rotation and retirement (default: the system clock). */
  readonly clock?: () => Date;
  readonly logger: Logger;
  /** Runs last when the runtime closes, after NATS drained (main: flush telemetry). */
  readonly onClose?: () => Promise<void>;
  /** The service's own environment: its bus credential, authorship, seal keys, enrollment (default `process.env`; apps/serve gives each service its own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * What the process holds beside the Nest app: its NATS connection, the bus
 * streams (ensured), the event store, its rotating signing key (registered as
 * a service principal in the log; `keys.active` signs now) and the principal
 * registry. Closed after the bus has drained (`onApplicationShutdown` runs
 * after the microservice closed).
 */
export class ServiceRuntime implements OnApplicationShutdown {
  private closed = false;

  private constructor(
    readonly nc: NatsConnection,
    readonly store: EventStore,
    readonly keys: RotatingServiceKey,
    readonly registry: PrincipalRegistry,
    private readonly logger: Logger,
    private readonly onClose: (() => Promise<void>) | undefined,
  ) {}

  static async start(options: ServiceRuntimeOptions): Promise<ServiceRuntime> {
    const nc = await connectBus({ servers: options.natsUrl, name: `writ-${options.serviceName}` }, options.env, { waitForServer: true });
    try {
      const { streams } = options;
      await ensureWritStreams(await jetstreamManager(nc), {
        replicas: streams.replicas,
        names: { ingress: streams.ingress, commands: streams.commands, dlq: streams.dlq },
        subjects: options.subjects,
        maxBytes: streams.busMaxBytes,
      });
      const store = await EventStore.open(nc, {
        stream: streams.events,
        subjectPrefix: streams.eventsPrefix,
        replicas: streams.replicas,
        maxBytes: streams.eventsMaxBytes,
        readCacheEvents: streams.eventsReadCache,
      }, authorshipStore(options.env));
      warnKeptCapacities(store, options.logger);
      // The operator's enrollment of this principal (writ init): without it, no reader trusts the grants it signs.
      const authorization = await loadServiceEnrollment(options.principal.id, options.env);
      const { key: keys } = await RotatingServiceKey.start(store, {
        ...(authorization === undefined ? {} : { authorization }),
        principalId: options.principal.id,
        displayName: options.principal.displayName,
        keyDir: options.principal.keyDir,
        legacyKeyFile: options.principal.keyFile,
        logger: options.logger,
        ...(options.clock === undefined ? {} : { clock: options.clock }),
      });
      const registry = await PrincipalRegistry.start(nc, store, { stream: streams.events, subjectPrefix: streams.eventsPrefix });
      return new ServiceRuntime(nc, store, keys, registry, options.logger, options.onClose);
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  }

  /** The key that signs now. */
  get key(): Ed25519SigningKey {
    return this.keys.active;
  }

  get connected(): boolean {
    return !this.closed && !this.nc.isClosed();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /** Stops the registry, drains the connection, then runs `onClose`; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.keys.stop();
    await this.registry.close().catch((error: unknown) => this.logger.warn({ err: error }, 'principal registry did not close cleanly'));
    if (!this.nc.isClosed()) await this.nc.drain().catch((error: unknown) => this.logger.warn({ err: error }, 'NATS connection did not drain cleanly'));
    await this.onClose?.();
  }
}

/** The event store's authorship check, as the environment says (`WRIT_AUTHORSHIP`); the rotating key seals. */
function authorshipStore(env: Readonly<Record<string, string | undefined>> | undefined): { authorship?: NonNullable<ReturnType<typeof serviceAuthorship>['store']> } {
  const { store } = serviceAuthorship(env);
  return store === undefined ? {} : { authorship: store };
}
