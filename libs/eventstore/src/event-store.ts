import {
  ContractError,
  EntityType,
  EventDraft,
  EventEnvelope,
  Id,
  safeParseContract,
  type ParseResult,
} from '@writ/contracts';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type PubAck, type StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { GENESIS, computeEventHash, sealEvent, verifyEventChain, type ChainBreakReason, type ChainLink, type ChainReport } from './event-chain.js';
import {
  EventStoreError,
  JS_WRONG_LAST_SEQUENCE,
  fromNatsError,
  jetStreamApiCode,
  type AppendedEvent,
} from './eventstore-errors.js';
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

export type ChainVerification =
  | { readonly ok: true; readonly subject: string; readonly length: number; readonly head: StreamHead }
  | {
      readonly ok: false;
      readonly subject: string;
      readonly length: number;
      readonly index: number;
      readonly taskSeq: number;
      readonly streamSeq: number;
      readonly reason: ChainBreakReason;
      readonly detail: string;
    };

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

type Aggregate = {
  readonly entityType: EntityType;
  readonly entityId: string;
  readonly subject: string;
};

type RawStored = { readonly streamSeq: number; readonly subject: string; readonly value: unknown };

/** Where the chain of an append starts, and the guard the server must see. */
type AppendStart = { readonly link: ChainLink; readonly guard: number };

const FETCH_BATCH = 256;
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
const encoder = new TextEncoder();
const decoder = new TextDecoder();

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
 */
export class EventStore {
  readonly config: EventStoreConfig;
  /** What start-up did to the stream. */
  readonly stream: EnsureStreamOutcome;
  readonly #js: JetStreamClient;
  readonly #jsm: JetStreamManager;
  readonly #heads: HeadCache;
  readonly #reads: ReadCache<StoredEvent>;

  private constructor(config: EventStoreConfig, stream: EnsureStreamOutcome, js: JetStreamClient, jsm: JetStreamManager) {
    this.config = config;
    this.stream = stream;
    this.#js = js;
    this.#jsm = jsm;
    this.#heads = new HeadCache(config.headCacheSize);
    this.#reads = new ReadCache<StoredEvent>(config.readCacheEvents);
  }

