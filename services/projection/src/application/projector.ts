import { hasErrorCode, type ContractError, type QuarantineRecord } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { applyBatch, applyEvent, type ApplyOutcome, type BatchEvent } from './apply-event.js';
import type { EventLog, ProjectionStore, UpdatePublisher } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { toProjectedEvent, unjudgedQuarantine, type ProjectedEvent, type RawStoredEvent } from './projected-event.js';

export interface ProjectorDeps {
  readonly store: ProjectionStore;
  readonly log: EventLog;
  readonly publisher: UpdatePublisher;
  /** Subject prefix of the log (`<root>.evt`). */
  readonly eventsPrefix: string;
  /** The log's stream, named in the record of junk a log hands over unjudged. */
  readonly eventsStream?: string;
  readonly logger: Logger;
  /** Milliseconds now (tests move it); default `Date.now`. */
  readonly now?: () => number;
  /** At most this many of the log's messages per catch-up made for a delivery; default `CATCH_UP_PER_DELIVERY`. */
  readonly catchUpPerDelivery?: number;
}

/** What the durable consumer tells about a delivery: where the message is (the log says what it is). */
export type Delivery = Pick<RawStoredEvent, 'subject' | 'streamSeq' | 'pending'>;

export type ProjectorOutcome = 'applied' | 'skipped';

/** Events per transaction when catching up from the log. */
export const CATCH_UP_BATCH = 200;

/**
 * A delivery with at least this many messages behind it catches up from the
 * log instead: one transaction per event costs several Postgres round trips
 * and a commit, so under load the views fall behind without end.
 */
export const BACKLOG_CATCH_UP = 16;

/**
 * While the durable walks back over deliveries a catch-up already applied (one
 * at a time, each a round trip: measured 20-50 a second on a loaded 2-core
 * machine, slower than the log grew), the views catch up from the log at most
 * this often, so they never wait for the durable to reach the end.
 */
export const SKIPPING_CATCH_UP_INTERVAL_MS = 1_000;

/**
 * A catch-up made while handling a delivery applies at most this many of the
 * log's messages: the delivery stays unacknowledged until it returns, and a
 * whole backlog (20,000 events after a restart in the chaos run, minutes at
 * 60-100 a second) would make the durable look stalled and the views' readiness
 * fail although they move. The rest follows with the next deliveries.
 */
export const CATCH_UP_PER_DELIVERY = 2_000;

/** A message as the folds take it: an event, or junk passed over with its record. */
type Judged = { readonly event: ProjectedEvent | undefined; readonly quarantined?: QuarantineRecord };

/**
 * Folds the log into the read models, one event at a time, each in one
 * transaction with the checkpoint (`applyEvent`), then publishes the changed
 * rows. Handles whatever the durable consumer delivers:
 * - at or below the checkpoint → skipped (a redelivery, or a second instance won);
 * - above checkpoint + 1 → the events in between are read from the log and
 *   applied first (a failed event retried later, a dead-lettered one, a
 *   restored database), so the checkpoint only ever moves by one, in log order;
 * - not an event of its aggregate's chain, as the log judges it (junk, a late
 *   rival, an aggregate whose chain is broken) → the checkpoint moves past it
 *   and it is recorded in `quarantined_messages` in the same transaction, so
 *   one bad message never stalls the views (invariant 10);
 * - with `BACKLOG_CATCH_UP` or more messages behind it → everything the log
 *   holds is applied first, `CATCH_UP_BATCH` events per transaction; the
 *   deliveries behind it are then skipped, and while they are, the log is
 *   applied again at most every `SKIPPING_CATCH_UP_INTERVAL_MS`.
 */
