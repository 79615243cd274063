import type { EventDraft, EventEnvelope } from '@writ/contracts';

/** An event of the transparency log as stored: where, and the envelope (its own hash already recomputed by the adapter). */
export interface StoredTlogEvent {
  readonly streamSeq: number;
  readonly event: EventEnvelope;
}

/** What one append stored. */
export interface TlogAppendResult {
  readonly taskSeq: number;
  readonly streamSeq: number;
  readonly hash: string;
  /** The log already held this event (same idempotency key): nothing new was stored. */
  readonly duplicate: boolean;
}

/**
 * The log's own stream, `<prefix>.transparency_log.<log_id>` (outbound:
 * `EventStoreTlogLog`). Its subject sequence is the single-writer guard:
 * two instances appending at the same `expectedSeq` cannot both win.
 */
export interface TlogEventLog {
  /** Every event of the log in order, its hash chain verified (TLOG_CHAIN_BROKEN otherwise). */
  readAll(): Promise<StoredTlogEvent[]>;
  /** Appends one event after `expectedSeq`; EVENTSTORE_CONFLICT when another writer got there first. */
  append(draft: EventDraft, expectedSeq: number): Promise<TlogAppendResult>;
  /** The log's last `task_seq` at this moment (0 when empty). */
  headSeq(): Promise<number>;
}