  /**
   * Validates the config, creates or updates the stream (idempotent), and
   * returns a store on the caller's connection (the caller closes it).
   */
  static async open(nc: NatsConnection, input: EventStoreConfigInput = {}): Promise<EventStore> {
    const config = parseEventStoreConfig(input);
    let jsm: JetStreamManager;
    try {
      jsm = await jetstreamManager(nc, { timeout: config.requestTimeoutMs });
    } catch (error) {
      throw fromNatsError(error, { operation: 'connect to JetStream' });
    }
    const stream = await ensureEventStream(jsm, config);
    return new EventStore(config, stream, jetstream(nc, { timeout: config.requestTimeoutMs }), jsm);
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

  /** The task's last stored event (task_seq 0 and hash null when it has none). */
  async head(taskId: string): Promise<StreamHead> {
    return this.#readHead(this.#task(taskId));
  }

  async headOfEntity(entityType: string, entityId: string): Promise<StreamHead> {
    return this.#readHead(this.#entity(entityType, entityId));
  }

  /**
   * The task's events in order, up to its last event at the time of the call.
   * The chain is verified first; a broken one throws `EVENTSTORE_CHAIN_BROKEN`
   * rather than being handed to a fold.
   */
  async read(taskId: string): Promise<StoredEvent[]> {
    return this.#read(this.#task(taskId));
  }

  async readEntity(entityType: string, entityId: string): Promise<StoredEvent[]> {
    return this.#read(this.#entity(entityType, entityId));
  }

  /** Re-reads the task's log and reports whether it is a valid chain, or where it first breaks. */
  async verifyChain(taskId: string): Promise<ChainVerification> {
    return this.#verify(this.#task(taskId));
  }

  async verifyEntityChain(entityType: string, entityId: string): Promise<ChainVerification> {
    return this.#verify(this.#entity(entityType, entityId));
  }

  /**
   * Every event of the stream from `fromStreamSeq` on, in stream order, either
   * as an async iterable or into a handler (awaited one at a time). Events are
   * parsed, not chain-verified: that is per aggregate, `verifyChain`'s job.
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

  // ---- append ---------------------------------------------------------------------------------

  async #append(aggregate: Aggregate, drafts: readonly unknown[], expectedSeq: number): Promise<AppendResult> {
    if (!Number.isSafeInteger(expectedSeq) || expectedSeq < 0) {
      throw requestInvalid(`expectedSeq must be a non-negative integer, got ${expectedSeq}`);
    }
    if (drafts.length === 0) throw requestInvalid('an append needs at least one event');
    const parsed = drafts.map((draft, index) => unwrap(safeParseContract(`EventDraft[${index}]`, EventDraft, draft)));
    const msgIds = parsed.map((draft) => `${aggregate.entityType}.${aggregate.entityId}:${draft.idempotency_key ?? draft.event_id}`);
    if (msgIds.length > 1 && new Set(msgIds).size !== msgIds.length) {
      throw requestInvalid('two events of one append share an idempotency key (or event_id); the second would be dropped as a duplicate');
    }
    if (aggregate.entityType !== 'task') {
      const stray = parsed.find((draft) => draft.entity_type !== aggregate.entityType || draft.entity_id !== aggregate.entityId);
      if (stray) throw requestInvalid(`event ${stray.event_id} is about ${stray.entity_type} ${stray.entity_id}, not ${aggregate.entityType} ${aggregate.entityId}`);
    }

    // The cached head answers without a round trip (and without an extra await on the hot path).
    const cached = this.#heads.get(aggregate.subject);
    const start = cached !== undefined && cached.taskSeq === expectedSeq ? { link: cached, guard: cached.streamSeq } : await this.#appendStart(aggregate, expectedSeq, cached);
    // Seal and size every event before the first publish, so that a bad batch writes nothing.
    let sealed = this.#sealAll(aggregate, parsed, 0, start.link);
    const { subject } = aggregate;
    const appended: AppendedEvent[] = [];
    let link = start.link;
    let guard = start.guard;
    let lastWasWrite = false;
    // Fresh writes, in order: each was guarded by the one before, so together they are exactly what follows `start.guard` on the subject.
    const written: StoredEvent[] = [];

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
          throw await this.#conflict(aggregate, link.taskSeq, appended, error);
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
        appended.push({ eventId: stored.event.event_id, taskSeq: stored.event.task_seq, streamSeq: ack.seq, hash: stored.event.hash, duplicate: true });
        const storedLink = { taskSeq: stored.event.task_seq, hash: stored.event.hash };
        if (stored.event.hash !== envelope.hash && index + 1 < parsed.length) {
          sealed = [...sealed.slice(0, index + 1), ...this.#sealAll(aggregate, parsed, index + 1, storedLink)];
        }
        link = storedLink;
        lastWasWrite = false;
      } else {
        appended.push({ eventId: envelope.event_id, taskSeq: envelope.task_seq, streamSeq: ack.seq, hash: envelope.hash, duplicate: false });
        link = { taskSeq: envelope.task_seq, hash: envelope.hash };
        lastWasWrite = true;
        written.push({ streamSeq: ack.seq, subject, event: envelope });
      }
      guard = ack.seq;
    }

    // A fresh write is the subject's head at that instant; a duplicate may lie
    // anywhere in the history, so it is not cached as the head.
    if (lastWasWrite) this.#heads.advance(subject, { taskSeq: link.taskSeq, streamSeq: guard, hash: link.hash });
    else this.#heads.forget(subject);
    this.#extendRead(subject, start.guard, written);
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

  #sealAll(aggregate: Aggregate, drafts: readonly EventDraft[], from: number, start: ChainLink): { envelope: EventEnvelope; bytes: Uint8Array }[] {
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

  async #conflict(aggregate: Aggregate, expectedSeq: number, appended: readonly AppendedEvent[], cause: unknown): Promise<EventStoreError> {
    let actual: number | null = null;
    try {
      // Also primes the head cache, so the caller's re-read-and-retry costs no extra read here.
      actual = (await this.#readHead(aggregate)).taskSeq;
    } catch {
      actual = null;
    }
    return conflictError(aggregate.subject, expectedSeq, actual, appended, cause);
  }

  // ---- reads ----------------------------------------------------------------------------------

  async #readHead(aggregate: Aggregate): Promise<StreamHead> {
    const message = await this.#getMessage(aggregate, { last_by_subj: aggregate.subject });
    if (message === null) {
      this.#heads.replace(aggregate.subject, EMPTY_HEAD);
      return EMPTY_HEAD;
    }
    const stored = checkedStored(aggregate, message);
    const head = { taskSeq: stored.event.task_seq, streamSeq: message.seq, hash: stored.event.hash };
    this.#heads.replace(aggregate.subject, head);
    return head;
  }

  async #readStoredAt(aggregate: Aggregate, streamSeq: number): Promise<StoredEvent> {
    const message = await this.#getMessage(aggregate, { seq: streamSeq });
    if (message === null || message.subject !== aggregate.subject) {
      throw chainBroken(aggregate.subject, 'misfiled', null, streamSeq, 'the event reported as a duplicate is not stored on this subject');
    }
    return checkedStored(aggregate, message);
  }

  async #getMessage(aggregate: Aggregate, query: { last_by_subj: string } | { seq: number }): Promise<StoredMsg | null> {
    try {
      return await this.#jsm.streams.getMessage(this.config.stream, query);
    } catch (error) {
      throw fromNatsError(error, { operation: 'read event', subject: aggregate.subject });
    }
  }

  /**
   * The aggregate's verified events up to its last stored message. A cached
   * prefix (`ReadCache`) is trusted, being append-only and verified when it
   * was read; only the messages after it are fetched (none, or just the last
   * message, cost one message get) and must link to it. A suffix that does
   * not, or a subject whose last message is older than the cache, is read and
   * verified in full, so a fork or a recreated stream is still reported.
   */
  async #read(aggregate: Aggregate): Promise<StoredEvent[]> {
    const { subject } = aggregate;
    const last = await this.#getMessage(aggregate, { last_by_subj: subject });
    if (last === null) {
      this.#reads.forget(subject);
      this.#heads.replace(subject, EMPTY_HEAD);
      return [];
    }
    const cached = this.#reads.get(subject);
    const cachedHead = cached?.events.at(-1);
    let events: readonly StoredEvent[] | undefined;
    if (cached !== undefined && cachedHead !== undefined && last.seq >= cached.lastStreamSeq) {
      const lastValue = decodeJson(last.data);
      if (last.seq === cached.lastStreamSeq) {
        if ((lastValue as { hash?: unknown } | null)?.hash === cachedHead.event.hash) events = cached.events;
      } else {
        const isNext = taskSeqOfValue(lastValue) === cachedHead.event.task_seq + 1;
        const suffix = isNext ? [{ streamSeq: last.seq, subject: last.subject, value: lastValue }] : await this.#collect(subject, cached.lastStreamSeq + 1, last.seq);
        const verified = this.#verified(aggregate, suffix, { taskSeq: cachedHead.event.task_seq, hash: cachedHead.event.hash });
        if (verified !== undefined) events = [...cached.events, ...verified];
      }
    }
    if (events === undefined) {
      const raws = await this.#collect(subject, 1, last.seq);
      events = this.#verified(aggregate, raws, GENESIS, true) ?? [];
    }
    const head = events.at(-1);
    this.#heads.replace(subject, head ? { taskSeq: head.event.task_seq, streamSeq: head.streamSeq, hash: head.event.hash } : EMPTY_HEAD);
    if (head !== undefined) this.#reads.set(subject, { events, lastStreamSeq: head.streamSeq });
    return [...events];
  }

