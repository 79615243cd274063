import {
  ContractError,
  EntityType,
  EventDraft,
  EventEnvelope,
  Id,
  safeParseContract,
  type ParseResult,
  type QuarantineReason,
  type QuarantineRecord,
} from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type PubAck, type StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ChainScanner, GENESIS, NOT_JSON, computeEventHash, sealEvent, type ChainBreakReason, type ChainLink } from './event-chain.js';
import {
  EventStoreError,
  JS_CONSUMER_NOT_FOUND,
  JS_WRONG_LAST_SEQUENCE,
  fromNatsError,
  isEventStoreError,
  jetStreamApiCode,
  type AppendedEvent,
} from './eventstore-errors.js';
import { Authorship, type AuthorshipOptions, type EventSealer } from './event-seal.js';
import { EMPTY_HEAD, HeadCache, type StreamHead } from './head-cache.js';
import { ReadCache } from './read-cache.js';
import { ensureEventStream, parseEventStoreConfig, type EnsureStreamOutcome, type EventStoreConfig, type EventStoreConfigInput } from './stream-config.js';

/** An event as read back, with where the log holds it. */
export type StoredEvent = {
  readonly streamSeq: number;
  readonly subject: string;
  readonly event: EventEnvelope;
};

export type AppendResult = {
  readonly subject: string;
  /** The aggregate's head after the append: pass `taskSeq` as the next `expectedSeq`. */
  readonly taskSeq: number;
  readonly streamSeq: number;
  readonly hash: string;
  /** One entry per draft, in order; `duplicate` marks events the log already held. */
  readonly events: readonly AppendedEvent[];
};

/**
 * A chain as verified from the whole stored subject. `length` counts the
 * chain's events; `quarantined` lists the messages skipped as junk (the rule:
 * `ChainScanner`), which never make a chain invalid.
 */
export type ChainVerification =
  | { readonly ok: true; readonly subject: string; readonly length: number; readonly head: StreamHead; readonly quarantined: readonly QuarantineRecord[] }
  | {
      readonly ok: false;
      readonly subject: string;
      readonly length: number;
      /** Position of the breaking message among the subject's stored messages (0-based). */
      readonly index: number;
      readonly taskSeq: number;
      readonly streamSeq: number;
      readonly reason: ChainBreakReason;
      readonly detail: string;
      readonly quarantined: readonly QuarantineRecord[];
    };

/**
 * One message of the log as a replay or `entryAt` sees it: an event of its
 * aggregate's chain, or a message quarantined with its reason (junk, or a
 * message of an aggregate whose chain is broken at or before it).
 */
export type LogEntry =
  | { readonly kind: 'event'; readonly streamSeq: number; readonly subject: string; readonly event: EventEnvelope }
  | { readonly kind: 'quarantined'; readonly streamSeq: number; readonly subject: string; readonly record: QuarantineRecord };

/** A message as a consumer delivered it: where the log stores it, and its bytes. */
export interface DeliveredMessage {
  readonly subject: string;
  readonly streamSeq: number;
  readonly data: Uint8Array;
}

/** Told once per process about each message a read, replay or verification quarantined. */
export type QuarantineListener = (record: QuarantineRecord) => void;

export type ReplayOptions = {
  /** Keep waiting for new events after catching up, until `signal` aborts. Default: stop at the end seen at the start. */
  readonly follow?: boolean;
  readonly signal?: AbortSignal;
};

export type ReplaySummary = {
  readonly count: number;
  /** Stream sequence of the last event handed to the handler, or null if none. */
  readonly lastStreamSeq: number | null;
};

export type ReplayHandler = (stored: StoredEvent) => void | Promise<void>;

/** Who the store is and whom it believes (docs/security.md, "Authorship"). */
export type EventStoreAuthorship = {
  /** Seals every event this store appends (the service's registered key); also settable later with `sealWith`. */
  readonly sealer?: EventSealer;
  /**
   * Checks every event read: its seal must verify with a registered key of a
   * service allowed to author it, else it is quarantined
   * (`QUARANTINE_AUTHOR_UNPROVEN`). Without it, nothing is checked.
   */
  readonly authorship?: Authorship | AuthorshipOptions;
};

type Aggregate = {
  readonly entityType: EntityType;
  readonly entityId: string;
  readonly subject: string;
};

/** A stored message: its body decoded from JSON (`NOT_JSON` when it is not), and its bytes for the quarantine record. */
type RawStored = { readonly streamSeq: number; readonly subject: string; readonly value: unknown; readonly data: Uint8Array };

/** Where a subject's chain breaks: the message, and what it looks like. */
type ChainBreakAt = { readonly reason: ChainBreakReason; readonly taskSeq: number; readonly streamSeq: number; readonly index: number; readonly detail: string };

/**
 * One aggregate's stored messages, read and judged up to `lastStreamSeq` (the
 * subject's last message when read, and so the append guard): the chain's
 * events, the messages quarantined beside them, and the break, if the chain
 * breaks (nothing after it is judged).
 */
type ChainState = {
  readonly events: readonly StoredEvent[];
  readonly quarantined: readonly QuarantineRecord[];
  readonly broken: ChainBreakAt | undefined;
  /** How many messages were examined (for `index`). */
  readonly examined: number;
  readonly lastStreamSeq: number;
  /** SHA-256 of the message at `lastStreamSeq`, to recognise it at the next read (a recreated stream reuses sequences). */
  readonly lastDigest: string | null;
};

const EMPTY_STATE: ChainState = { events: [], quarantined: [], broken: undefined, examined: 0, lastStreamSeq: 0, lastDigest: null };

/** How often an append whose guard was lost only to junk on its subject is retried with the new guard. */
const JUNK_GUARD_RETRIES = 5;
/** Messages remembered as already reported to the quarantine listeners. */
const REPORTED_QUARANTINES = 10_000;
/** Aggregates a replay keeps its place in at once (one it forgot is judged again from the store). */
const REPLAY_CURSORS = 4_096;

/** Where the chain of an append starts, and the guard the server must see. */
type AppendStart = { readonly link: ChainLink; readonly guard: number };

const FETCH_BATCH = 256;
/**
 * How many messages of one subject a read gets one by one before it opens an ordered consumer for
 * the rest. A governed action's task holds ~15 events, so a service's read of a task it has not
 * read yet, or of the events since its last read, is a few gets.
 */
const GETS_BEFORE_SCAN = 32;
const FOLLOW_FETCH_EXPIRES_MS = 30_000;
/**
 * How long the server keeps a scan's ephemeral consumer after its last pull. A
 * scan does not delete its consumer: deleting consumers is the operator's alone
 * (a service's bus credential may not, docs/security.md), so the server reaps
 * it. The bound outlives the scan's longest pull (a live follow is never
 * reaped) and no more, since every consumer left costs the server on each
 * append to the stream until it goes.
 */
const SCAN_CONSUMER_GRACE_MS = 5_000;
/** How many times in a row a scan opens its consumer again after the server reaped it, without a message in between. */
const SCAN_REOPENS = 5;
/**
 * How long past its expiry a pull may stay unanswered before the scan gives up on the consumer. The
 * server answers every pull by its expiry (messages, or a timeout status); nats.js ends an ordered
 * fetch only on that answer. A consumer the cluster lists but no peer runs (nats-server 2.9 leaves
 * such ephemerals behind node kills and partitions) never answers, and the fetch waited forever: a
 * projection's boot replay hung for 15 minutes. The scan opens a new consumer instead.
 */
