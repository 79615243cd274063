import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { EventEnvelope } from '@writ/contracts';
import { computeEventHash } from '@writ/eventstore';
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
 * after the rebuild (by another instance, or this one) is read back, its
 * hash recomputed, and folded in order. A corrupt event stops the log (the
 * keeper refuses proofs from then on) and this follower.
 */
export class TlogFollower {
  readonly #follower: OrderedFollower;

  constructor(private readonly options: TlogFollowerOptions) {
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
    try {
      keeper.ingest({ streamSeq: message.seq, event: verifiedEnvelope(message, keeper.logId) });
      return 'next';
    } catch (error) {
      logger.error({ err: error, log_id: keeper.logId, stream_seq: message.seq }, 'transparency log failed verification: no proof is served from it until it is repaired and the service restarted');
      return 'stop';
    }
  }
}

/** The message as an envelope whose hash recomputes over what is stored; TLOG_CHAIN_BROKEN otherwise. */
function verifiedEnvelope(message: JsMsg, logId: string): EventEnvelope {
  let raw: unknown;
  try {
    raw = message.json<unknown>();
  } catch (cause) {
    throw new TlogError('TLOG_CHAIN_BROKEN', `stream seq ${message.seq} of log ${logId} is not JSON`, { cause, details: { log_id: logId, stream_seq: message.seq } });
  }
  const parsed = EventEnvelope.safeParse(raw);
  let recomputed: string | undefined;
  try {
    recomputed = computeEventHash(raw as Record<string, unknown>);
  } catch {
    recomputed = undefined;
  }
  if (!parsed.success || recomputed !== parsed.data.hash || parsed.data.task_id !== logId) {
    throw new TlogError('TLOG_CHAIN_BROKEN', `stream seq ${message.seq} of log ${logId} is not an event of this log whose hash recomputes`, {
      details: { log_id: logId, stream_seq: message.seq },
    });
  }
  return parsed.data;
}