  /**
   * `raws` verified as the chain continuing from `from`, parsed. A break is
   * thrown (`EVENTSTORE_CHAIN_BROKEN`) when `throwOnBreak`; otherwise it is
   * undefined, for the caller to fall back to a full read.
   */
  #verified(aggregate: Aggregate, raws: readonly RawStored[], from: ChainLink, throwOnBreak = false): StoredEvent[] | undefined {
    const report = verifyEventChain(
      raws.map((raw) => raw.value),
      { taskId: aggregate.entityId, from },
    );
    if (!report.ok) {
      if (!throwOnBreak) return undefined;
      throw chainBroken(aggregate.subject, report.reason, report.taskSeq, raws[report.index]?.streamSeq ?? null, report.detail);
    }
    return raws.map((raw) => ({ streamSeq: raw.streamSeq, subject: raw.subject, event: EventEnvelope.parse(raw.value) }));
  }

  /** A cached read of `subject` that ended at `guard` grows by this process's own fresh writes after it. */
  #extendRead(subject: string, guard: number, written: readonly StoredEvent[]): void {
    if (written.length === 0) return;
    const cached = this.#reads.get(subject);
    if (cached === undefined || cached.lastStreamSeq !== guard) return;
    this.#reads.set(subject, { events: [...cached.events, ...written], lastStreamSeq: written.at(-1)!.streamSeq });
  }

  async #collect(subject: string, fromSeq: number, untilSeq: number): Promise<RawStored[]> {
    const raws: RawStored[] = [];
    for await (const raw of this.#scan(subject, fromSeq, untilSeq, undefined)) raws.push(raw);
    return raws;
  }

  async #verify(aggregate: Aggregate): Promise<ChainVerification> {
    const raws = await this.#readRaw(aggregate);
    const report: ChainReport = verifyEventChain(
      raws.map((raw) => raw.value),
      { taskId: aggregate.entityId },
    );
    if (report.ok) {
      const streamSeq = raws.at(-1)?.streamSeq ?? 0;
      return { ok: true, subject: aggregate.subject, length: report.length, head: { taskSeq: report.head.taskSeq, streamSeq, hash: report.head.hash } };
    }
    return {
      ok: false,
      subject: aggregate.subject,
      length: report.length,
      index: report.index,
      taskSeq: report.taskSeq,
      streamSeq: raws[report.index]?.streamSeq ?? 0,
      reason: report.reason,
      detail: report.detail,
    };
  }

  /** Every stored message of the aggregate up to its last one at the time of the call, undecoded beyond JSON. */
  async #readRaw(aggregate: Aggregate): Promise<RawStored[]> {
    const last = await this.#getMessage(aggregate, { last_by_subj: aggregate.subject });
    if (last === null) return [];
    return this.#collect(aggregate.subject, 1, last.seq);
  }

  async *#replay(fromStreamSeq: number, options: ReplayOptions): AsyncGenerator<StoredEvent> {
    let until: number | null = null;
    if (options.follow !== true) {
      try {
        until = (await this.#jsm.streams.info(this.config.stream)).state.last_seq;
      } catch (error) {
        throw fromNatsError(error, { operation: 'replay' });
      }
      if (until < fromStreamSeq) return;
    }
    for await (const raw of this.#scan(`${this.config.subjectPrefix}.>`, fromStreamSeq, until, options.signal)) {
      const parsed = EventEnvelope.safeParse(raw.value);
      if (!parsed.success) throw chainBroken(raw.subject, 'unparseable', null, raw.streamSeq, 'not a valid event envelope');
      yield { streamSeq: raw.streamSeq, subject: raw.subject, event: parsed.data };
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
    let consumer;
    try {
      consumer = await this.#js.consumers.get(this.config.stream, {
        filter_subjects: filter,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: fromSeq,
        inactive_threshold: (untilSeq === null ? FOLLOW_FETCH_EXPIRES_MS : Math.max(1_000, this.config.requestTimeoutMs)) + SCAN_CONSUMER_GRACE_MS,
      });
    } catch (error) {
      throw fromNatsError(error, { operation, subject: filter });
    }
    // Nothing to close: each fetch is complete when it ends, and the server reaps the consumer once it is idle (SCAN_CONSUMER_GRACE_MS).
    for (;;) {
      if (signal?.aborted) return;
      let batch;
      try {
        batch = await consumer.fetch({ max_messages: FETCH_BATCH, expires: untilSeq === null ? FOLLOW_FETCH_EXPIRES_MS : Math.max(1_000, this.config.requestTimeoutMs) });
      } catch (error) {
        throw fromNatsError(error, { operation, subject: filter });
      }
      const stop = (): void => batch.stop();
      signal?.addEventListener('abort', stop, { once: true });
      let received = 0;
      try {
        for await (const message of batch) {
          received++;
          yield { streamSeq: message.seq, subject: message.subject, value: decodeJson(message.data) };
          if (untilSeq !== null && message.seq >= untilSeq) return;
        }
      } catch (error) {
        throw fromNatsError(error, { operation, subject: filter });
      } finally {
        signal?.removeEventListener('abort', stop);
        batch.stop();
      }
      if (received === 0 && untilSeq !== null) {
        throw new EventStoreError('EVENTSTORE_UNAVAILABLE', `${operation} stalled: no events arrived before the deadline`, { operation, subject: filter });
      }
    }
  }

  // ---- aggregates -----------------------------------------------------------------------------

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

function taskSeqOfValue(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? (value as { task_seq?: unknown }).task_seq : undefined;
}

function decodeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data)) as unknown;
  } catch {
    // Left for the chain check to report as unparseable, with its position.
    return undefined;
  }
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

function failingIterable(error: unknown): AsyncIterable<StoredEvent> {
  return {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
  };
}