const SCAN_PULL_GRACE_MS = 5_000;
/** How many lost copies of one event's key an append steps over (each a race lost on a replicated stream) before it reports a conflict. */
const LOSER_HOPS = 8;
const encoder = new TextEncoder();
// Fatal: bytes that are not UTF-8 are junk, not text with replacement characters.
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Per-aggregate append-only event log on one JetStream stream.
 *
 * Each aggregate (a task, or a principal, cell, policy…) owns the subject
 * `<prefix>.<entity_type>.<id>`. Its order is `task_seq` 1, 2, 3…, chained by
 * `prev_event_hash`; the append guard is the subject's last *stream* sequence
 * (`Nats-Expected-Last-Subject-Sequence`), so two writers at the same
 * `expectedSeq` cannot both win.
 *
 * Known limits (absorbed elsewhere, see DESIGN "The log"): the guard and
 * `Nats-Msg-Id` dedupe have not been authoritative across leader changes, and
 * dedupe only holds inside the duplicate window. Hence `read` verifies the
 * whole chain and refuses a fork instead of folding it, and callers stay
 * idempotent by their own keys.
 *
 * Anyone allowed to publish on a subject can store bytes that are no event
 * (invariant 10). Every read judges each stored message with `ChainScanner`:
 * junk is quarantined (skipped, reported once to `onQuarantine` listeners)
 * and never stalls a reader or an append; what looks like a changed event is
 * still a break (`EVENTSTORE_CHAIN_BROKEN`). The append guard is the
 * subject's last message, junk included, while `prev_event_hash` links the
 * last event of the chain.
 */
export class EventStore {
  readonly config: EventStoreConfig;
  /** What start-up did to the stream. */
  readonly stream: EnsureStreamOutcome;
  readonly #js: JetStreamClient;
  /** Where ordered consumers (long reads, replays) are opened: `#js`, or the service's consumer connection. */
  readonly #scans: JetStreamClient;
  readonly #jsm: JetStreamManager;
  readonly #heads: HeadCache;
  readonly #reads: ReadCache<ChainState>;
  readonly #listeners = new Set<QuarantineListener>();
  /** Stream sequences already reported to the listeners, oldest first. */
  readonly #reported = new Set<number>();
  /** What every read checks each event's author against; undefined: authorship is not checked. */
  readonly authorship: Authorship | undefined;
  #sealer: EventSealer | undefined;
  /**
   * The stream has replicas: its append guard is not authoritative (nats-server 2.9 checks the expected
   * last subject sequence against the state it has applied, so two proposals in flight can both pass),
   * so each fresh write is checked to be the chain's event at its position before it is reported.
   */
  readonly #replicated: boolean;

  private constructor(config: EventStoreConfig, stream: EnsureStreamOutcome, js: JetStreamClient, jsm: JetStreamManager, authorship: EventStoreAuthorship, scans: JetStreamClient) {
    this.config = config;
    this.authorship = authorship.authorship === undefined || authorship.authorship instanceof Authorship ? authorship.authorship : new Authorship(authorship.authorship);
    this.#sealer = authorship.sealer;
    this.stream = stream;
    this.#replicated = Math.max(config.replicas, Number(stream.kept['num_replicas'] ?? 1)) > 1;
    this.#js = js;
    this.#scans = scans;
    this.#jsm = jsm;
    this.#heads = new HeadCache(config.headCacheSize);
    this.#reads = new ReadCache<ChainState>(config.readCacheEvents);
  }

  /**
   * Validates the config, creates or updates the stream (idempotent), and
   * returns a store on the caller's connection (the caller closes it).
   */
  /**
   * `connections.scans`: where reads too long for message gets, and replays, open their ordered
   * consumers (a service's consumer connection, whose user answers no requests: the server then
   * keeps no reply entry per delivered message; bus `connectConsumerBus`). Default: `nc`.
   */
  static async open(nc: NatsConnection, input: EventStoreConfigInput = {}, authorship: EventStoreAuthorship = {}, connections: { readonly scans?: NatsConnection } = {}): Promise<EventStore> {
    const config = parseEventStoreConfig(input);
    let jsm: JetStreamManager;
    try {
      jsm = await jetstreamManager(nc, { timeout: config.requestTimeoutMs });
    } catch (error) {
      throw fromNatsError(error, { operation: 'connect to JetStream' });
    }
    const stream = await ensureEventStream(jsm, config);
    const js = jetstream(nc, { timeout: config.requestTimeoutMs });
    const scans = connections.scans === undefined ? js : jetstream(connections.scans, { timeout: config.requestTimeoutMs });
    return new EventStore(config, stream, js, jsm, authorship, scans);
  }

  /**
   * Seals every event appended from now on with `sealer` (a service's key,
   * once registered; after a rotation, the new active key). Undefined: events
   * are appended unsealed, which readers that check authorship refuse.
   */
  sealWith(sealer: EventSealer | undefined): void {
    this.#sealer = sealer;
  }

  get sealer(): EventSealer | undefined {
    return this.#sealer;
  }

  /**
   * Appends `drafts` to the task's log, in order, if the task's last `task_seq`
   * is `expectedSeq` (0 for a new task). Fills `task_id`, `task_seq`,
   * `prev_event_hash` and `hash`; each message carries `Nats-Msg-Id` =
   * `<entity>.<id>:<idempotency_key or event_id>`, so a re-sent append inside
   * the duplicate window stores nothing new and reports the original sequences
   * with `duplicate: true`.
   *
   * A lost race throws `EVENTSTORE_CONFLICT`: re-read, decide again, retry.
   *
   * A multi-event append is one guarded publish per event, not a transaction:
   * if the process dies (or a conflict or outage strikes) half way, the stored
   * prefix stays and is itself a valid chain. Retrying the same drafts with the
   * same `expectedSeq` completes it: the prefix comes back as duplicates (within
   * the window) and the rest is appended. Error details list what was stored.
   */
  async append(taskId: string, drafts: readonly unknown[], expectedSeq: number): Promise<AppendResult> {
    return this.#append(this.#task(taskId), drafts, expectedSeq);
  }

  /**
   * The same for a non-task aggregate on `<prefix>.<entity_type>.<id>`; every
   * draft must be about that entity. Until the envelope gains an
   * aggregate-neutral field, `task_id` and `task_seq` carry the aggregate's id
   * and its own sequence.
   */
  async appendToEntity(entityType: string, entityId: string, drafts: readonly unknown[], expectedSeq: number): Promise<AppendResult> {
    return this.#append(this.#entity(entityType, entityId), drafts, expectedSeq);
  }

  /**
   * The task's last event (task_seq 0 and hash null when it has none); its
   * `streamSeq` is the subject's last stored message, which may be junk after
   * the event: the append guard.
   */
  async head(taskId: string): Promise<StreamHead> {
    return this.#readHead(this.#task(taskId));
  }

  async headOfEntity(entityType: string, entityId: string): Promise<StreamHead> {
    return this.#readHead(this.#entity(entityType, entityId));
  }

  /**
   * The task's events in order, up to its last event at the time of the call.
   * The chain is verified first; a broken one throws `EVENTSTORE_CHAIN_BROKEN`
   * rather than being handed to a fold. Junk stored on the subject is skipped
   * (and reported to the quarantine listeners).
   */
  async read(taskId: string): Promise<StoredEvent[]> {
    return this.#read(this.#task(taskId));
  }

  async readEntity(entityType: string, entityId: string): Promise<StoredEvent[]> {
    return this.#read(this.#entity(entityType, entityId));
  }

  /**
   * The task's events, read at least through the event a consumer delivered (stored at `streamSeq`,
   * with hash `hash`), for a handler that reacts to each of them. When this process already judged
   * the task past that event (it read it, or wrote it: its own appends extend the cache) and holds
   * the delivered event there, those events answer without a request: they may end before the log
   * does, which the append guard turns into a conflict, never a wrong chain (and a conflict makes
   * the next read go to the server). Otherwise it is `read`.
   */
  async readThrough(taskId: string, streamSeq: number, hash: string): Promise<StoredEvent[]> {
    const aggregate = this.#task(taskId);
    const cached = this.#reads.get(aggregate.subject);
    if (cached !== undefined && cached.lastStreamSeq >= streamSeq) {
      const judged = judgedIn(cached, streamSeq);
      if (judged?.kind === 'event' && judged.event.hash === hash) return [...cached.events];
    }
    return this.#read(aggregate);
  }

