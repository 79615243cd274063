import { EventEnvelope, type EventDraft, type QuarantineReason } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { foldKeys, type Authorship, type PrincipalKeys } from './event-seal.js';

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
  | 'duplicated'
  /** Its seal does not prove a service allowed to author it (a forged event in a bundle). */
  | 'author_unproven';

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

/** SHA-256 hex over the RFC 8785 form of every field except `hash` and `seal` (the seal signs the hash). */
export function computeEventHash(event: Readonly<Record<string, unknown>>): string {
  const { hash: _ignored, seal: _seal, ...unsealed } = event;
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
 * Checks a stream of raw stored events, in stored order, strictly: every
 * message must be the chain's next event — it parses as an envelope, belongs
 * to `taskId` (when given), its hash recomputes over the raw content (so an
 * added field counts as a modification), `task_seq` runs 1, 2, 3… and
 * `prev_event_hash` links to the previous event's `hash`. Reports the first
 * offending position. `from` continues a chain already verified up to that
 * link (a suffix read after a cached prefix): `task_seq` then runs on from it.
 *
 * What a bundle carries must be exactly a chain, so this is its check; the
 * live log, which anyone allowed to publish on a subject can add junk to, is
 * read with `ChainScanner` instead (junk quarantined, breaks still breaks).
 */
export function verifyEventChain(events: readonly unknown[], options: { taskId?: string; from?: ChainLink; authorship?: Authorship } = {}): ChainReport {
  const scanner = new ChainScanner(
    { entityType: 'task', entityId: options.taskId ?? null },
    options.from === undefined ? undefined : { head: options.from, hashes: [] },
    options.authorship,
  );
  for (let index = 0; index < events.length; index++) {
    const verdict = scanner.classify(events[index], () => events.slice(index + 1));
    if (verdict.kind === 'event') continue;
    const reason = verdict.kind === 'broken' ? verdict.reason : STRICT_BREAK[verdict.reason];
    return { ok: false, length: events.length, index, taskSeq: (options.from?.taskSeq ?? 0) + index + 1, reason, detail: verdict.detail };
  }
  return { ok: true, length: events.length, head: scanner.head };
}

/** In a strict check every quarantine is a break; this is the break each stands for. */
const STRICT_BREAK: Readonly<Record<QuarantineReason, ChainBreakReason>> = {
  QUARANTINE_NOT_JSON: 'unparseable',
  QUARANTINE_NOT_ENVELOPE: 'unparseable',
  QUARANTINE_WRONG_SUBJECT: 'misfiled',
  QUARANTINE_WRONG_AGGREGATE: 'misfiled',
  QUARANTINE_HASH_MISMATCH: 'modified',
  QUARANTINE_DUPLICATE: 'duplicated',
  QUARANTINE_FORKED: 'forked',
  QUARANTINE_CHAIN_BROKEN: 'forked',
  QUARANTINE_AUTHOR_UNPROVEN: 'author_unproven',
};

/** A body that was not UTF-8 JSON, as a reader hands it to `ChainScanner.classify`. */
export const NOT_JSON: unique symbol = Symbol('writ.eventstore.not-json');

/** The aggregate a subject belongs to; `entityId` null checks no binding (a strict check without a task id). */
export interface ChainAggregate {
  readonly entityType: string;
  readonly entityId: string | null;
}

/** What one stored message is to its aggregate's chain. */
export type MessageVerdict =
  /** The chain's next event (the head moves to it). */
  | { readonly kind: 'event'; readonly event: EventEnvelope }
  /** Not an event of this chain, and the chain is whole without it: skipped, with the reason. */
  | { readonly kind: 'quarantined'; readonly reason: QuarantineReason; readonly detail: string }
  /** What a changed, dropped, reordered or forked event looks like: the chain is broken here. */
  | { readonly kind: 'broken'; readonly reason: ChainBreakReason; readonly taskSeq: number; readonly detail: string };

/**
 * The rule that tells junk from tampering (docs/verification.md, "Quarantine"),
 * applied to one aggregate's stored messages in stream order. The log is
 * append-only, so a message stored after the chain reached a position can
 * neither change nor remove what the chain holds; a hash chain proves nothing
 * about bytes it does not link. Hence:
 *
 * - junk, quarantined: bytes that are not JSON, not an envelope, or an
 *   envelope of another aggregate; an envelope for a `task_seq` the chain
 *   already holds (a duplicate, or a rival stored after the chain's own); an
 *   envelope whose hash does not recompute and that does not sit where the
 *   chain's next event belongs (its link and position vouch for nothing);
 * - a break, never skipped: an envelope of this aggregate at the next
 *   `task_seq` that links to the head but whose hash does not recompute (the
 *   next event, changed: `modified`); an intact envelope at the next
 *   `task_seq` that links elsewhere (`forked`: a rewritten predecessor or a
 *   second history); an intact envelope beyond the next `task_seq`
 *   (`dropped` / `reordered`, or `modified` when a quarantined message sits
 *   where the missing event would be: an event whose bytes changed).
 *
 * So changing a stored event's bytes is detected as long as any event after
 * it remains (its successor no longer fits), and always when the change keeps
 * the shape of that event; what no chain can tell apart is the destruction of
 * the last event from junk appended after it (as no chain detects a
 * truncation): receipts' signed chain heads cover the events before them.
 */
export class ChainScanner {
  readonly #aggregate: ChainAggregate;
  #head: ChainLink;
  /** The chain's hashes from `task_seq` `#firstSeq` on (a continued chain knows only what it was given). */
  readonly #hashes: string[];
  readonly #firstSeq: number;
  /** Whether a message was quarantined since the head event: then a missing event is one whose bytes changed. */
  #junkSinceHead = false;
  readonly #authorship: Authorship | undefined;
  /** On a service principal's own subject, the keys its chain registered so far (what its next event's seal is checked with). */
  readonly #own: PrincipalKeys | undefined;

  /**
   * `authorship`: every envelope's seal is checked too (docs/security.md,
   * "Authorship"); one whose author is unproven is junk
   * (`QUARANTINE_AUTHOR_UNPROVEN`), judged before its hash or position, so
   * that only an allowed service can ever make a message the chain needs.
   * On a service principal's subject, `from.events` are the chain's events
   * before the head (whose keys seal what follows).
   */
  constructor(
    aggregate: ChainAggregate,
    from?: { readonly head: ChainLink; readonly hashes: readonly string[]; readonly junkSinceHead?: boolean; readonly events?: readonly { readonly streamSeq: number; readonly event: EventEnvelope }[] },
    authorship?: Authorship,
  ) {
    this.#aggregate = aggregate;
    this.#authorship = authorship;
    if (authorship?.isServicePrincipalSubject(aggregate) === true) {
      this.#own = new Map();
      for (const { streamSeq, event } of from?.events ?? []) foldKeys(this.#own, event, streamSeq);
    }
    this.#head = from?.head ?? GENESIS;
    this.#hashes = [...(from?.hashes ?? [])];
    this.#firstSeq = this.#head.taskSeq - this.#hashes.length + 1;
    this.#junkSinceHead = from?.junkSinceHead ?? false;
  }

  /** The last event accepted (genesis before the first). */
  get head(): ChainLink {
    return this.#head;
  }

  /**
   * The verdict on the next stored message (its body decoded from JSON, or
   * `NOT_JSON`). `later`: the messages stored after it, when known, to tell a
   * reordered event from a dropped one (asked only then). `streamSeq`: where
   * the log stores it, when known (a seal by a key revoked before it fails).
   */
  classify(value: unknown, later: () => readonly unknown[] = () => [], streamSeq?: number): MessageVerdict {
    if (value === NOT_JSON) return this.#junk('QUARANTINE_NOT_JSON', 'the bytes are not UTF-8 JSON');
    const parsed = EventEnvelope.safeParse(value);
    if (!parsed.success) return this.#junk('QUARANTINE_NOT_ENVELOPE', `not an event envelope (${parsed.error.issues[0]?.path.join('.') || 'body'})`);
    const event = parsed.data;
    const binding = this.#bindingIssue(event);
    if (binding !== undefined) return this.#junk('QUARANTINE_WRONG_AGGREGATE', binding);
    if (this.#authorship !== undefined) {
      const unproven = this.#authorship.unproven(this.#aggregate, event, this.#own, streamSeq);
      if (unproven !== undefined) return this.#junk('QUARANTINE_AUTHOR_UNPROVEN', unproven);
    }
    let recomputed: string;
    try {
      recomputed = computeEventHash(value as Record<string, unknown>);
    } catch {
      return this.#junk('QUARANTINE_NOT_ENVELOPE', 'content cannot be canonicalized');
    }
    const intact = recomputed === event.hash;
    const next = this.#head.taskSeq + 1;
    const seq = event.task_seq;
    if (seq < next) {
      if (!intact) return this.#junk('QUARANTINE_HASH_MISMATCH', `task_seq ${seq}, which the chain holds, with a hash that does not recompute`);
      const held = this.#hashes[seq - this.#firstSeq];
      if (held === event.hash) return this.#junk('QUARANTINE_DUPLICATE', `task_seq ${seq} stored twice with identical content`);
      return this.#junk('QUARANTINE_FORKED', `task_seq ${seq} stored twice with different content; the chain keeps the one stored first`);
    }
    const links = event.prev_event_hash === this.#head.hash;
    if (seq === next) {
      if (intact && links) {
        this.#hashes.push(event.hash);
        this.#head = { taskSeq: seq, hash: event.hash };
        this.#junkSinceHead = false;
        if (this.#own !== undefined) foldKeys(this.#own, event, streamSeq ?? null);
        return { kind: 'event', event };
      }
      if (links) return this.#broken('modified', `hash of task_seq ${seq} does not recompute`);
      if (intact) return this.#broken('forked', `prev_event_hash of task_seq ${seq} does not link to the stored task_seq ${this.#head.taskSeq}`);
      return this.#junk('QUARANTINE_HASH_MISMATCH', `claims task_seq ${seq}, but neither does its hash recompute nor does it link to task_seq ${this.#head.taskSeq}`);
    }
    if (!intact) return this.#junk('QUARANTINE_HASH_MISMATCH', `claims task_seq ${seq} past the chain's next ${next}, with a hash that does not recompute`);
    if (this.#junkSinceHead) return this.#broken('modified', `task_seq ${next} is missing and a message where it belongs is not an intact event: an event whose bytes changed`);
    return later().some((raw) => taskSeqOf(raw) === next)
      ? this.#broken('reordered', `task_seq ${seq} stored before ${next}`)
      : this.#broken('dropped', `task_seq ${next} is missing`);
  }

  #bindingIssue(event: EventEnvelope): string | undefined {
    const { entityType, entityId } = this.#aggregate;
    if (entityId === null) return undefined;
    if (event.task_id !== entityId) return `task_id ${event.task_id} in the stream of ${entityId}`;
    if (entityType !== 'task' && (event.entity_type !== entityType || event.entity_id !== entityId)) {
      return `an event about ${event.entity_type} ${event.entity_id} in the stream of ${entityType} ${entityId}`;
    }
    return undefined;
  }

  #junk(reason: QuarantineReason, detail: string): MessageVerdict {
    this.#junkSinceHead = true;
    return { kind: 'quarantined', reason, detail };
  }

  #broken(reason: ChainBreakReason, detail: string): MessageVerdict {
    return { kind: 'broken', reason, taskSeq: this.#head.taskSeq + 1, detail };
  }
}

function taskSeqOf(raw: unknown): unknown {
  return typeof raw === 'object' && raw !== null ? (raw as { task_seq?: unknown }).task_seq : undefined;
}
