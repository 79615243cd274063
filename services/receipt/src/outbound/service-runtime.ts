import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { OnApplicationShutdown } from '@nestjs/common';
import { EventStore } from '@writ/eventstore';
import { ensureWritStreams, loadOrCreateServiceKey, registerServicePrincipal } from '@writ/runtime';
import type { Ed25519SigningKey } from '@writ/crypto';
import type { Logger } from '@writ/telemetry';

export interface ServiceRuntimeOptions {
  readonly serviceName: string;
  readonly natsUrl: string;
  readonly streams: {
    readonly events: string;
    readonly eventsPrefix: string;
    readonly ingress: string;
    readonly commands: string;
    readonly dlq: string;
    readonly replicas: number;
    readonly eventsMaxBytes: number | undefined;
    readonly busMaxBytes: number | undefined;
  };
  readonly subjects: { readonly ingress: string; readonly commands: string; readonly dlq: string };
  readonly principal: { readonly id: string; readonly displayName: string; readonly keyFile: string };
  readonly logger: Logger;
}

/**
 * What the process holds beside the Nest app: its NATS connection, the bus
 * streams (ensured), the event store and its signing key (registered as a
 * service principal in the log, where every verifier finds it). Closed after the
 * bus has drained (`onApplicationShutdown` runs after the microservice closed).
 */
export class ServiceRuntime implements OnApplicationShutdown {
  private closed = false;

  private constructor(
    readonly nc: NatsConnection,
    readonly store: EventStore,
    readonly key: Ed25519SigningKey,
    private readonly logger: Logger,
  ) {}

  static async start(options: ServiceRuntimeOptions): Promise<ServiceRuntime> {
    const nc = await connect({ servers: options.natsUrl, name: `writ-${options.serviceName}` });
    try {
      const { streams } = options;
      await ensureWritStreams(await jetstreamManager(nc), {
        replicas: streams.replicas,
        names: { ingress: streams.ingress, commands: streams.commands, dlq: streams.dlq },
        subjects: options.subjects,
        ...(streams.busMaxBytes === undefined ? {} : { maxBytes: streams.busMaxBytes }),
      });
      const store = await EventStore.open(nc, {
        stream: streams.events,
        subjectPrefix: streams.eventsPrefix,
        replicas: streams.replicas,
        ...(streams.eventsMaxBytes === undefined ? {} : { maxBytes: streams.eventsMaxBytes }),
      });
      // The kid is only used when the key is generated: one per key, so a regenerated key is registered, never shadowed.
      const { key, created } = await loadOrCreateServiceKey(options.principal.keyFile, `${options.principal.id}-${Date.now().toString(36)}`);
      const registration = await registerServicePrincipal(store, { principalId: options.principal.id, displayName: options.principal.displayName, key });
      options.logger.info({ principal_id: options.principal.id, kid: key.kid, key_created: created, registration }, 'service principal ready');
      return new ServiceRuntime(nc, store, key, options.logger);
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  }

  get connected(): boolean {
    return !this.closed && !this.nc.isClosed();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /** Drains the connection; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.nc.isClosed()) await this.nc.drain().catch((error: unknown) => this.logger.warn({ err: error }, 'NATS connection did not drain cleanly'));
  }
}
