import type { NatsConnection } from '@nats-io/transport-node';
import type { BeforeApplicationShutdown } from '@nestjs/common';
import type { EventStore } from '@writ/eventstore';
import type { Logger } from '@writ/telemetry';
import type { ReceiptOutcome, TlogKeeper } from '../application/tlog-keeper.js';
import { ReceiptSequencer } from './receipt-sequencer.js';
import { TlogFollower } from './tlog-follower.js';
import { TreeHeadTimer } from './tree-head.timer.js';

export interface TransparencyLogProcessOptions {
  readonly nc: NatsConnection;
  readonly store: EventStore;
  /** The event log's stream (`WRIT_EVENTS`) and subject prefix (`<root>.evt`). */
  readonly stream: string;
  readonly eventsPrefix: string;
  readonly keeper: TlogKeeper;
  readonly treeHeadIntervalMs: number;
  /** The receipt service principal, whose keys alone may sign a receipt the log admits. */
  readonly principalId: string;
  readonly logger: Logger;
  readonly onSequenced?: (receiptId: string, outcome: ReceiptOutcome) => void;
}

/**
 * The background work of the transparency log in one receipt service
 * instance: the follower that keeps the tree equal to the log's stream, the
 * sequencer that turns `receipt.issued` into leaves, and the tree head timer.
 * Stopped before the bus drains and the connection closes.
 */
export class TransparencyLogProcess implements BeforeApplicationShutdown {
  readonly #follower: TlogFollower;
  readonly #sequencer: ReceiptSequencer;
  readonly #timer: TreeHeadTimer;
  #stopping: Promise<void> | undefined;

  constructor(private readonly options: TransparencyLogProcessOptions) {
    const { nc, store, stream, eventsPrefix, keeper, logger } = options;
    this.#follower = new TlogFollower({ nc, stream, subject: `${eventsPrefix}.transparency_log.${keeper.logId}`, keeper, logger });
    this.#sequencer = new ReceiptSequencer({ nc, store, stream, taskSubjects: `${eventsPrefix}.task.>`, keeper, principalId: options.principalId, logger, onSequenced: options.onSequenced });
    this.#timer = new TreeHeadTimer({ keeper, intervalMs: options.treeHeadIntervalMs, logger });
  }

  /** For readiness: the log verified, and its follower and sequencer running. */
  get healthy(): boolean {
    return this.options.keeper.failure === undefined && this.#follower.running && this.#sequencer.running;
  }

  /** Follows the log, then starts sequencing and the tree head timer. */
  async start(): Promise<void> {
    this.#follower.start();
    await this.#sequencer.start();
    this.#timer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /** Idempotent: stops the timer, the sequencer and the follower; the keeper refuses anything after. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      const { keeper, logger } = this.options;
      keeper.close();
      const results = await Promise.allSettled([this.#timer.stop(), this.#sequencer.stop(), this.#follower.stop()]);
      for (const result of results) if (result.status === 'rejected') logger.warn({ err: result.reason }, 'transparency log process did not stop cleanly');
    })();
    return this.#stopping;
  }
}
