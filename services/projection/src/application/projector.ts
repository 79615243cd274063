import { hasErrorCode, type ContractError, type QuarantineRecord } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { applyBatch, applyEvent, type BatchEvent } from './apply-event.js';
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

/**
 * What the durable consumer tells about a delivery: where the message is, and
 * its bytes when it has them (the log says what it is: it vouches for them,
 * or is read instead).
 */
export type Delivery = Pick<RawStoredEvent, 'subject' | 'streamSeq' | 'pending'> & { readonly data?: Uint8Array };

export type ProjectorOutcome = 'applied' | 'skipped';

/** Events per transaction when catching up from the log. */
export const CATCH_UP_BATCH = 200;

/**
 * A delivery with at least this many messages behind it catches up from the
 * log instead (after a restart, a long outage): the deliveries behind it are
 * then skipped. Under a live load the group commit keeps up (measured: ~460
 * events/s with 16-ish always waiting); a lower bound turned every burst into
 * a replay of the log, whose ordered consumer and 200-event transactions put
 * the views ~0.8 s behind the receipts.
 */
export const BACKLOG_CATCH_UP = 1_000;

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

/**
 * Deliveries applied in one group at most (the listener hands over up to its
 * concurrency at once); each run of consecutive ones is one transaction.
 */
export const GROUP_COMMIT_MAX = CATCH_UP_BATCH;

/** A delivery waiting to be applied, and how to tell its handler the outcome. */
interface Queued {
  readonly delivery: Delivery;
  readonly resolve: (outcome: ProjectorOutcome) => void;
  readonly reject: (error: unknown) => void;
}

/** A message as the folds take it: an event, or junk passed over with its record. */
type Judged = { readonly event: ProjectedEvent | undefined; readonly quarantined?: QuarantineRecord };

