import { EventEnvelope, type EventDraft } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';

/**
 * Pure hash-chain rules of one aggregate's event stream (no I/O), so that the
 * store, `writ verify` and tests agree on a single definition.
 */

/** Why a chain is not valid at the first offending position. */
export type ChainBreakReason =
  /** Not a valid `EventEnvelope` (or not JSON that can be canonicalized). */
  | 'unparseable'
  /** Carries another aggregate's `task_id` than the stream it was read from. */
  | 'misfiled'
  /** `hash` does not recompute over the stored content: the event was altered after sealing. */
  | 'modified'
  /** A `task_seq` is missing and never appears. */
  | 'dropped'
  /** A `task_seq` is missing here but appears later. */
  | 'reordered'
  /**
   * Two histories: a `task_seq` repeats with different content, or
   * `prev_event_hash` does not link to the stored predecessor (which then was
   * either rewritten with a recomputed hash, or this event was written after
   * another version of it). The log cannot tell which branch is authentic.
   */
  | 'forked'
  /** A `task_seq` repeats with identical content (dedupe failed, e.g. across a leader change). */
  | 'duplicated';

/** The end of a chain: the last `task_seq` and its `hash` (0 and null before the first event). */
export type ChainLink = { readonly taskSeq: number; readonly hash: string | null };

export const GENESIS: ChainLink = { taskSeq: 0, hash: null };

export type ChainReport =
  | { readonly ok: true; readonly length: number; readonly head: ChainLink }
  | {
      readonly ok: false;
      readonly length: number;
      /** Position in the examined list (0-based). */
      readonly index: number;
      /** The `task_seq` expected at that position. */
      readonly taskSeq: number;
      readonly reason: ChainBreakReason;
      readonly detail: string;
    };

/** SHA-256 hex over the RFC 8785 form of every field except `hash`. */
export function computeEventHash(event: Readonly<Record<string, unknown>>): string {
  const { hash: _ignored, ...unsealed } = event;
  return sha256Hex(canonicalJson(unsealed));
}

/**
 * Seals a validated draft as the event after `prev`. Throws the crypto
 * library's `CRYPTO_NOT_CANONICALIZABLE` when the payload is not JSON.
 */
export function sealEvent(draft: EventDraft, taskId: string, prev: ChainLink): EventEnvelope {
  const unsealed = { ...draft, task_id: taskId, task_seq: prev.taskSeq + 1, prev_event_hash: prev.hash };
  // Adds the hash to the object just hashed instead of copying it again (hot path of every append).
  return Object.assign(unsealed, { hash: sha256Hex(canonicalJson(unsealed)) });
}

/**
 * Checks a stream of raw stored events, in stored order: each parses as an
 * envelope, belongs to `taskId` (when given), its hash recomputes over the raw
 * content (so an added field counts as a modification), `task_seq` runs 1, 2, 3…
 * and `prev_event_hash` links to the previous event's `hash`. Reports the first
 * offending position. `from` continues a chain already verified up to that
 * link (a suffix read after a cached prefix): `task_seq` then runs on from it.
 */
export function verifyEventChain(events: readonly unknown[], options: { taskId?: string; from?: ChainLink } = {}): ChainReport {
  let prev: ChainLink = options.from ?? GENESIS;
  const hashBySeq = new Map<number, string>();
  const broken = (index: number, reason: ChainBreakReason, detail: string): ChainReport => ({
    ok: false,
    length: events.length,
    index,
    taskSeq: (options.from?.taskSeq ?? 0) + index + 1,
    reason,
    detail,
  });

  for (let index = 0; index < events.length; index++) {
    const raw = events[index];
    const expected = prev.taskSeq + 1;
    const parsed = EventEnvelope.safeParse(raw);
    if (!parsed.success) return broken(index, 'unparseable', 'not a valid event envelope');
    const event = parsed.data;
    if (options.taskId !== undefined && event.task_id !== options.taskId) {
      return broken(index, 'misfiled', `task_id ${event.task_id} in the stream of ${options.taskId}`);
    }
    let recomputed: string;
    try {
      recomputed = computeEventHash(raw as Record<string, unknown>);
    } catch {
      return broken(index, 'unparseable', 'content cannot be canonicalized');
    }
    if (recomputed !== event.hash) return broken(index, 'modified', `hash of task_seq ${event.task_seq} does not recompute`);
    if (event.task_seq < expected) {
      const earlier = hashBySeq.get(event.task_seq);
      return earlier === event.hash
        ? broken(index, 'duplicated', `task_seq ${event.task_seq} stored twice with identical content`)
        : broken(index, 'forked', `task_seq ${event.task_seq} stored twice with different content`);
    }
    if (event.task_seq > expected) {
      const appearsLater = events.slice(index + 1).some((later) => taskSeqOf(later) === expected);
      return appearsLater
        ? broken(index, 'reordered', `task_seq ${event.task_seq} stored before ${expected}`)
        : broken(index, 'dropped', `task_seq ${expected} is missing`);
    }
    if (event.prev_event_hash !== prev.hash) {
      return broken(index, 'forked', `prev_event_hash of task_seq ${event.task_seq} does not link to the stored task_seq ${prev.taskSeq}`);
    }
    hashBySeq.set(event.task_seq, event.hash);
    prev = { taskSeq: event.task_seq, hash: event.hash };
  }
  return { ok: true, length: events.length, head: prev };
}

function taskSeqOf(raw: unknown): unknown {
  return typeof raw === 'object' && raw !== null ? (raw as { task_seq?: unknown }).task_seq : undefined;
}
