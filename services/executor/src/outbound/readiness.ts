import type { NatsConnection } from '@nats-io/transport-node';
import { hasErrorCode } from '@writ/contracts';
import type { CellPort } from '../application/ports.js';

export interface ReadinessCheck {
  readonly ok: boolean;
  readonly code?: string;
  /** What is wrong and how to fix it (never a secret, never a host path beyond the configured ones). */
  readonly message?: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: {
    readonly nats: ReadinessCheck;
    readonly streams: ReadinessCheck;
    readonly artifacts: ReadinessCheck;
    readonly consumer: ReadinessCheck;
    /** A durable with work waiting and no ack for WRIT_CONSUMER_STALL_SECONDS (docs/operations.md, "Stalls"), as in every service. */
    readonly consumers_stalled: ReadinessCheck;
    readonly cell_image: ReadinessCheck;
  };
}

/** Consumers a bus server bound (the JetStreamServer's `boundConsumers`). */
export interface BoundConsumers {
  boundConsumers(): ReadonlyArray<{ readonly pattern: string; readonly durable: string }>;
}

/** The durables stalled at the last sample (the runtime's `ConsumerStallWatch`). */
export interface StalledConsumers {
  readonly stalled: ReadonlyArray<{ readonly durable: string; readonly pending: number; readonly stuckMs: number }>;
}

const OK: ReadinessCheck = { ok: true };
const PING_TIMEOUT_MS = 2_000;

/**
 * What `/readyz` reports. The streams and the artifact bucket are ensured once at
 * start-up (start-up fails otherwise); the connection, the consumer and the cell
 * image are checked on every call, so an image deleted at run time (or built
 * late) shows at once.
 */
export class ExecutorReadiness {
  readonly #nc: NatsConnection;
  readonly #cells: CellPort;
  readonly #durable: string;
  #streams = false;
  #artifacts = false;
  #server: BoundConsumers | undefined;
  #stalls: StalledConsumers | undefined;

  constructor(nc: NatsConnection, cells: CellPort, durable: string) {
    this.#nc = nc;
    this.#cells = cells;
    this.#durable = durable;
  }

  markStreamsEnsured(): void {
    this.#streams = true;
  }

  markArtifactsEnsured(): void {
    this.#artifacts = true;
  }

  /** The bus server, once its consumers are bound (after `startAllMicroservices`). */
  attachBus(server: BoundConsumers): void {
    this.#server = server;
  }

  /** The stall watch over the bound durables (once it is sampling). */
  watchStalls(stalls: StalledConsumers): void {
    this.#stalls = stalls;
  }

  async check(): Promise<ReadinessReport> {
    const [nats, cellImage] = await Promise.all([this.#checkNats(), this.#checkImage()]);
    const checks = {
      nats,
      streams: this.#streams ? OK : { ok: false, code: 'EXECUTOR_NOT_READY', message: 'the event and bus streams are not ensured yet' },
      artifacts: this.#artifacts ? OK : { ok: false, code: 'EXECUTOR_NOT_READY', message: 'the artifact bucket is not ensured yet' },
      consumer: this.#checkConsumer(),
      consumers_stalled: this.#checkStalls(),
      cell_image: cellImage,
    };
    return { ready: Object.values(checks).every((check) => check.ok), checks };
  }

  #checkConsumer(): ReadinessCheck {
    const bound = this.#server?.boundConsumers().some((consumer) => consumer.durable === this.#durable) ?? false;
    return bound ? OK : { ok: false, code: 'EXECUTOR_NOT_READY', message: `the durable consumer ${this.#durable} is not bound yet` };
  }

  #checkStalls(): ReadinessCheck {
    const stalled = this.#stalls?.stalled ?? [];
    if (stalled.length === 0) return OK;
    const named = stalled.map((consumer) => `${consumer.durable}: ${consumer.pending} message(s) waiting, no progress for ${Math.round(consumer.stuckMs / 1000)} s`);
    return { ok: false, code: 'EXECUTOR_NOT_READY', message: `stalled: ${named.join('; ')}` };
  }

  async #checkNats(): Promise<ReadinessCheck> {
    if (this.#nc.isClosed() || this.#nc.isDraining()) return { ok: false, code: 'EXECUTOR_NOT_READY', message: 'the NATS connection is closed or draining' };
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), PING_TIMEOUT_MS)));
      const answer = await Promise.race([this.#nc.flush().then(() => 'pong' as const), timeout]);
      return answer === 'pong' ? OK : { ok: false, code: 'EXECUTOR_NOT_READY', message: `NATS did not answer a ping within ${PING_TIMEOUT_MS} ms` };
    } catch {
      return { ok: false, code: 'EXECUTOR_NOT_READY', message: 'NATS did not answer a ping' };
    } finally {
      clearTimeout(timer);
    }
  }

  async #checkImage(): Promise<ReadinessCheck> {
    try {
      await this.#cells.ensureImage();
      return OK;
    } catch (error) {
      const code = hasErrorCode(error) ? error.code : 'EXECUTOR_NOT_READY';
      return { ok: false, code, message: error instanceof Error ? error.message : String(error) };
    }
  }
}