/**
 * Folds the log into the read models in stream order, each run of
 * consecutive deliveries that arrived together in one transaction with the
 * checkpoint (`applyBatch`; a lone delivery is a run of one), then publishes
 * the changed rows. Handles whatever the durable consumer delivers:
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
  /** Deliveries handed over and not yet applied, in arrival order. */
  private readonly queue: Queued[] = [];
  /** The running drain of `queue`, if any: one at a time, so the checkpoint moves in log order. */
  private draining: Promise<void> | undefined;

  constructor(private readonly deps: ProjectorDeps) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private perDelivery(): number {
    return this.deps.catchUpPerDelivery ?? CATCH_UP_PER_DELIVERY;
  }

  /**
   * Takes one delivery; settles once it is applied (or skipped) and
   * committed, so the caller may ack it. Deliveries handed over while a
   * transaction runs wait and are then applied together, in one transaction
   * per run of consecutive stream sequences (group commit): under load the
   * views keep up with the log at the cost of one commit per burst, not one
   * per event. Rows are identical to a one-by-one fold (`applyBatch`).
   */
  handle(delivery: Delivery): Promise<ProjectorOutcome> {
    return new Promise<ProjectorOutcome>((resolve, reject) => {
      this.queue.push({ delivery, resolve, reject });
      // Started on the next turn of the event loop, so every delivery the consumer hands over in this one joins the
      // group; cleared in the same synchronous step as the queue is found empty (drain), so none is left waiting.
      this.draining ??= new Promise<void>((started) => setImmediate(started)).then(() => this.drain());
    });
  }

  /** Applies what is queued, group by group, until nothing is; never rejects (each delivery settles on its own). */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, GROUP_COMMIT_MAX);
      try {
        await this.applyGroup(group);
      } catch (error) {
        for (const queued of group) queued.reject(error);
      }
    }
    this.draining = undefined;
  }

  /** The deliveries of one group, in stream order: skipped, or applied in runs; settles each, or throws for those left. */
  private async applyGroup(group: readonly Queued[]): Promise<void> {
    const ordered = [...group].sort((a, b) => a.delivery.streamSeq - b.delivery.streamSeq);
    const backlogged = (queued: Queued) => (queued.delivery.pending ?? 0) >= BACKLOG_CATCH_UP;
    const before = this.committed;
    if (ordered.some((queued) => queued.delivery.streamSeq > this.committed && backlogged(queued))) {
      // Behind by a backlog: batches of the log's events per transaction; the deliveries behind this one are then skipped.
      await this.catchUp(undefined, this.perDelivery());
    } else if (ordered.some((queued) => queued.delivery.streamSeq <= this.committed && backlogged(queued)) && this.now() - this.caughtUpAt >= SKIPPING_CATCH_UP_INTERVAL_MS) {
      await this.catchUp(undefined, this.perDelivery());
    }
    const fresh: Queued[] = [];
    for (const queued of ordered) {
      // At or below what this process committed: a redelivery, no transaction; or the catch-up above applied it.
      if (queued.delivery.streamSeq <= this.committed) queued.resolve(queued.delivery.streamSeq > before ? 'applied' : 'skipped');
      else fresh.push(queued);
    }
    if (fresh.length === 0) return;
    let judgeMs = 0;
    let applyMs = 0;
    for (const run of consecutiveRuns(fresh)) {
      const started = performance.now();
      const judged = await this.judgeRun(run.map((queued) => queued.delivery));
      const judgedAt = performance.now();
      const applied = await this.applyRun(run.map((queued, index) => ({ streamSeq: queued.delivery.streamSeq, ...judged[index]! })));
      judgeMs += judgedAt - started;
      applyMs += performance.now() - judgedAt;
      for (const queued of run) queued.resolve(applied.has(queued.delivery.streamSeq) ? 'applied' : 'skipped');
    }
    // Debug only: with several instances it tells which one folded what.
    this.deps.logger.debug(
      { from: fresh[0]?.delivery.streamSeq, to: fresh.at(-1)?.delivery.streamSeq, events: fresh.length, judge_ms: Math.round(judgeMs), apply_ms: Math.round(applyMs) },
      'events projected',
    );
  }

  /**
   * One run of consecutive events in one transaction. Above the checkpoint
   * + 1, the events in between are read from the log and applied first (a
   * failed event retried later, a dead-lettered one, a restored database).
   * A run another instance applied part of is applied event by event.
   * Returns the stream sequences this process applied.
   */
  private async applyRun(run: readonly BatchEvent[]): Promise<ReadonlySet<number>> {
    const first = run[0]!.streamSeq;
    let outcome = await applyBatch(this.deps.store, run);
    if (outcome.kind === 'gap') {
      await this.catchUp(first - 1);
      outcome = await applyBatch(this.deps.store, run);
    }
    if (outcome.kind === 'gap') throw this.logGap(first, outcome.checkpoint);
    if (outcome.kind === 'applied') {
      this.committed = Math.max(this.committed, run.at(-1)!.streamSeq);
      this.deps.publisher.publish(outcome.published);
      return new Set(run.map((item) => item.streamSeq));
    }
    // `skipped`: the checkpoint is at or past the run's start (another instance); what is left of it, one by one.
    const applied = new Set<number>();
    for (const item of run) {
      const single = await applyEvent(this.deps.store, item.streamSeq, item.event, undefined, item.quarantined);
      if (single.kind === 'gap') throw this.logGap(item.streamSeq, single.checkpoint);
      if (single.kind === 'applied') {
        applied.add(item.streamSeq);
        this.committed = Math.max(this.committed, item.streamSeq);
        this.deps.publisher.publish(single.published);
      }
    }
    return applied;
  }

  private logGap(streamSeq: number, checkpoint: number): ProjectionError {
    return new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the log did not yield the events before stream seq ${streamSeq}; retrying`, {
      details: { streamSeq, checkpoint },
    });
  }

  /**
   * The log's judgement of each delivery of a run, in order: the delivered
   * bytes are not trusted as events; the log judges each message on its
   * aggregate's chain, one get per aggregate for the run when it can vouch
   * for the bytes (`entriesOf`), a get per message otherwise.
   */
  private async judgeRun(run: readonly Delivery[]): Promise<Judged[]> {
    const delivered = run.flatMap((delivery) => (delivery.data === undefined ? [] : [{ subject: delivery.subject, streamSeq: delivery.streamSeq, data: delivery.data }]));
    if (delivered.length === run.length) return (await this.deps.log.entriesOf(delivered)).map((raw) => this.judge(raw));
    const judged: Judged[] = [];
    for (const delivery of run) judged.push(this.judge(await this.deps.log.entryAt(delivery.subject, delivery.streamSeq)));
    return judged;
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

}

/** Splits deliveries in stream order into runs of consecutive sequences (a group may miss some: another instance took them). */
function consecutiveRuns(items: readonly Queued[]): Queued[][] {
  const runs: Queued[][] = [];
  for (const queued of items) {
    const run = runs.at(-1);
    const last = run?.at(-1);
    // A sequence delivered twice starts a run of its own, which the checkpoint then skips.
    if (run !== undefined && last !== undefined && queued.delivery.streamSeq === last.delivery.streamSeq + 1) run.push(queued);
    else runs.push([queued]);
  }
  return runs;
}
