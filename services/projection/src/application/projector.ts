import { ContractError, hasErrorCode } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { applyBatch, applyEvent, type ApplyOutcome, type BatchEvent } from './apply-event.js';
import type { EventLog, ProjectionStore, UpdatePublisher } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { toProjectedEvent, type ProjectedEvent, type RawStoredEvent } from './projected-event.js';

export interface ProjectorDeps {
  readonly store: ProjectionStore;
  readonly log: EventLog;
  readonly publisher: UpdatePublisher;
  /** Subject prefix of the log (`<root>.evt`). */
  readonly eventsPrefix: string;
  readonly logger: Logger;
}

export type ProjectorOutcome = 'applied' | 'skipped';

/** Events per transaction when catching up from the log. */
export const CATCH_UP_BATCH = 200;

/**
 * A delivery with at least this many messages behind it catches up from the
 * log instead: one transaction per event costs several Postgres round trips
 * and a commit, so under load the views fall behind without end.
 */
export const BACKLOG_CATCH_UP = 16;

type Parsed = { readonly ok: true; readonly event: ProjectedEvent } | { readonly ok: false; readonly error: ContractError };

/**
 * Folds the log into the read models, one event at a time, each in one
 * transaction with the checkpoint (`applyEvent`), then publishes the changed
 * rows. Handles whatever the durable consumer delivers:
 * - at or below the checkpoint → skipped (a redelivery, or a second instance won);
 * - above checkpoint + 1 → the events in between are read from the log and
 *   applied first (a failed event retried later, a dead-lettered one, a
 *   restored database), so the checkpoint only ever moves by one, in log order;
 * - not an envelope → the checkpoint moves past it and it is dead-lettered
 *   (`CONTRACT_INVALID`), so one bad message never stalls the views;
 * - with `BACKLOG_CATCH_UP` or more messages behind it → everything the log
 *   holds is applied first, `CATCH_UP_BATCH` events per transaction.
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

  constructor(private readonly deps: ProjectorDeps) {}

  async handle(raw: RawStoredEvent): Promise<ProjectorOutcome> {
    const parsed = this.parse(raw);
    if (raw.streamSeq > this.committed && (raw.pending ?? 0) >= BACKLOG_CATCH_UP) {
      // Behind by a backlog: batches of the log's events per transaction; the deliveries behind this one are then skipped.
      await this.catchUp();
      if (raw.streamSeq <= this.committed) {
        if (!parsed.ok) throw parsed.error;
        return 'applied';
      }
    }
    if (raw.streamSeq <= this.committed) {
      if (!parsed.ok) throw parsed.error;
      return 'skipped';
    }
    let outcome = await this.step(raw.streamSeq, parsed);
    if (outcome.kind === 'gap') {
      await this.catchUp(raw.streamSeq - 1);
      outcome = await this.step(raw.streamSeq, parsed);
      if (outcome.kind === 'gap') {
        throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the log did not yield the events before stream seq ${raw.streamSeq}; retrying`, {
          details: { streamSeq: raw.streamSeq, checkpoint: outcome.checkpoint },
        });
      }
    }
    if (outcome.kind === 'applied') {
      this.committed = Math.max(this.committed, raw.streamSeq);
      this.deps.publisher.publish(outcome.changes);
    }
    if (!parsed.ok) throw parsed.error;
    return outcome.kind;
  }

  /**
   * Applies what the log holds after the checkpoint, up to `untilSeq`
   * (default: the end of the log when called), in batches of consecutive
   * events per transaction (the rows are those of one event at a time; only
   * the commits are fewer), publishing each batch's changes after its commit.
   * A message that is not an envelope is passed over (logged), as `handle`
   * passes over it. Returns how many events it applied.
   */
  async catchUp(untilSeq?: number): Promise<number> {
    const checkpoint = await this.deps.store.checkpoint();
    const until = untilSeq ?? (await this.deps.log.lastSeq());
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
        this.deps.publisher.publish(outcome.changes);
      }
      batch = [];
    };
    for await (const raw of this.deps.log.replay(checkpoint + 1)) {
      if (raw.streamSeq > until) break;
      const parsed = this.parse(raw);
      batch.push({ streamSeq: raw.streamSeq, event: parsed.ok ? parsed.event : undefined });
      if (batch.length >= CATCH_UP_BATCH) await flush();
    }
    await flush();
    if (applied > 0) this.deps.logger.info({ applied, from: checkpoint + 1 }, 'projection caught up from the log');
    return applied;
  }

  private parse(raw: RawStoredEvent): Parsed {
    try {
      return { ok: true, event: toProjectedEvent(raw, this.deps.eventsPrefix) };
    } catch (error) {
      if (hasErrorCode(error, 'CONTRACT_INVALID')) {
        this.deps.logger.warn({ streamSeq: raw.streamSeq, subject: raw.subject, code: error.code }, 'not an event envelope: passed over (and dead-lettered when delivered)');
        return { ok: false, error: error as ContractError };
      }
      throw error;
    }
  }

  private step(streamSeq: number, parsed: Parsed): Promise<ApplyOutcome> {
    return applyEvent(this.deps.store, streamSeq, parsed.ok ? parsed.event : undefined);
  }
}