  /** Re-reads the task's log (no cache) and reports whether it is a valid chain, or where it first breaks, with the messages it quarantined. */
  async verifyChain(taskId: string): Promise<ChainVerification> {
    return this.#verify(this.#task(taskId));
  }

  async verifyEntityChain(entityType: string, entityId: string): Promise<ChainVerification> {
    return this.#verify(this.#entity(entityType, entityId));
  }

  /**
   * Every event of the stream from `fromStreamSeq` on, in stream order, either
   * as an async iterable or into a handler (awaited one at a time). Each
   * message is judged on its aggregate's chain, exactly as `read` judges it:
   * only chain events are handed over; quarantined messages (and those of an
   * aggregate whose chain is broken) are skipped — `replayLog` shows them.
   */
  replay(fromStreamSeq: number, options?: ReplayOptions): AsyncIterable<StoredEvent>;
  replay(fromStreamSeq: number, handler: ReplayHandler, options?: ReplayOptions): Promise<ReplaySummary>;
  replay(
    fromStreamSeq: number,
    handlerOrOptions?: ReplayHandler | ReplayOptions,
    options?: ReplayOptions,
  ): AsyncIterable<StoredEvent> | Promise<ReplaySummary> {
    if (!Number.isSafeInteger(fromStreamSeq) || fromStreamSeq < 1) {
      const error = requestInvalid(`fromStreamSeq must be a positive integer, got ${fromStreamSeq}`);
      return typeof handlerOrOptions === 'function' ? Promise.reject(error) : failingIterable(error);
    }
    if (typeof handlerOrOptions === 'function') return this.#replayInto(fromStreamSeq, handlerOrOptions, options ?? {});
    return this.#replay(fromStreamSeq, handlerOrOptions ?? {});
  }

  /**
   * The stream from `fromStreamSeq` on as `LogEntry`s, one per stored message
   * in stream order: every chain event, and every other message as
   * quarantined with its reason (so a reader that counts positions, such as a
   * projection's checkpoint, moves past junk instead of stalling on it).
   */
  replayLog(fromStreamSeq: number, options: ReplayOptions = {}): AsyncIterable<LogEntry> {
    if (!Number.isSafeInteger(fromStreamSeq) || fromStreamSeq < 1) return failingIterable(requestInvalid(`fromStreamSeq must be a positive integer, got ${fromStreamSeq}`));
    return this.#replayLog(fromStreamSeq, options);
  }

  /**
   * What the message stored at `streamSeq` on `subject` is (a consumer's
   * delivery): its aggregate's chain event, or quarantined with the reason.
   * Reads the aggregate as `read` does (cached).
   */
  async entryAt(subject: string, streamSeq: number): Promise<LogEntry> {
    const aggregate = this.#aggregateOf(subject);
    if (aggregate === undefined) return this.#quarantinedEntry(this.#wrongSubject(await this.#rawAt(subject, streamSeq)), true);
    const state = await this.#stateThrough(aggregate, streamSeq);
    const judged = judgedIn(state, streamSeq);
    if (judged?.kind === 'event') return { kind: 'event', streamSeq, subject, event: judged.event };
    if (judged?.kind === 'quarantined') return this.#quarantinedEntry(judged.record, false);
    if (state.broken === undefined || streamSeq < state.broken.streamSeq) throw requestInvalid(`no message on ${subject} at stream seq ${streamSeq}`);
    return this.#quarantinedEntry(this.#record(await this.#rawAt(subject, streamSeq), 'QUARANTINE_CHAIN_BROKEN', brokenDetail(state.broken)), true);
  }

  /**
   * What each message of a consumer's contiguous delivery is, as `entryAt`
   * judges it one by one, without a get per message. `run` must hold
   * consecutive stream sequences: every message the log stores there (the
   * consumer's filter covers the log), so between two of an aggregate's
   * messages in it the aggregate has no other. Per aggregate, one get proves
   * that nothing of it was stored between the chain this process holds and
   * its first message in the run, and that the log's copy of that message is
   * the delivered one; each message is then judged on the chain (hash, link,
   * seal) as a read judges it, and taken from the delivered bytes only when
   * it is the chain's next event. Anything else (junk, a break), and every
   * aggregate this cannot vouch for that way (not read here yet, a
   * redelivery, a broken chain, bytes that differ from the log's), is read
   * message by message, as `entryAt` reads it.
   */
  async entriesOf(run: readonly DeliveredMessage[]): Promise<LogEntry[]> {
    const first = run[0];
    if (first === undefined) return [];
    if (run.some((message, index) => message.streamSeq !== first.streamSeq + index)) throw requestInvalid('entriesOf needs consecutive stream sequences');
    const bySubject = new Map<string, DeliveredMessage[]>();
    for (const message of run) {
      const messages = bySubject.get(message.subject);
      if (messages === undefined) bySubject.set(message.subject, [message]);
      else messages.push(message);
    }
    const entries = new Map<number, LogEntry>();
    await Promise.all(
      [...bySubject].map(async ([subject, messages]) => {
        const aggregate = this.#aggregateOf(subject);
        const judged = aggregate === undefined ? [] : await this.#judgeDelivered(aggregate, messages);
        for (const [index, message] of messages.entries()) {
          // In order: each read extends the chain the one before cached.
          entries.set(message.streamSeq, judged[index] ?? (await this.entryAt(subject, message.streamSeq)));
        }
      }),
    );
    return run.map((message) => entries.get(message.streamSeq)!);
  }

