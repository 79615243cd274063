import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ChainScanner, NOT_JSON } from '@writ/eventstore';
import type { Logger } from '@writ/telemetry';
import { TlogError } from '../application/tlog-errors.js';
import type { TlogKeeper } from '../application/tlog-keeper.js';
import { OrderedFollower, type FollowStep } from './ordered-follower.js';

export interface TlogFollowerOptions {
  readonly nc: NatsConnection;
  readonly stream: string;
  /** `<prefix>.transparency_log.<log_id>`. */
  readonly subject: string;
  readonly keeper: TlogKeeper;
  readonly logger: Logger;
}

/**
 * Keeps the keeper's tree equal to the log's stream: every event appended
 * after the rebuild (by another instance, or this one) is read back, judged
 * on the log's chain as every reader of the log judges it (`ChainScanner`),
 * and folded in order. Junk on the subject is skipped (quarantined,
 * invariant 10); a break — what a changed event looks like — stops the log
 * (the keeper refuses proofs from then on) and this follower.
 */
export class TlogFollower {
  readonly #follower: OrderedFollower;
  /** Where the stream's chain is, from the keeper's head at start. */
  readonly #chain: ChainScanner;

  constructor(private readonly options: TlogFollowerOptions) {
    this.#chain = new ChainScanner({ entityType: 'transparency_log', entityId: options.keeper.logId }, { head: options.keeper.head, hashes: [] });
    this.#follower = new OrderedFollower({
      nc: options.nc,
      stream: options.stream,
      filter: options.subject,
      fromSeq: options.keeper.streamSeq + 1,
      onMessage: (message) => this.#ingest(message),
      name: 'tlog-follower',
      logger: options.logger,
    });
  }

  get running(): boolean {
    return this.#follower.running;
  }

  start(): void {
    this.#follower.start();
  }

  stop(): Promise<void> {
    return this.#follower.stop();
  }

  #ingest(message: JsMsg): FollowStep {
    const { keeper, logger } = this.options;
    let value: unknown;
    try {
      value = message.json<unknown>();
    } catch {
      value = NOT_JSON;
    }
    const verdict = this.#chain.classify(value);
    if (verdict.kind === 'quarantined') {
      logger.warn({ log_id: keeper.logId, stream_seq: message.seq, reason: verdict.reason }, `not an event of the transparency log, skipped: ${verdict.detail}`);
      return 'next';
    }
    try {
      if (verdict.kind === 'broken') {
        throw new TlogError('TLOG_CHAIN_BROKEN', `stream seq ${message.seq} of log ${keeper.logId} breaks its chain (${verdict.reason}): ${verdict.detail}`, {
          details: { log_id: keeper.logId, stream_seq: message.seq },
        });
      }
      keeper.ingest({ streamSeq: message.seq, event: verdict.event });
      return 'next';
    } catch (error) {
      logger.error({ err: error, log_id: keeper.logId, stream_seq: message.seq }, 'transparency log failed verification: no proof is served from it until it is repaired and the service restarted');
      return 'stop';
    }
  }
}
