import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamServer, JetStreamServerStatus } from '@writ/bus';
import type { Subscription } from 'rxjs';

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: {
    readonly nats_connected: boolean;
    readonly streams_ensured: boolean;
    readonly bus: JetStreamServerStatus | 'not_started';
    readonly consumers_bound: readonly string[];
  };
}

/**
 * What `/readyz` reports: NATS connected, the streams the service needs
 * ensured, and its durable consumers bound. Filled in by the bootstrap as
 * each becomes true.
 */
export class Readiness {
  #nc: NatsConnection | undefined;
  #streamsEnsured = false;
  #server: JetStreamServer | undefined;
  #status: JetStreamServerStatus | 'not_started' = 'not_started';
  #watch: Subscription | undefined;

  constructor(private readonly expectedConsumers: number) {}

  connected(nc: NatsConnection): void {
    this.#nc = nc;
  }

  streamsEnsured(): void {
    this.#streamsEnsured = true;
  }

  listening(server: JetStreamServer): void {
    this.#server = server;
    this.#watch?.unsubscribe();
    this.#watch = server.status.subscribe((status) => {
      this.#status = status;
    });
  }

  stop(): void {
    this.#watch?.unsubscribe();
  }

  report(): ReadinessReport {
    const natsConnected = this.#nc !== undefined && !this.#nc.isClosed();
    const consumers = this.#server?.boundConsumers().map((consumer) => consumer.durable) ?? [];
    const ready = natsConnected && this.#streamsEnsured && this.#status === 'connected' && consumers.length >= this.expectedConsumers;
    return { ready, checks: { nats_connected: natsConnected, streams_ensured: this.#streamsEnsured, bus: this.#status, consumers_bound: consumers } };
  }
}