  /** `entriesOf` for one aggregate's messages of a run: the entries it could vouch for (a prefix; the rest are read). */
  async #judgeDelivered(aggregate: Aggregate, messages: readonly DeliveredMessage[]): Promise<LogEntry[]> {
    const { subject } = aggregate;
    const first = messages[0]!;
    const cached = this.#reads.get(subject);
    if (cached?.broken !== undefined || (cached !== undefined && cached.lastStreamSeq >= first.streamSeq)) return [];
    const stored = await this.#getMessage(subject, { seq: (cached?.lastStreamSeq ?? 0) + 1, next_by_subj: subject });
    if (stored === null || stored.seq !== first.streamSeq || !Buffer.from(stored.data).equals(first.data)) return [];
    const raws = messages.map((message) => ({ streamSeq: message.streamSeq, subject, value: decodeJson(message.data), data: message.data }));
    await this.#learnAuthors(aggregate, raws);
    let state = cached ?? EMPTY_STATE;
    const entries: LogEntry[] = [];
    for (const raw of raws) {
      // One at a time, as `entryAt` judges each. Only an event that takes its place on the chain is taken from the
      // delivered bytes; anything else (junk, a break) is judged on the log's own copy, read as `entryAt` reads it.
      const next = this.#judge(aggregate, [raw], state, false);
      const judged = judgedIn(next, raw.streamSeq);
      if (judged?.kind !== 'event') break;
      state = next;
      entries.push({ kind: 'event', streamSeq: raw.streamSeq, subject, event: judged.event });
    }
    if (entries.length > 0) this.#keep(subject, state, 'part-way');
    return entries;
  }

  /**
   * Before a reader outside the store judges `value`, stored on `subject`,
   * with `ChainScanner` and this store's `authorship`: makes sure the keys of
   * the service that sealed it are known (read from its principal's subject
   * when not). Nothing to do without authorship.
   */
  async knowAuthorsOf(subject: string, value: unknown): Promise<void> {
    const aggregate = this.#aggregateOf(subject);
    if (aggregate === undefined || this.authorship === undefined) return;
    await this.#learnAuthors(aggregate, [{ streamSeq: 0, subject, value, data: new Uint8Array() }]);
  }

  /** Calls `listener` once for each message this process quarantines from now on; returns the unsubscribe. */
  onQuarantine(listener: QuarantineListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ---- append ---------------------------------------------------------------------------------

  async #append(aggregate: Aggregate, drafts: readonly unknown[], expectedSeq: number): Promise<AppendResult> {
    try {
      return await this.#appendGuarded(aggregate, drafts, expectedSeq);
    } catch (error) {
      // Whoever decided this append read the aggregate behind the log: `readThrough` must not answer from that again.
      if (isEventStoreError(error, 'EVENTSTORE_CONFLICT')) this.#reads.forget(aggregate.subject);
      throw error;
    }
  }

  async #appendGuarded(aggregate: Aggregate, drafts: readonly unknown[], expectedSeq: number): Promise<AppendResult> {
    if (!Number.isSafeInteger(expectedSeq) || expectedSeq < 0) {
      throw requestInvalid(`expectedSeq must be a non-negative integer, got ${expectedSeq}`);
    }
    if (drafts.length === 0) throw requestInvalid('an append needs at least one event');
    const parsed = drafts.map((draft, index) => unwrap(safeParseContract(`EventDraft[${index}]`, EventDraft, draft)));
    const msgIds = parsed.map((draft) => `${aggregate.entityType}.${aggregate.entityId}:${draft.idempotency_key ?? draft.event_id}`);
    if (msgIds.length > 1 && new Set(msgIds).size !== msgIds.length) {
      throw requestInvalid('two events of one append share an idempotency key (or event_id); the second would be dropped as a duplicate');
    }
    if (this.authorship !== undefined) {
      for (const draft of parsed) {
        const allowed = this.authorship.mayAppend(aggregate, draft.event_type, this.#sealer);
        if (!allowed.ok) {
          const who = this.#sealer?.principalId ?? null;
          throw new EventStoreError(
            'EVENTSTORE_AUTHOR_NOT_ALLOWED',
            `${who ?? 'an unsealed store'} may not append ${draft.event_type} on ${aggregate.subject} (${allowed.authors === 'self' ? 'only the principal itself' : allowed.authors.join(' or ') || 'no service'} may: EVENT_AUTHORSHIP); nothing was appended`,
            { subject: aggregate.subject, eventType: draft.event_type, principalId: who, authors: allowed.authors },
          );
        }
      }
    }
    if (aggregate.entityType !== 'task') {
      const stray = parsed.find((draft) => draft.entity_type !== aggregate.entityType || draft.entity_id !== aggregate.entityId);
      if (stray) throw requestInvalid(`event ${stray.event_id} is about ${stray.entity_type} ${stray.entity_id}, not ${aggregate.entityType} ${aggregate.entityId}`);
    }

    // The cached head answers without a round trip (and without an extra await on the hot path).
    const cached = this.#heads.get(aggregate.subject);
    const start = cached !== undefined && cached.taskSeq === expectedSeq ? { link: cached, guard: cached.streamSeq } : await this.#appendStart(aggregate, expectedSeq, cached);
    // Seal and size every event before the first publish, so that a bad batch writes nothing.
    let sealed = await this.#sealAll(aggregate, parsed, 0, start.link);
    const { subject } = aggregate;
    const appended: AppendedEvent[] = [];
    let link = start.link;
    let guard = start.guard;
    let lastWasWrite = false;
    // Fresh writes, in order: each was guarded by the one before, so together they are exactly what follows `start.guard` on the subject
    // (unless junk landed between two of them: then `contiguous` is false and the cached read is not extended).
    const written: StoredEvent[] = [];
    let lastBytes: Uint8Array | undefined;
    let contiguous = true;
    let junkRetries = 0;
    let loserHops = 0;

    for (let index = 0; index < parsed.length; index++) {
      const { envelope, bytes } = sealed[index]!;
      let ack: PubAck;
      try {
        ack = await this.#js.publish(subject, bytes, {
          msgID: msgIds[index]!,
          expect: { lastSubjectSequence: guard },
          timeout: this.config.requestTimeoutMs,
        });
      } catch (error) {
        this.#heads.forget(subject);
        if (jetStreamApiCode(error) === JS_WRONG_LAST_SEQUENCE) {
          // Lost only to junk (the chain's head is still `link`): the junk is the new guard, the link stays.
          const head = await this.#headOrNull(aggregate);
          if (head !== null && head.taskSeq === link.taskSeq && head.hash === link.hash && head.streamSeq !== guard && junkRetries < JUNK_GUARD_RETRIES) {
            junkRetries++;
            guard = head.streamSeq;
            contiguous = false;
            index--;
            continue;
          }
          throw conflictError(subject, link.taskSeq, head?.taskSeq ?? null, appended, error);
        }
        throw fromNatsError(error, {
          operation: 'append',
          subject,
          eventId: envelope.event_id,
          maxMsgSize: this.config.maxMsgSize,
          appended,
        });
      }
      if (ack.duplicate) {
        // The log already holds this event: report what it holds, and chain the rest onto it.
        const stored = await this.#readStoredAt(aggregate, ack.seq);
        if (!(await this.#inChain(aggregate, stored.event.task_seq, ack.seq))) {
          // The stored copy lost a race at its position (a rival stored first holds it: it is quarantined as
          // forked), so it is no event of the chain. This append is a new decision that shares its key:
          // published again under a key derived from the loser's position, which every retry derives alike.
          if (++loserHops > LOSER_HOPS) throw conflictError(subject, link.taskSeq, null, appended, undefined);
          msgIds[index] = `${msgIds[index]!}~${ack.seq}`;
          index--;
          continue;
        }
        appended.push({ eventId: stored.event.event_id, taskSeq: stored.event.task_seq, streamSeq: ack.seq, hash: stored.event.hash, duplicate: true });
        const storedLink = { taskSeq: stored.event.task_seq, hash: stored.event.hash };
        if (stored.event.hash !== envelope.hash && index + 1 < parsed.length) {
          sealed = [...sealed.slice(0, index + 1), ...(await this.#sealAll(aggregate, parsed, index + 1, storedLink))];
        }
        link = storedLink;
        lastWasWrite = false;
      } else {
        if (this.#replicated && !(await this.#inChain(aggregate, envelope.task_seq, ack.seq))) {
          // A replicated stream let a rival at the same position through the guard (nats-server 2.9 checks it
          // against applied state only): the one stored first is the chain's, ours is quarantined as forked.
          this.#heads.forget(subject);
          throw conflictError(subject, link.taskSeq, null, appended, undefined);
        }
        appended.push({ eventId: envelope.event_id, taskSeq: envelope.task_seq, streamSeq: ack.seq, hash: envelope.hash, duplicate: false });
        link = { taskSeq: envelope.task_seq, hash: envelope.hash };
        lastWasWrite = true;
        written.push({ streamSeq: ack.seq, subject, event: envelope });
        lastBytes = bytes;
      }
      guard = ack.seq;
    }

    // A fresh write is the subject's head at that instant; a duplicate may lie
    // anywhere in the history, so it is not cached as the head.
    if (lastWasWrite) this.#heads.advance(subject, { taskSeq: link.taskSeq, streamSeq: guard, hash: link.hash });
    else this.#heads.forget(subject);
    if (contiguous && lastWasWrite && lastBytes !== undefined) this.#extendRead(subject, start.guard, written, lastBytes);
    return { subject, taskSeq: link.taskSeq, streamSeq: guard, hash: link.hash ?? '', events: appended };
  }

  /**
   * The chain link and guard for an append at `expectedSeq` when the head
   * cache does not agree with it: trivially for a new aggregate, else from the
   * subject's last stored message.
   */
  async #appendStart(aggregate: Aggregate, expectedSeq: number, cached: StreamHead | undefined): Promise<AppendStart> {
    // A new aggregate's guard is "no message on the subject": wrong only if it exists, and then the server says so.
    if (cached === undefined && expectedSeq === 0) return { link: GENESIS, guard: 0 };
    const head = await this.#readHead(aggregate);
    if (head.taskSeq === expectedSeq) return { link: head, guard: head.streamSeq };
    if (head.taskSeq < expectedSeq) {
      throw conflictError(aggregate.subject, expectedSeq, head.taskSeq, [], null);
    }
    // The caller is behind. This may be a retry of an append that already
    // landed, which only the server's dedupe can recognise; so the append is
    // still sent, guarded by a sequence older than the subject's head (the
    // head never moves back: the stream denies deletes and purges). A
    // duplicate then comes back as such, anything else as a conflict.
    return { link: { taskSeq: expectedSeq, hash: null }, guard: head.streamSeq - 1 };
  }

  async #sealAll(aggregate: Aggregate, drafts: readonly EventDraft[], from: number, start: ChainLink): Promise<{ envelope: EventEnvelope; bytes: Uint8Array }[]> {
    const out: { envelope: EventEnvelope; bytes: Uint8Array }[] = [];
    let link = start;
    for (let index = from; index < drafts.length; index++) {
      const draft = drafts[index]!;
      let envelope: EventEnvelope;
      try {
        envelope = sealEvent(draft, aggregate.entityId, link);
      } catch (cause) {
        throw new ContractError(`EventDraft[${index}]`, [{ path: 'payload', code: 'not_json', message: 'payload must be JSON (no NaN, Infinity, bigint, cycles or lone surrogates)' }], cause);
      }
      if (this.#sealer !== undefined) envelope.seal = await this.#sealer.seal(envelope.hash);
      const bytes = encoder.encode(JSON.stringify(envelope));
      if (bytes.byteLength > this.config.maxMsgSize) {
        throw new EventStoreError(
          'EVENTSTORE_EVENT_TOO_LARGE',
          `event ${envelope.event_id} is ${bytes.byteLength} bytes, over the ${this.config.maxMsgSize}-byte limit`,
          { subject: aggregate.subject, eventId: envelope.event_id, bytes: bytes.byteLength, maxBytes: this.config.maxMsgSize },
        );
      }
      out.push({ envelope, bytes });
      link = { taskSeq: envelope.task_seq, hash: envelope.hash };
    }
    return out;
  }

  /** The head after a lost guard, or null when it cannot be read (the conflict then says so). Also primes the caches for the caller's re-read. */
  async #headOrNull(aggregate: Aggregate): Promise<StreamHead | null> {
    try {
      return await this.#readHead(aggregate);
    } catch {
      return null;
    }
  }

  // ---- reads ----------------------------------------------------------------------------------

  /** The chain's head, with the subject's last message as the guard; a broken chain throws. */
  async #readHead(aggregate: Aggregate): Promise<StreamHead> {
    const state = await this.#state(aggregate);
    if (state.broken !== undefined) throw brokenError(aggregate.subject, state.broken);
    return headOf(state);
  }

  /**
   * Whether the chain's event at `taskSeq` is the message stored at `streamSeq` (false when a rival stored
   * before it holds the position, or the chain is broken there): what every reader will make of it.
   */
  async #inChain(aggregate: Aggregate, taskSeq: number, streamSeq: number): Promise<boolean> {
    const state = await this.#state(aggregate);
    return state.events.find((stored) => stored.event.task_seq === taskSeq)?.streamSeq === streamSeq;
  }

  async #readStoredAt(aggregate: Aggregate, streamSeq: number): Promise<StoredEvent> {
    const message = await this.#getMessage(aggregate.subject, { seq: streamSeq });
    if (message === null || message.subject !== aggregate.subject) {
      throw chainBroken(aggregate.subject, 'misfiled', null, streamSeq, 'the event reported as a duplicate is not stored on this subject');
    }
    return checkedStored(aggregate, message);
  }

  async #getMessage(subject: string, query: { last_by_subj: string } | { seq: number } | { seq: number; next_by_subj: string }): Promise<StoredMsg | null> {
    try {
      // `next_by_subj` is in the server's message-get API since 2.8; the client types only list it for direct gets.
      return await this.#jsm.streams.getMessage(this.config.stream, query as { seq: number });
    } catch (error) {
      throw fromNatsError(error, { operation: 'read event', subject });
    }
  }

  /** The aggregate's chain events; a broken chain throws `EVENTSTORE_CHAIN_BROKEN`. */
  async #read(aggregate: Aggregate): Promise<StoredEvent[]> {
    const state = await this.#state(aggregate);
    if (state.broken !== undefined) throw brokenError(aggregate.subject, state.broken);
    return [...state.events];
  }

  /**
   * The aggregate's stored messages judged up to its last one. A cached state
   * (`ReadCache`) is trusted, the log being append-only and the state judged
   * when it was read; only the messages after it are fetched (none costs one
   * message get, one costs two) and judged on from it, which yields exactly
   * what judging the whole subject again would. A subject whose last message
   * is not the one the cache ends with (a recreated stream) is read in full.
   * A broken state is returned, not thrown (and not cached).
   */
  async #state(aggregate: Aggregate): Promise<ChainState> {
    const { subject } = aggregate;
    const last = await this.#getMessage(subject, { last_by_subj: subject });
    if (last === null) {
      this.#reads.forget(subject);
      this.#heads.replace(subject, EMPTY_HEAD);
      return EMPTY_STATE;
    }
    const cached = this.#reads.get(subject);
    let state: ChainState | undefined;
    if (cached !== undefined && last.seq === cached.lastStreamSeq && sha256Hex(last.data) === cached.lastDigest) {
      state = cached;
    } else if (cached !== undefined && last.seq > cached.lastStreamSeq) {
      const first = await this.#getMessage(subject, { seq: cached.lastStreamSeq + 1, next_by_subj: subject });
      if (first !== null) {
        const suffix = first.seq === last.seq ? [this.#raw(last)] : [this.#raw(first), ...(await this.#collect(subject, first.seq + 1, last.seq))];
        await this.#learnAuthors(aggregate, suffix);
        state = this.#judge(aggregate, suffix, cached);
      }
    }
    if (state === undefined) {
      const raws = await this.#collect(subject, 1, last.seq);
      await this.#learnAuthors(aggregate, raws);
      state = this.#judge(aggregate, raws, EMPTY_STATE);
    }
    this.#keep(subject, state, 'to its end');
    return state;
  }

  /**
   * Caches a state judged without a break, and its head: replaced when the subject was read to its
   * end, only advanced when read part-way (a later head this process knows stays); a broken state
   * is forgotten with its head.
   */
  #keep(subject: string, state: ChainState, read: 'to its end' | 'part-way'): void {
    if (state.broken !== undefined) {
      this.#heads.forget(subject);
      this.#reads.forget(subject);
      return;
    }
    if (read === 'to its end') this.#heads.replace(subject, headOf(state));
    else this.#heads.advance(subject, headOf(state));
    if (this.#reads.get(subject) !== state) this.#reads.set(subject, state);
  }

  /**
   * The aggregate's messages judged at least through `streamSeq` (a message stored on its subject,
   * as a consumer delivered it), for a reader that follows the log in order. A judgment is final
   * once made (the log is append-only), so a cached state that reaches `streamSeq` answers after one
   * get proves the message there is the one it judged (a stream recreated under the process is read
   * afresh); one that ends before it reads on only through `streamSeq`, not to the subject's end:
   * one get per delivery when the reader keeps up, instead of a last-message get and the messages
   * after it.
   */
  async #stateThrough(aggregate: Aggregate, streamSeq: number): Promise<ChainState> {
    const { subject } = aggregate;
    const cached = this.#reads.get(subject);
    if (cached !== undefined && cached.lastStreamSeq >= streamSeq) {
      const stored = await this.#getMessage(subject, { seq: streamSeq });
      return stored !== null && stored.subject === subject && sameJudged(cached, streamSeq, stored.data) ? cached : this.#state(aggregate);
    }
    const from = cached ?? EMPTY_STATE;
    const raws = await this.#collect(subject, from.lastStreamSeq + 1, streamSeq);
    await this.#learnAuthors(aggregate, raws);
    const state = this.#judge(aggregate, raws, from);
    this.#keep(subject, state, 'part-way');
    return state;
  }

  /** `raws` (the subject's messages after `from`'s last) judged on from `from`; newly quarantined messages are reported (unless `report` is false). */
  #judge(aggregate: Aggregate, raws: readonly RawStored[], from: ChainState, report = true): ChainState {
    if (from.broken !== undefined || raws.length === 0) return from;
    const scanner = scannerAt(aggregate, from, this.authorship);
    const events = [...from.events];
    const quarantined = [...from.quarantined];
    let broken: ChainBreakAt | undefined;
    let examined = from.examined;
    for (let index = 0; index < raws.length && broken === undefined; index++) {
      const raw = raws[index]!;
      const verdict = scanner.classify(raw.value, () => raws.slice(index + 1).map((later) => later.value), raw.streamSeq);
      if (verdict.kind === 'event') events.push({ streamSeq: raw.streamSeq, subject: raw.subject, event: verdict.event });
      else if (verdict.kind === 'quarantined') quarantined.push(this.#record(raw, verdict.reason, verdict.detail));
      else broken = { reason: verdict.reason, taskSeq: verdict.taskSeq, streamSeq: raw.streamSeq, index: examined, detail: verdict.detail };
      examined++;
    }
    if (report) this.#report(quarantined.slice(from.quarantined.length));
    const last = raws.at(-1)!;
    return { events, quarantined, broken, examined, lastStreamSeq: last.streamSeq, lastDigest: sha256Hex(last.data) };
  }

  /** A cached state that ended at `guard` grows by this process's own fresh writes after it. */
  #extendRead(subject: string, guard: number, written: readonly StoredEvent[], lastBytes: Uint8Array): void {
    if (written.length === 0) return;
    const cached = this.#reads.get(subject);
    if (cached === undefined || cached.lastStreamSeq !== guard) return;
    this.#reads.set(subject, {
      ...cached,
      events: [...cached.events, ...written],
      examined: cached.examined + written.length,
      lastStreamSeq: written.at(-1)!.streamSeq,
      lastDigest: sha256Hex(lastBytes),
    });
  }

  /**
   * The subject's messages from `fromSeq` through `untilSeq` (which must exist on it). A short run is
   * read message by message (`next_by_subj` gets: one request each, nothing for the server to set up
   * or reap); past `GETS_BEFORE_SCAN` messages the rest streams through an ordered consumer, whose
   * setup (a consumer created, the stream's info read) costs the server far more than one get.
   */
  async #collect(subject: string, fromSeq: number, untilSeq: number): Promise<RawStored[]> {
    const raws: RawStored[] = [];
    let next = fromSeq;
    while (next <= untilSeq && raws.length < GETS_BEFORE_SCAN) {
      const message = await this.#getMessage(subject, { seq: next, next_by_subj: subject });
      if (message === null || message.seq > untilSeq) throw requestInvalid(`no message on ${subject} at stream seq ${untilSeq}`);
      raws.push(this.#raw(message));
      next = message.seq + 1;
    }
    if (next <= untilSeq) for await (const raw of this.#scan(subject, next, untilSeq, undefined)) raws.push(raw);
    return raws;
  }

  async #verify(aggregate: Aggregate): Promise<ChainVerification> {
    const last = await this.#getMessage(aggregate.subject, { last_by_subj: aggregate.subject });
    let state = EMPTY_STATE;
    if (last !== null) {
      const raws = await this.#collect(aggregate.subject, 1, last.seq);
      await this.#learnAuthors(aggregate, raws);
      state = this.#judge(aggregate, raws, EMPTY_STATE);
    }
    const { subject } = aggregate;
    if (state.broken === undefined) return { ok: true, subject, length: state.events.length, head: headOf(state), quarantined: state.quarantined };
    const { broken } = state;
    return {
      ok: false,
      subject,
      length: state.examined,
      index: broken.index,
      taskSeq: broken.taskSeq,
      streamSeq: broken.streamSeq,
      reason: broken.reason,
      detail: broken.detail,
      quarantined: state.quarantined,
    };
  }

  async *#replayLog(fromStreamSeq: number, options: ReplayOptions): AsyncGenerator<LogEntry> {
    let until: number | null = null;
    if (options.follow !== true) {
      try {
        until = (await this.#jsm.streams.info(this.config.stream)).state.last_seq;
      } catch (error) {
        throw fromNatsError(error, { operation: 'replay' });
      }
      if (until < fromStreamSeq) return;
    }
    // Each aggregate's place in its chain, least recently seen forgotten first. From the stream's start every subject is
    // seen from its first message; otherwise (or once forgotten) an aggregate is first read as `read` reads it.
    const cursors = new Map<string, ReplayCursor>();
    // Subjects whose cursor was forgotten: seen again, they are read, not started afresh.
    const forgotten = new Set<string>();
    for await (const raw of this.#scan(`${this.config.subjectPrefix}.>`, fromStreamSeq, until, options.signal)) {
      const aggregate = this.#aggregateOf(raw.subject);
      if (aggregate === undefined) {
        yield this.#quarantinedEntry(this.#wrongSubject(raw), true);
        continue;
      }
      let cursor = cursors.get(raw.subject);
      if (cursor === undefined) {
        const firstSight = fromStreamSeq === 1 && !forgotten.has(raw.subject);
        cursor = firstSight ? { scanner: scannerAt(aggregate, EMPTY_STATE, this.authorship), known: undefined, broken: undefined } : await this.#cursor(aggregate);
        if (cursors.size >= REPLAY_CURSORS) {
          const oldest = cursors.keys().next().value!;
          cursors.delete(oldest);
          forgotten.add(oldest);
        }
      }
      cursors.delete(raw.subject);
      cursors.set(raw.subject, cursor);
      await this.#learnAuthors(aggregate, [raw]);
      yield this.#advance(cursor, raw);
    }
  }

  /** An aggregate's replay cursor from its state as read now: what is judged is looked up, what comes later is judged on. */
  async #cursor(aggregate: Aggregate): Promise<ReplayCursor> {
    const state = await this.#state(aggregate);
    return { scanner: scannerAt(aggregate, state, this.authorship), known: state, broken: state.broken };
  }

  /** The entry of `raw`, moving the cursor on. */
  #advance(cursor: ReplayCursor, raw: RawStored): LogEntry {
    if (cursor.known !== undefined && raw.streamSeq <= cursor.known.lastStreamSeq) {
      const judged = judgedIn(cursor.known, raw.streamSeq);
      if (judged?.kind === 'event') return { kind: 'event', streamSeq: raw.streamSeq, subject: raw.subject, event: judged.event };
      if (judged?.kind === 'quarantined') return this.#quarantinedEntry(judged.record, true);
      return this.#quarantinedEntry(this.#record(raw, 'QUARANTINE_CHAIN_BROKEN', brokenDetail(cursor.known.broken)), true);
    }
    cursor.known = undefined;
    if (cursor.broken !== undefined) return this.#quarantinedEntry(this.#record(raw, 'QUARANTINE_CHAIN_BROKEN', brokenDetail(cursor.broken)), true);
    const verdict = cursor.scanner.classify(raw.value, undefined, raw.streamSeq);
    if (verdict.kind === 'event') return { kind: 'event', streamSeq: raw.streamSeq, subject: raw.subject, event: verdict.event };
    if (verdict.kind === 'quarantined') return this.#quarantinedEntry(this.#record(raw, verdict.reason, verdict.detail), true);
    cursor.broken = { reason: verdict.reason, taskSeq: verdict.taskSeq, streamSeq: raw.streamSeq, index: -1, detail: verdict.detail };
    return this.#quarantinedEntry(this.#record(raw, 'QUARANTINE_CHAIN_BROKEN', brokenDetail(cursor.broken)), true);
  }

  async *#replay(fromStreamSeq: number, options: ReplayOptions): AsyncGenerator<StoredEvent> {
    for await (const entry of this.#replayLog(fromStreamSeq, options)) {
      if (entry.kind === 'event') yield { streamSeq: entry.streamSeq, subject: entry.subject, event: entry.event };
    }
  }

  async #replayInto(fromStreamSeq: number, handler: ReplayHandler, options: ReplayOptions): Promise<ReplaySummary> {
    let count = 0;
    let lastStreamSeq: number | null = null;
    for await (const stored of this.#replay(fromStreamSeq, options)) {
      await handler(stored);
      count++;
      lastStreamSeq = stored.streamSeq;
    }
    return { count, lastStreamSeq };
  }

  /**
   * Ordered delivery of `filter` from `fromSeq`, through an ephemeral ordered
   * consumer, until the message at `untilSeq` (which must exist and match the
   * filter), or without end (`null`) until `signal` aborts.
   */
  async *#scan(filter: string, fromSeq: number, untilSeq: number | null, signal: AbortSignal | undefined): AsyncGenerator<RawStored> {
    const operation = untilSeq === null ? 'replay' : 'read events';
    const fetchExpiresMs = untilSeq === null ? FOLLOW_FETCH_EXPIRES_MS : Math.max(1_000, this.config.requestTimeoutMs);
    const open = async (startSeq: number) => {
      try {
        return await this.#scans.consumers.get(this.config.stream, {
          filter_subjects: filter,
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: startSeq,
          inactive_threshold: fetchExpiresMs + SCAN_CONSUMER_GRACE_MS,
        });
      } catch (error) {
        throw fromNatsError(error, { operation, subject: filter });
      }
    };
    // Where the scan stands: the consumer is opened again from here when the server reaped it, which it does
    // when the reader took longer than the grace between two fetches (a replay into a slow database, a host
    // saturated), so a long read resumes instead of failing and starting over.
    let next = fromSeq;
    let reopened = 0;
    let consumer = await open(next);
    const reopen = async (error: unknown): Promise<void> => {
      if (!consumerGone(error) || reopened >= SCAN_REOPENS) throw fromNatsError(error, { operation, subject: filter });
      reopened++;
      consumer = await open(next);
    };
    const abandon = async (): Promise<void> => {
      const stale = consumer;
      if (reopened >= SCAN_REOPENS) {
        throw new EventStoreError('EVENTSTORE_UNAVAILABLE', `${operation} stalled: ${SCAN_REOPENS + 1} consumers in a row left a pull unanswered past its expiry`, {
          operation,
          subject: filter,
        });
      }
      reopened++;
      consumer = await open(next);
      await stale.delete().catch(() => undefined);
    };
    // Nothing to close: each fetch is complete when it ends, and the server reaps the consumer once it is idle (SCAN_CONSUMER_GRACE_MS).
    for (;;) {
      if (signal?.aborted) return;
      let batch;
      try {
        batch = await consumer.fetch({ max_messages: FETCH_BATCH, expires: fetchExpiresMs });
      } catch (error) {
        await reopen(error);
        continue;
      }
      const stop = (): void => batch.stop();
      signal?.addEventListener('abort', stop, { once: true });
      let received = 0;
      let unanswered = false;
      const watchdog = setTimeout(() => {
        unanswered = true;
        batch.stop();
      }, fetchExpiresMs + SCAN_PULL_GRACE_MS);
      try {
        for await (const message of batch) {
          clearTimeout(watchdog);
          received++;
          reopened = 0;
          next = message.seq + 1;
          yield { streamSeq: message.seq, subject: message.subject, value: decodeJson(message.data), data: message.data };
          if (untilSeq !== null && message.seq >= untilSeq) return;
        }
      } catch (error) {
        await reopen(error);
        continue;
      } finally {
        clearTimeout(watchdog);
        signal?.removeEventListener('abort', stop);
        batch.stop();
      }
      if (unanswered && received === 0 && !signal?.aborted) {
        await abandon();
        continue;
      }
      if (received === 0 && untilSeq !== null) {
        throw new EventStoreError('EVENTSTORE_UNAVAILABLE', `${operation} stalled: no events arrived before the deadline`, { operation, subject: filter });
      }
    }
  }

  /**
   * Before `raws` of `aggregate` are judged: the keys of every service
   * principal that sealed one of them with a kid the authorship does not know
   * (or knows for too long) are read from that principal's own subject, whose
   * events are checked against the keys its own chain registers (so reading
   * them needs no other key). A principal whose chain is broken leaves its
   * keys unknown: its events are then unproven, never trusted; a log that
   * cannot be read fails the read (retry), never judges without the keys.
   */
  async #learnAuthors(aggregate: Aggregate, raws: readonly RawStored[]): Promise<void> {
    const authorship = this.authorship;
    if (authorship === undefined) return;
    const done = new Set<string>();
    for (const raw of raws) {
      const principalId = authorship.stale(raw.value);
      if (principalId === undefined || done.has(principalId)) continue;
      done.add(principalId);
      if (aggregate.entityType === 'principal' && aggregate.entityId === principalId) continue;
      let state: ChainState;
      try {
        state = await this.#state(this.#entity('principal', principalId));
      } catch (error) {
        // A principal whose chain is broken registers no key. Anything else (the log unreachable) fails the read: a
        // genuine event judged without its keys would be quarantined for good, and the chain would break on it.
        if (isEventStoreError(error) && error.code === 'EVENTSTORE_CHAIN_BROKEN') continue;
        throw error;
      }
      if (state.broken !== undefined) continue;
      authorship.learn(principalId, state.events);
    }
  }

  // ---- quarantine -----------------------------------------------------------------------------

  #raw(message: StoredMsg): RawStored {
    return { streamSeq: message.seq, subject: message.subject, value: decodeJson(message.data), data: message.data };
  }

  async #rawAt(subject: string, streamSeq: number): Promise<RawStored> {
    const message = await this.#getMessage(subject, { seq: streamSeq });
    if (message === null || message.subject !== subject) throw requestInvalid(`no message on ${subject} at stream seq ${streamSeq}`);
    return this.#raw(message);
  }

  /** The record of a quarantined message: where, why, and the SHA-256 of its bytes (never the bytes). */
  #record(raw: RawStored, reason: QuarantineReason, detail: string): QuarantineRecord {
    return { stream: this.config.stream, subject: raw.subject, stream_seq: raw.streamSeq, reason, sha256: sha256Hex(raw.data), bytes: raw.data.byteLength, detail: detail.slice(0, 500) };
  }

  /** A message on the log under a subject that names no aggregate. */
  #wrongSubject(raw: RawStored): QuarantineRecord {
    return this.#record(raw, 'QUARANTINE_WRONG_SUBJECT', `${raw.subject} is not ${this.config.subjectPrefix}.<entity_type>.<id>`);
  }

  #quarantinedEntry(record: QuarantineRecord, report: boolean): LogEntry {
    if (report) this.#report([record]);
    return { kind: 'quarantined', streamSeq: record.stream_seq, subject: record.subject, record };
  }

  /** Tells the listeners about each record once per process (a bounded memory: a long-lived process may tell again much later). */
  #report(records: readonly QuarantineRecord[]): void {
    for (const record of records) {
      if (this.#reported.has(record.stream_seq)) continue;
      this.#reported.add(record.stream_seq);
      if (this.#reported.size > REPORTED_QUARANTINES) this.#reported.delete(this.#reported.values().next().value!);
      for (const listener of this.#listeners) {
        try {
          listener(record);
        } catch {
          // A listener's failure is its own; the read goes on.
        }
      }
    }
  }

  // ---- aggregates -----------------------------------------------------------------------------

  /** The aggregate a subject of the log names (`<prefix>.<entity_type>.<id>`), or undefined for any other subject. */
  #aggregateOf(subject: string): Aggregate | undefined {
    const prefix = `${this.config.subjectPrefix}.`;
    if (!subject.startsWith(prefix)) return undefined;
    const tokens = subject.slice(prefix.length).split('.');
    if (tokens.length !== 2) return undefined;
    const type = EntityType.safeParse(tokens[0]);
    const id = Id.safeParse(tokens[1]);
    if (!type.success || !id.success) return undefined;
    return { entityType: type.data, entityId: id.data, subject };
  }

  #task(taskId: string): Aggregate {
    const id = unwrap(safeParseContract('task_id', Id, taskId));
    return { entityType: 'task', entityId: id, subject: `${this.config.subjectPrefix}.task.${id}` };
  }

  #entity(entityType: string, entityId: string): Aggregate {
    const type = unwrap(safeParseContract('entity_type', EntityType, entityType));
    const id = unwrap(safeParseContract('entity_id', Id, entityId));
    return { entityType: type, entityId: id, subject: `${this.config.subjectPrefix}.${type}.${id}` };
  }
}

