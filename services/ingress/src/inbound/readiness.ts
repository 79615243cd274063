import type { NatsConnection } from '@nats-io/transport-node';
import type { IngressActionConsumer } from './ingress-action.consumer.js';

/** What `/readyz` reports: NATS connected, streams ensured (at boot), consumer bound, responders listening. */
export class IngressReadiness {
  respondersListening = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly consumer: IngressActionConsumer,
  ) {}

  check(): { readonly ready: boolean; readonly checks: Readonly<Record<string, boolean>> } {
    const checks = {
      nats_connected: !this.nc.isClosed() && !this.nc.isDraining(),
      streams_ensured: true,
      consumer_bound: this.consumer.bound,
      responders_listening: this.respondersListening,
    };
    return { ready: Object.values(checks).every(Boolean), checks };
  }
}
