import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { backoffDelay } from '@writ/bus';
import { EventEnvelope, ReceiptIssued } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import type { Logger } from '@writ/telemetry';
import { canonicalReceiptBody } from '../application/receipt-seal.js';
import type { TlogKeeper } from '../application/tlog-keeper.js';
import type { IssuedReceipt } from '../application/transparency-log.js';
import { OrderedFollower, type FollowStep } from './ordered-follower.js';
import { WakeableSleep } from '@writ/runtime';

export interface ReceiptSequencerOptions {
  readonly nc: NatsConnection;
  /** The event log (to find where the last leaf's `receipt.issued` is stored). */
  readonly store: EventStore;
  readonly stream: string;
  /** `<prefix>.task.>`. */
  readonly taskSubjects: string;
  readonly keeper: TlogKeeper;
  readonly logger: Logger;
  /** Called after each receipt is handled (tests and the bench count them). */
  readonly onSequenced?: (receiptId: string, outcome: 'appended' | 'already_sequenced') => void;
}

/** Between tries of a failed append: 100 ms, doubling, at most 5 s. */
const RETRY_BACKOFF = { initialMs: 100, maxMs: 5_000, multiplier: 2 } as const;

/** Cheap pre-filter on the stored JSON before it is parsed. */
const RECEIPT_ISSUED_MARK = '"event_type":"receipt.issued"';

/**
 * The sequencer: scans the task streams (`<prefix>.task.>`) in stream order
 * and makes every `receipt.issued` the next leaf of the log. Its position is
 * not stored anywhere but in the log itself: at start it resumes right after
 * the `receipt.issued` of the last leaf (from the start of the stream for an
 * empty log), so a receipt appended while the service was down, or between
 * its append and the service's crash, is sequenced after the restart; the
 * keeper skips receipts already in the log (restart, or another instance
 * that was quicker). A failed append is retried with backoff, never skipped.
 *
 * A `receipt.issued` whose `receipt_hash` does not recompute from its body is
 * not logged (a forged or corrupt event must not gain an inclusion proof); it
 * is reported as an error.
 */
export class ReceiptSequencer {
  #follower: OrderedFollower | undefined;
  #stopping = false;
  readonly #pause = new WakeableSleep();

  constructor(private readonly options: ReceiptSequencerOptions) {}

  get running(): boolean {
    return this.#follower?.running ?? false;
  }

  /** Finds where to resume, then follows the task streams from there. */
  async start(): Promise<void> {
    if (this.#follower !== undefined) return;
    const fromSeq = await this.#resumePosition();
    this.options.logger.info({ log_id: this.options.keeper.logId, from_stream_seq: fromSeq, leaves: this.options.keeper.size }, 'receipt sequencer starting');
    this.#follower = new OrderedFollower({
      nc: this.options.nc,
      stream: this.options.stream,
      filter: this.options.taskSubjects,
      fromSeq,
      onMessage: (message) => this.#handle(message),
      name: 'receipt-sequencer',
      logger: this.options.logger,
    });
    this.#follower.start();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#pause.wake();
    await this.#follower?.stop();
  }

  async #resumePosition(): Promise<number> {
    const last = this.options.keeper.lastLeaf;
    if (last === undefined) return 1;
    try {
      const stored = (await this.options.store.read(last.task_id)).find(({ event }) => event.event_id === last.receipt_event_id);
      if (stored !== undefined) return stored.streamSeq + 1;
      this.options.logger.warn({ task_id: last.task_id, event_id: last.receipt_event_id }, "the last leaf's receipt.issued is not in its task stream: rescanning from the start (receipts already in the log are skipped)");
    } catch (error) {
      this.options.logger.warn({ err: error, task_id: last.task_id }, "the last leaf's task stream could not be read: rescanning from the start (receipts already in the log are skipped)");
    }
    return 1;
  }

  async #handle(message: JsMsg): Promise<FollowStep> {
    const text = message.string();
    if (!text.includes(RECEIPT_ISSUED_MARK)) return 'next';
    const receipt = this.#issuedReceipt(text, message.seq);
    if (receipt === undefined) return 'next';
    let onChain = false;
    for (let failures = 0; ; ) {
      if (this.#stopping) return 'stop';
      try {
        // Only the task chain's own receipt.issued gains a leaf: a copy or rival stored beside it is quarantined (invariant 10).
        if (!onChain) {
          const entry = await this.options.store.entryAt(message.subject, message.seq);
          if (entry.kind !== 'event') {
            this.options.logger.warn({ stream_seq: message.seq, task_id: receipt.task_id, receipt_id: receipt.receipt_id, reason: entry.record.reason }, 'a receipt.issued that is not an event of its task chain is not logged');
            return 'next';
          }
          onChain = true;
        }
        const outcome = await this.options.keeper.sequence(receipt);
        this.options.onSequenced?.(receipt.receipt_id, outcome);
        return 'next';
      } catch (error) {
        if (this.options.keeper.failure !== undefined) {
          this.options.logger.error({ err: error, log_id: this.options.keeper.logId }, 'transparency log failed verification: the sequencer stops');
          return 'stop';
        }
        if (this.#stopping) return 'stop';
        failures += 1;
        this.options.logger.warn({ err: error, receipt_id: receipt.receipt_id, failures }, 'receipt not sequenced yet; retrying');
        await this.#pause.sleep(backoffDelay(failures, RETRY_BACKOFF));
      }
    }
  }

  #issuedReceipt(text: string, streamSeq: number): IssuedReceipt | undefined {
    const { logger } = this.options;
    let event: EventEnvelope;
    let payload: ReceiptIssued;
    try {
      event = EventEnvelope.parse(JSON.parse(text));
      if (event.event_type !== 'receipt.issued') return undefined;
      payload = ReceiptIssued.parse(event.payload);
    } catch (error) {
      logger.error({ err: error, stream_seq: streamSeq }, 'a receipt.issued that breaks its contract is not logged');
      return undefined;
    }
    const { receipt } = payload;
    if (receipt.receipt_hash === undefined || sha256Hex(canonicalReceiptBody(receipt)) !== receipt.receipt_hash) {
      logger.error({ stream_seq: streamSeq, task_id: event.task_id, receipt_id: receipt.receipt_id }, 'a receipt.issued whose receipt_hash does not recompute from its body is not logged');
      return undefined;
    }
    return { receipt_id: receipt.receipt_id, task_id: event.task_id, receipt_hash: receipt.receipt_hash, receipt_event_id: event.event_id };
  }
}
