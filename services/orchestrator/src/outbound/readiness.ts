import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamServer, JetStreamServerStatus } from '@writ/bus';
import type { QuarantineCounts } from '@writ/contracts';
import type { ConsumerStallWatch, QuarantineLedger } from '@writ/runtime';
import type { Subscription } from 'rxjs';

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: {
    readonly nats_connected: boolean;
    readonly streams_ensured: boolean;
    readonly bus: JetStreamServerStatus | 'not_started';
    readonly consumers_bound: readonly string[];
    /** The durables stalled on the server (work waiting, ack floor still): any makes it unready. */
    readonly consumers_stalled: readonly string[];
    /** What this process skipped as junk (invariant 10), by reason; never makes it unready. */
    readonly quarantined: QuarantineCounts;
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
  #stalls: ConsumerStallWatch | undefined;
  #quarantine: QuarantineLedger | undefined;

  constructor(private readonly expectedConsumers: number) {}

  /** The stall watch over the bound durables and the ledger of what was quarantined. */
  watching(stalls: ConsumerStallWatch, quarantine: QuarantineLedger): void {
    this.#stalls = stalls;
    this.#quarantine = quarantine;
  }

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
    const stalled = this.#stalls?.stalled.map((consumer) => `${consumer.durable}: ${consumer.pending} message(s) waiting, no progress for ${Math.round(consumer.stuckMs / 1000)} s`) ?? [];
    const ready = natsConnected && this.#streamsEnsured && this.#status === 'connected' && consumers.length >= this.expectedConsumers && stalled.length === 0;
    return {
      ready,
      checks: {
        nats_connected: natsConnected,
        streams_ensured: this.#streamsEnsured,
        bus: this.#status,
        consumers_bound: consumers,
        consumers_stalled: stalled,
        quarantined: this.#quarantine?.counts() ?? { total: 0, by_reason: {} },
      },
    };
  }
}