export class Projector {
  /**
   * The highest stream sequence this process itself committed. A delivery
   * at or below it is a redelivery (a new durable replays the log from its
   * start after the catch-up at boot) and is skipped without a transaction.
   * Only ever a lower bound of the checkpoint: it is set after commits, and
   * the checkpoint never moves back under a running process (a rebuild swaps
   * tables, not the checkpoint).
   */
  private committed = 0;
  /** When this process last caught up from the log (`now()` ms). */
  private caughtUpAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: ProjectorDeps) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private perDelivery(): number {
    return this.deps.catchUpPerDelivery ?? CATCH_UP_PER_DELIVERY;
  }

  async handle(delivery: Delivery): Promise<ProjectorOutcome> {
    if (delivery.streamSeq > this.committed && (delivery.pending ?? 0) >= BACKLOG_CATCH_UP) {
      // Behind by a backlog: batches of the log's events per transaction; the deliveries behind this one are then skipped.
      await this.catchUp(undefined, this.perDelivery());
      if (delivery.streamSeq <= this.committed) return 'applied';
    }
    if (delivery.streamSeq <= this.committed) {
      if ((delivery.pending ?? 0) >= BACKLOG_CATCH_UP && this.now() - this.caughtUpAt >= SKIPPING_CATCH_UP_INTERVAL_MS) {
        await this.catchUp(undefined, this.perDelivery());
      }
      return 'skipped';
    }
    // The delivered bytes are not trusted as an event: the log judges the message on its aggregate's chain.
    const judged = this.judge(await this.deps.log.entryAt(delivery.subject, delivery.streamSeq));
    let outcome = await this.step(delivery.streamSeq, judged);
    if (outcome.kind === 'gap') {
      await this.catchUp(delivery.streamSeq - 1);
      outcome = await this.step(delivery.streamSeq, judged);
      if (outcome.kind === 'gap') {
        throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the log did not yield the events before stream seq ${delivery.streamSeq}; retrying`, {
          details: { streamSeq: delivery.streamSeq, checkpoint: outcome.checkpoint },
        });
      }
    }
    if (outcome.kind === 'applied') {
      this.committed = Math.max(this.committed, delivery.streamSeq);
      this.deps.publisher.publish(outcome.published);
      // Debug only (30-odd events an action): with several instances it tells which one folded what.
      this.deps.logger.debug({ stream_seq: delivery.streamSeq }, 'event projected');
    }
    return outcome.kind;
  }

  /**
   * Applies what the log holds after the checkpoint, up to `untilSeq`
   * (default: the end of the log when called) and at most `limit` messages, in batches of consecutive
   * events per transaction (the rows are those of one event at a time; only
   * the commits are fewer), publishing each batch's changes after its commit.
   * A message that is not an event is passed over and recorded, as `handle`
   * passes over it. Returns how many messages it applied.
   */
  async catchUp(untilSeq?: number, limit = Number.POSITIVE_INFINITY): Promise<number> {
    this.caughtUpAt = this.now();
    const checkpoint = await this.deps.store.checkpoint();
    const logEnd = untilSeq ?? (await this.deps.log.lastSeq());
    if (untilSeq === undefined && checkpoint > logEnd) {
      // Read in this order, the log's end only grows after the checkpoint was read: views ahead of it were folded from
      // another log, and every event of this one up to their checkpoint would be skipped as a redelivery. Never fold on.
      throw new ProjectionError(
        'PROJECTION_CHECKPOINT_AHEAD',
        `the views are at stream seq ${checkpoint} but the log ends at ${logEnd}: they were folded from another log (the stream was recreated, or another deployment shares this schema). ` +
          'Point WRIT_PG_SCHEMA at a schema of its own (writ init gives each deployment one) or drop this schema, then start again: the views are rebuilt from the log',
        { details: { checkpoint, log_last_seq: logEnd } },
      );
    }
    const until = Math.min(logEnd, checkpoint + limit);
    if (checkpoint >= until) return 0;
    let applied = 0;
    let batch: BatchEvent[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const outcome = await applyBatch(this.deps.store, batch);
      if (outcome.kind === 'gap') {
        throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the replay skipped events before stream seq ${batch[0]?.streamSeq}`, {
          details: { streamSeq: batch[0]?.streamSeq, checkpoint: outcome.checkpoint },
        });
      }
      // `skipped`: another instance applied them first.
      if (outcome.kind === 'applied') {
        applied += batch.length;
        this.committed = Math.max(this.committed, batch.at(-1)?.streamSeq ?? 0);
        this.deps.publisher.publish(outcome.published);
      }
      batch = [];
    };
    for await (const raw of this.deps.log.replay(checkpoint + 1)) {
      if (raw.streamSeq > until) break;
      batch.push({ streamSeq: raw.streamSeq, ...this.judge(raw) });
      if (batch.length >= CATCH_UP_BATCH) await flush();
    }
    await flush();
    if (applied > 0) this.deps.logger.info({ applied, from: checkpoint + 1 }, 'projection caught up from the log');
    return applied;
  }

  /** The folds' view of a message the log handed over: its event, or its quarantine record. */
  private judge(raw: RawStoredEvent): Judged {
    if (raw.quarantined !== undefined) return { event: undefined, quarantined: raw.quarantined };
    try {
      return { event: toProjectedEvent(raw, this.deps.eventsPrefix) };
    } catch (error) {
      if (!hasErrorCode(error, 'CONTRACT_INVALID')) throw error;
      const quarantined = unjudgedQuarantine(raw, this.deps.eventsStream ?? 'events', error as ContractError);
      this.deps.logger.warn({ streamSeq: raw.streamSeq, subject: raw.subject, reason: quarantined.reason, sha256: quarantined.sha256 }, 'not an event: passed over and recorded as quarantined');
      return { event: undefined, quarantined };
    }
  }

  private step(streamSeq: number, judged: Judged): Promise<ApplyOutcome> {
    return applyEvent(this.deps.store, streamSeq, judged.event, undefined, judged.quarantined);
  }
}