function unwrap<T>(result: ParseResult<T>): T {
  if (!result.ok) throw result.error;
  return result.value;
}

/** The server no longer has the scan's ephemeral consumer (reaped while the reader was busy). */
function consumerGone(error: unknown): boolean {
  return jetStreamApiCode(error) === JS_CONSUMER_NOT_FOUND || /consumer (not found|deleted)/i.test(error instanceof Error ? error.message : String(error));
}

function decodeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data)) as unknown;
  } catch {
    // Left for the chain scanner to judge (junk), with its position.
    return NOT_JSON;
  }
}

/** Where a replay is in one aggregate's chain: messages up to `known.lastStreamSeq` are looked up, later ones judged by `scanner`. */
type ReplayCursor = { readonly scanner: ChainScanner; known: ChainState | undefined; broken: ChainBreakAt | undefined };

/** A scanner that continues after what `state` judged. */
function scannerAt(aggregate: Aggregate, state: ChainState, authorship: Authorship | undefined): ChainScanner {
  const head = state.events.at(-1);
  return new ChainScanner(
    aggregate,
    {
      head: head === undefined ? GENESIS : { taskSeq: head.event.task_seq, hash: head.event.hash },
      hashes: state.events.map((stored) => stored.event.hash),
      junkSinceHead: (state.quarantined.at(-1)?.stream_seq ?? 0) > (head?.streamSeq ?? 0),
      events: state.events,
    },
    authorship,
  );
}

