import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { backoffDelay } from '@writ/bus';
import { EventEnvelope } from '@writ/contracts';
import { importEd25519PublicJwk, type Ed25519PublicKey } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';
import { WakeableSleep, keyWindows, type KeyWindow } from '@writ/runtime';
import type { Logger } from '@writ/telemetry';
import { admitReceiptIssued, type ReceiptSignerKeys } from '../application/receipt-admission.js';
import type { ReceiptOutcome, TlogKeeper } from '../application/tlog-keeper.js';
import { OrderedFollower, type FollowStep } from './ordered-follower.js';

export interface ReceiptSequencerOptions {
  readonly nc: NatsConnection;
  /** The event log (to find where the last leaf's `receipt.issued` is stored). */
  readonly store: EventStore;
  readonly stream: string;
  /** `<prefix>.task.>`. */
  readonly taskSubjects: string;
  readonly keeper: TlogKeeper;
  /** The receipt service principal: only a receipt signed by one of its keys (valid at the receipt's created_at) becomes a leaf. */
  readonly principalId: string;
  readonly logger: Logger;
  /**
   * Called after each `receipt.issued` is handled (tests and the bench count
   * them): its receipt id (for a refused event without a readable one, the
   * event id) and what became of it.
   */
  readonly onSequenced?: (receiptId: string, outcome: ReceiptOutcome) => void;
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
 * Admission (DESIGN invariant 9: nothing is trusted for merely being in the
 * log): a `receipt.issued` becomes a leaf only when `admitReceiptIssued`
 * accepts it — a ReceiptIssued of the stream's own task, whose hash recomputes
 * from its body, signed by the key its `signer_ref` names, a key of the
 * receipt service principal valid at its `created_at` (that principal's
 * stream, read from the log for each receipt). Anything else is recorded as
 * `tlog.receipt_refused` with its TLOG_RECEIPT_* code, logged at error level,
 * and the scan goes on: a forged event never gains an inclusion proof and
 * never stalls the sequencer. A message that is not an event envelope at all
 * is logged and passed over (it names no event to refuse).
 */
export class ReceiptSequencer {
  #follower: OrderedFollower | undefined;
  #stopping = false;
  readonly #pause = new WakeableSleep();
  /** Imported public keys of the receipt principal, by kid and x. */
  readonly #imported = new Map<string, Promise<Ed25519PublicKey>>();

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
    const event = this.#issuedEvent(text, message.seq);
    if (event === undefined) return 'next';
    let onChain = false;
    for (let failures = 0; ; ) {
      if (this.#stopping) return 'stop';
      try {
        // Only the task chain's own receipt.issued is judged for a leaf: a copy or rival stored beside it is quarantined (invariant 10).
        if (!onChain) {
          const entry = await this.options.store.entryAt(message.subject, message.seq);
          if (entry.kind !== 'event') {
            this.options.logger.warn({ stream_seq: message.seq, task_id: event.task_id, event_id: event.event_id, reason: entry.record.reason }, 'a receipt.issued that is not an event of its task chain is not logged');
            return 'next';
          }
          onChain = true;
        }
        const { id, outcome } = await this.#settle(event);
        this.options.onSequenced?.(id, outcome);
        return 'next';
      } catch (error) {
        if (this.options.keeper.failure !== undefined) {
          this.options.logger.error({ err: error, log_id: this.options.keeper.logId }, 'transparency log failed verification: the sequencer stops');
          return 'stop';
        }
        if (this.#stopping) return 'stop';
        failures += 1;
        this.options.logger.warn({ err: error, event_id: event.event_id, failures }, 'receipt not sequenced yet; retrying');
        await this.#pause.sleep(backoffDelay(failures, RETRY_BACKOFF));
      }
    }
  }

  /** Admits the receipt (a leaf) or records its refusal. A failure to read the principal or to append throws (retried, never skipped). */
  async #settle(event: EventEnvelope): Promise<{ id: string; outcome: ReceiptOutcome }> {
    const { keeper, logger } = this.options;
    const admission = await admitReceiptIssued(event, await this.#signerKeys());
    if (admission.ok) return { id: admission.receipt.receipt_id, outcome: await keeper.sequence(admission.receipt) };
    const { refusal } = admission;
    const outcome = await keeper.refuse(refusal);
    if (outcome === 'refused') {
      logger.error(
        { code: refusal.code, log_id: keeper.logId, task_id: refusal.task_id, event_id: refusal.receipt_event_id, receipt_id: refusal.receipt_id, reason: refusal.reason },
        `${refusal.code}: a receipt.issued was refused by the transparency log (no leaf)`,
      );
    }
    return { id: refusal.receipt_id ?? refusal.receipt_event_id, outcome };
  }

  /** The receipt principal's key windows as its stream says now (the event store's read cache makes an unchanged stream one message get). */
  async #signerKeys(): Promise<ReceiptSignerKeys> {
    const { principalId, store } = this.options;
    const windows = keyWindows((await store.readEntity('principal', principalId)).map(({ event }) => event));
    return { principalId, windows, publicKey: (window) => this.#publicKey(window) };
  }

  #publicKey(window: KeyWindow): Promise<Ed25519PublicKey> {
    const cacheKey = `${window.jwk.kid}:${window.jwk.x}`;
    let key = this.#imported.get(cacheKey);
    if (key === undefined) {
      key = importEd25519PublicJwk(window.jwk);
      key.catch(() => this.#imported.delete(cacheKey));
      this.#imported.set(cacheKey, key);
    }
    return key;
  }

  #issuedEvent(text: string, streamSeq: number): EventEnvelope | undefined {
    let event: EventEnvelope;
    try {
      event = EventEnvelope.parse(JSON.parse(text));
    } catch (error) {
      this.options.logger.error({ err: error, stream_seq: streamSeq }, 'a message on a task stream that is not an event envelope is not logged');
      return undefined;
    }
    return event.event_type === 'receipt.issued' ? event : undefined;
  }
}
