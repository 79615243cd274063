import { STREAM_EVENTS, type ProjectionChange, type StreamClosing } from '@writ/contracts/projection-rows';
import type { Logger } from '@writ/telemetry';
import type { ChangeNotifier } from './change-notifier.js';
import type { ChangeFeed, ChangesQuery } from './ports.js';
import { ProjectionError } from './projection-errors.js';

/** Where a stream writes: the HTTP response, as the inbound adapter wraps it. */
export interface StreamSink {
  /** Queues `chunk`; false when the socket's buffer is full (wait for `drained`). */
  write(chunk: string): boolean;
  /** Resolves true once the buffer drained, false after `timeoutMs` without. */
  drained(timeoutMs: number): Promise<boolean>;
  /** Ends the response (and lets go of a socket that never drains). */
  end(): void;
}

export interface ChangeStreamOptions {
  readonly heartbeatMs: number;
  readonly drainTimeoutMs: number;
  /** Open streams per instance. */
  readonly maxStreams: number;
  /** How often the checkpoint is polled for other instances' commits while streams are open. */
  readonly pollMs: number;
}

export type ClosingCode = StreamClosing['code'];

/** The reconnection delay an EventSource is told (`retry:`). */
export const STREAM_RETRY_MS = 2_000;

/** One SSE event: `id:` (when it marks a position), `event:`, one `data:` line of JSON (JSON text has no raw newline). */
export function sseEvent(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The changes of a page, one group per version (a page never splits one). */
export function byVersion(changes: readonly ProjectionChange[]): Array<{ readonly version: number; readonly changes: ProjectionChange[] }> {
  const groups: Array<{ version: number; changes: ProjectionChange[] }> = [];
  for (const change of changes) {
    const last = groups.at(-1);
    if (last !== undefined && last.version === change.row_version) last.changes.push(change);
    else groups.push({ version: change.row_version, changes: [change] });
  }
  return groups;
}

/**
 * One `GET /v1/changes/stream`: replays the feed from `since`, then follows
 * it. Every event that carries an `id:` means "every row you may read up to
 * this version was sent" — `rows` (one event per version, all its rows),
 * `synced` (the replay reached the end) and `heartbeat` — so a client that
 * reconnects with `Last-Event-ID` resumes with nothing missing and nothing
 * but whole versions repeated. The rows always come from the database at the
 * stream's own position (the projector's commits only wake it), so order,
 * scope and completeness are the feed's, whichever instance committed.
 *
 * Back-pressure: a write the socket does not take is awaited; a client that
 * has not taken it within `drainTimeoutMs` is sent `closing`
 * (PROJECTION_STREAM_SLOW_READER) and dropped, so a slow client costs one
 * page of memory and never holds the others up. The stream also ends when
 * the caller's token expires (reconnect with a fresh one) and at shutdown.
 */
export class ChangeStream {
  #position: number;
  /** The last `id:` sent: where the client resumes. */
  #lastId: number;
  #closed = false;
  readonly #abort = new AbortController();
  #expiry: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      readonly feed: ChangeFeed;
      readonly notifier: ChangeNotifier;
      readonly sink: StreamSink;
      readonly query: ChangesQuery;
      /** When the caller's credential expires (ms since the epoch). */
      readonly expiresAt: number;
      readonly options: ChangeStreamOptions;
      readonly logger: Logger;
      readonly now?: () => number;
    },
  ) {
    this.#position = deps.query.since;
    this.#lastId = deps.query.since;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Streams until the client goes, the stream is closed, or it fails (then `closing` tells why). Never throws. */
  async run(): Promise<void> {
    const now = this.deps.now ?? Date.now;
    this.#expiry = setTimeout(() => this.close('PROJECTION_STREAM_CREDENTIAL_EXPIRED', 'the bearer token expired: reconnect with a fresh one and Last-Event-ID'), Math.max(0, this.deps.expiresAt - now()));
    this.#expiry.unref?.();
    try {
      if (!(await this.#send(`retry: ${STREAM_RETRY_MS}\n\n`))) return;
      let synced = false;
      while (!this.#closed) {
        const generation = this.deps.notifier.generation;
        const page = await this.deps.feed.changes({ ...this.deps.query, since: this.#position });
        if (this.#closed) return;
        for (const group of byVersion(page.changes)) {
          if (!(await this.#send(sseEvent(STREAM_EVENTS.rows, { row_version: group.version, changes: group.changes }, group.version)))) return;
          this.#lastId = group.version;
        }
        this.#position = page.next;
        if (page.more) continue;
        if (!synced) {
          synced = true;
          if (!(await this.#mark(STREAM_EVENTS.synced))) return;
        }
        await this.deps.notifier.next(generation, this.deps.options.heartbeatMs, this.#abort.signal);
        // Nothing committed meanwhile: tell the client it is alive and where it stands (the next read catches another instance's commits too).
        if (!this.#closed && this.deps.notifier.generation === generation && !(await this.#mark(STREAM_EVENTS.heartbeat))) return;
      }
    } catch (error) {
      if (this.#closed) return;
      this.deps.logger.warn({ err: error, code: (error as { code?: string }).code }, 'change stream failed; closing it');
      const unavailable = error instanceof ProjectionError ? `${error.code}: ${error.message}` : 'the views could not be read';
      this.close('PROJECTION_STREAM_UNAVAILABLE', `${unavailable}; reconnect with Last-Event-ID`);
    } finally {
      clearTimeout(this.#expiry);
    }
  }

  /** Sends `closing` with the position to resume after, and ends the response. Idempotent. */
  close(code: ClosingCode, message: string): void {
    if (this.#closed) return;
    this.#stop();
    this.deps.sink.write(sseEvent(STREAM_EVENTS.closing, { code, message, resume_after: this.#lastId } satisfies StreamClosing));
    this.deps.sink.end();
  }

  /** The client went away: stop without writing. */
  abandon(): void {
    if (this.#closed) return;
    this.#stop();
  }

  #stop(): void {
    this.#closed = true;
    this.#abort.abort();
    clearTimeout(this.#expiry);
  }

  /** `synced` / `heartbeat`: everything up to the position was sent, so the position is an id. */
  async #mark(event: string): Promise<boolean> {
    const ok = await this.#send(sseEvent(event, { checkpoint: this.#position }, this.#position));
    if (ok) this.#lastId = this.#position;
    return ok;
  }

  /** Writes, waiting for the socket to take it; a client that does not in time is dropped. False when the stream ended. */
  async #send(chunk: string): Promise<boolean> {
    if (this.#closed) return false;
    if (this.deps.sink.write(chunk)) return true;
    if (await this.deps.sink.drained(this.deps.options.drainTimeoutMs)) return !this.#closed;
    this.close('PROJECTION_STREAM_SLOW_READER', `the client did not take the stream's events within ${this.deps.options.drainTimeoutMs} ms; reconnect with Last-Event-ID: nothing after it was skipped`);
    return false;
  }
}

/**
 * The open streams of this instance: a bound on how many (each reads
 * Postgres), the poll that wakes them for other instances' commits while any
 * is open, and their end at shutdown.
 */
export class ChangeStreams {
  readonly #open = new Set<ChangeStream>();
  #poll: NodeJS.Timeout | undefined;
  #polling = false;
  #seenCheckpoint = -1;

  constructor(
    private readonly deps: {
      readonly feed: ChangeFeed;
      readonly notifier: ChangeNotifier;
      readonly options: ChangeStreamOptions;
      readonly logger: Logger;
    },
  ) {}

  get size(): number {
    return this.#open.size;
  }

  /** A new stream for `query`, registered until it ends; PROJECTION_STREAMS_EXHAUSTED when the instance serves its maximum. */
  open(query: ChangesQuery, sink: StreamSink, expiresAt: number): ChangeStream {
    if (this.#open.size >= this.deps.options.maxStreams) {
      throw new ProjectionError('PROJECTION_STREAMS_EXHAUSTED', `this instance serves ${this.deps.options.maxStreams} change streams already (WRIT_SSE_MAX_STREAMS): retry later, or read GET /v1/changes`);
    }
    const stream = new ChangeStream({ ...this.deps, sink, query, expiresAt });
    this.#open.add(stream);
    this.#startPolling();
    return stream;
  }

  /** Runs `stream` to its end and forgets it. */
  async serve(stream: ChangeStream): Promise<void> {
    try {
      await stream.run();
    } finally {
      this.#open.delete(stream);
      if (this.#open.size === 0) this.#stopPolling();
    }
  }

  /** Ends every open stream (`closing` PROJECTION_STREAM_SHUTDOWN): before HTTP closes, which would otherwise wait for them. */
  closeAll(): void {
    for (const stream of this.#open) stream.close('PROJECTION_STREAM_SHUTDOWN', 'the projection instance is stopping: reconnect with Last-Event-ID');
    this.#open.clear();
    this.#stopPolling();
  }

  #startPolling(): void {
    if (this.#poll !== undefined) return;
    this.#poll = setInterval(() => void this.#checkpointMoved(), this.deps.options.pollMs);
    this.#poll.unref?.();
  }

  #stopPolling(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
  }

  /** One poll at a time; a failure is logged and the next tick tries again (the streams' own reads report a lasting outage). */
  async #checkpointMoved(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const checkpoint = await this.deps.feed.checkpoint();
      if (checkpoint !== this.#seenCheckpoint) {
        this.#seenCheckpoint = checkpoint;
        this.deps.notifier.notify();
      }
    } catch (error) {
      this.deps.logger.debug({ err: error }, 'change streams: checkpoint poll failed');
    } finally {
      this.#polling = false;
    }
  }
}
