import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamServerStatus } from '@writ/bus';

/** What one check shows in the report (counts by name, e.g. quarantined messages by reason). */
export type ReadinessValue = boolean | string | number | readonly string[] | Readonly<Record<string, number>>;

/** A check that shows more than pass / fail: `value` is reported, `ok` decides. */
export interface ReadinessResult {
  readonly ok: boolean;
  readonly value: ReadinessValue;
}

/** A boolean is both the value shown and whether it passes. */
export type ReadinessCheck = () => boolean | ReadinessResult;

/** What `/readyz` answers (200 when `ready`, 503 otherwise). */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly status: 'ready' | 'not_ready';
  readonly checks: Readonly<Record<string, ReadinessValue>>;
}

/**
 * The named checks of one process's readiness, filled in as the process wires
 * itself (NATS connected, streams ensured, consumers bound...). The process is
 * ready when every check passes. No NestJS here: the HTTP adapter is
 * `HealthController` (`@writ/runtime/nest`).
 */
export class ReadinessRegistry {
  readonly #checks = new Map<string, ReadinessCheck>();

  /** Adds the check `name`, or replaces it (keeping its place in the report). */
  add(name: string, check: ReadinessCheck): this {
    this.#checks.set(name, check);
    return this;
  }

  report(): ReadinessReport {
    const checks: Record<string, ReadinessValue> = {};
    let ready = true;
    for (const [name, check] of this.#checks) {
      const result = check();
      const { ok, value } = typeof result === 'boolean' ? { ok: result, value: result } : result;
      checks[name] = value;
      ready &&= ok;
    }
    return { ready, status: ready ? 'ready' : 'not_ready', checks };
  }
}

/** The connection is open and not draining (a draining process is on its way out). */
export function natsConnected(nc: NatsConnection): ReadinessCheck {
  return () => !nc.isClosed() && !nc.isDraining();
}

/** The part of a bus server readiness looks at (`JetStreamServer`). */
export interface BusServer {
  readonly status: { subscribe(observer: (status: JetStreamServerStatus) => void): { unsubscribe(): void } };
  boundConsumers(): ReadonlyArray<{ readonly pattern: string; readonly durable: string; readonly stream?: string }>;
}

/**
 * Watches a bus server once it exists (it is created after the composition
 * root): its connection status and the durable consumers it bound.
 */
export class BusWatch {
  #server: BusServer | undefined;
  #status: JetStreamServerStatus | 'not_started' = 'not_started';
  #subscription: { unsubscribe(): void } | undefined;

  attach(server: BusServer): void {
    this.#subscription?.unsubscribe();
    this.#server = server;
    this.#subscription = server.status.subscribe((status) => {
      this.#status = status;
    });
  }

  /** Stops watching (the status stays as last seen). */
  detach(): void {
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
  }

  get status(): JetStreamServerStatus | 'not_started' {
    return this.#status;
  }

  /** Durable names of the consumers bound so far. */
  durables(): string[] {
    return this.#server?.boundConsumers().map((consumer) => consumer.durable) ?? [];
  }

  /** The consumers bound so far with their streams (what the stall watch samples). */
  consumers(): { readonly stream: string; readonly durable: string }[] {
    return (this.#server?.boundConsumers() ?? []).flatMap((consumer) => (consumer.stream === undefined ? [] : [{ stream: consumer.stream, durable: consumer.durable }]));
  }

  /** Shows the bus status; passes when `connected`. */
  statusCheck(): ReadinessCheck {
    return () => ({ ok: this.#status === 'connected', value: this.#status });
  }

  /** Shows the bound durables; passes when at least `expected` are bound. */
  durablesCheck(expected: number): ReadinessCheck {
    return () => {
      const durables = this.durables();
      return { ok: durables.length >= expected, value: durables };
    };
  }

  /** True when the bus is connected and at least `expected` consumers are bound. */
  boundCheck(expected: number): ReadinessCheck {
    return () => this.#status === 'connected' && this.durables().length >= expected;
  }
}