/** The chain's head; `streamSeq` is the subject's last message (junk included): the append guard. */
function headOf(state: ChainState): StreamHead {
  const head = state.events.at(-1);
  return head === undefined ? { ...EMPTY_HEAD, streamSeq: state.lastStreamSeq } : { taskSeq: head.event.task_seq, streamSeq: state.lastStreamSeq, hash: head.event.hash };
}

/** What `state` made of the message at `streamSeq`: an event, a quarantined message, or undefined (after a break, or never examined). */
function judgedIn(state: ChainState, streamSeq: number): { kind: 'event'; event: EventEnvelope } | { kind: 'quarantined'; record: QuarantineRecord } | undefined {
  const event = findBySeq(state.events, (stored) => stored.streamSeq, streamSeq);
  if (event !== undefined) return { kind: 'event', event: event.event };
  const record = findBySeq(state.quarantined, (entry) => entry.stream_seq, streamSeq);
  return record === undefined ? undefined : { kind: 'quarantined', record };
}

/** Whether `data` is the message `state` judged at `streamSeq`: the same event (its hash covers its content) or the same quarantined bytes. */
function sameJudged(state: ChainState, streamSeq: number, data: Uint8Array): boolean {
  const judged = judgedIn(state, streamSeq);
  if (judged?.kind === 'quarantined') return sha256Hex(data) === judged.record.sha256;
  if (judged?.kind !== 'event') return false;
  const value = decodeJson(data);
  return typeof value === 'object' && value !== null && (value as { hash?: unknown }).hash === judged.event.hash;
}

/** Binary search of a list sorted by stream sequence. */
function findBySeq<T>(items: readonly T[], seqOf: (item: T) => number, streamSeq: number): T | undefined {
  let low = 0;
  let high = items.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const seq = seqOf(items[middle]!);
    if (seq === streamSeq) return items[middle];
    if (seq < streamSeq) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

function brokenDetail(broken: ChainBreakAt | undefined): string {
  return broken === undefined ? 'the chain could not be judged here' : `the chain is broken (${broken.reason}) at task_seq ${broken.taskSeq} / stream seq ${broken.streamSeq}: ${broken.detail}`;
}

function brokenError(subject: string, broken: ChainBreakAt): EventStoreError<'EVENTSTORE_CHAIN_BROKEN'> {
  return chainBroken(subject, broken.reason, broken.taskSeq, broken.streamSeq, broken.detail);
}


/** A stored message as this aggregate's envelope, whose hash still recomputes; anything else is a broken chain. */
function checkedStored(aggregate: Aggregate, message: StoredMsg): StoredEvent {
  const value = decodeJson(message.data);
  const parsed = EventEnvelope.safeParse(value);
  if (!parsed.success) throw chainBroken(aggregate.subject, 'unparseable', null, message.seq, 'not a valid event envelope');
  const event = parsed.data;
  if (event.task_id !== aggregate.entityId) throw chainBroken(aggregate.subject, 'misfiled', event.task_seq, message.seq, `task_id ${event.task_id}`);
  let recomputed: string | null = null;
  try {
    recomputed = computeEventHash(value as Record<string, unknown>);
  } catch {
    recomputed = null;
  }
  if (recomputed !== event.hash) throw chainBroken(aggregate.subject, 'modified', event.task_seq, message.seq, 'hash does not recompute');
  return { streamSeq: message.seq, subject: message.subject, event };
}

function conflictError(subject: string, expectedSeq: number, actualSeq: number | null, appended: readonly AppendedEvent[], cause: unknown): EventStoreError<'EVENTSTORE_CONFLICT'> {
  return new EventStoreError(
    'EVENTSTORE_CONFLICT',
    `${subject} is at task_seq ${actualSeq ?? 'unknown'}, not ${expectedSeq}: re-read and retry`,
    { subject, expectedSeq, actualSeq, appended },
    cause ?? undefined,
  );
}

function chainBroken(subject: string, reason: ChainBreakReason, taskSeq: number | null, streamSeq: number | null, detail: string): EventStoreError<'EVENTSTORE_CHAIN_BROKEN'> {
  return new EventStoreError(
    'EVENTSTORE_CHAIN_BROKEN',
    `the event chain of ${subject} is broken (${reason}) at task_seq ${taskSeq ?? '?'} / stream seq ${streamSeq ?? '?'}: ${detail}`,
    { subject, reason, taskSeq, streamSeq },
  );
}

function requestInvalid(reason: string): EventStoreError<'EVENTSTORE_REQUEST_INVALID'> {
  return new EventStoreError('EVENTSTORE_REQUEST_INVALID', reason, { reason });
}

function failingIterable<T>(error: unknown): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
  };
}
