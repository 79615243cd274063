import type { HttpClient } from './http-client.js';

/**
 * "Something changed, read again": the signal pages re-read on, so a status
 * changes on screen without a reload. Two transports behind one interface:
 *
 * - `sse`: Server-Sent Events from `GET /v1/changes/stream?since=&access_token=`
 *   (the changes feed; `id:` is the row version, resumed from on reconnect);
 *   EventSource cannot set headers, hence the short-lived token in the query,
 *   minted afresh at each (re)connection;
 * - `poll`: a tick every `intervalMs` (2 s), while the feed is not served.
 *
 * Which one is decided at start by asking the server once: a 404 on
 * `/v1/changes/stream` means poll. Listeners are told which mode runs (the
 * header shows it).
 */
export type LiveMode = 'connecting' | 'sse' | 'poll';

export type LiveListener = () => void;

const POLL_MS = 2_000;
const RECONNECT_MS = 1_000;
/** A burst of changes on the stream (one message per row) is one re-read, at most every 500 ms. */
const COALESCE_MS = 500;

export interface LiveUpdatesOptions {
  readonly intervalMs?: number;
  /** The views the console reads; the feed may filter on them. */
  readonly views?: readonly string[];
}

export class LiveUpdates {
  #mode: LiveMode = 'connecting';
  #since: string | null = null;
  #listeners = new Set<LiveListener>();
  #modeListeners = new Set<(mode: LiveMode) => void>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #source: EventSource | undefined;
  #stopped = false;
  #coalescing: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly http: HttpClient,
    private readonly options: LiveUpdatesOptions = {},
  ) {}

  get mode(): LiveMode {
    return this.#mode;
  }

  async start(): Promise<void> {
    this.#mode = (await this.#streamServed()) ? 'sse' : 'poll';
    if (this.#stopped) return;
    if (this.#mode === 'sse') await this.#connect();
    else this.#timer = setInterval(() => this.#emit(), this.options.intervalMs ?? POLL_MS);
    for (const listener of this.#modeListeners) listener(this.#mode);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (this.#coalescing !== undefined) clearTimeout(this.#coalescing);
    this.#source?.close();
    this.#listeners.clear();
  }

  subscribe(listener: LiveListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  onMode(listener: (mode: LiveMode) => void): () => void {
    this.#modeListeners.add(listener);
    return () => this.#modeListeners.delete(listener);
  }

  #emit(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #streamUrl(token: string): string {
    return this.http.url('/v1/changes/stream', { since: this.#since ?? undefined, views: this.options.views?.join(','), access_token: token });
  }

  /** Does the server serve the feed? Asked once with a real request, aborted as soon as it answers. */
  async #streamServed(): Promise<boolean> {
    const abort = new AbortController();
    try {
      const response = await fetch(this.http.url('/v1/changes/stream', { since: '0' }), {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${await this.http.token()}` },
        credentials: 'omit',
        cache: 'no-store',
        signal: abort.signal,
      });
      const served = response.ok && (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
      abort.abort();
      return served;
    } catch {
      return false;
    }
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    const source = new EventSource(this.#streamUrl(await this.http.token()));
    this.#source = source;
    // The feed names its events (docs/dashboard-contract.md): `rows` carries changes; `synced`, `heartbeat` and
    // `closing` carry none. Named events never reach `onmessage`, so each is listened to by name.
    source.addEventListener('rows', (message: MessageEvent) => {
      if (message.lastEventId !== '') this.#since = message.lastEventId;
      this.#coalescing ??= setTimeout(() => {
        this.#coalescing = undefined;
        this.#emit();
      }, COALESCE_MS);
    });
    source.addEventListener('synced', (message: MessageEvent) => {
      if (message.lastEventId !== '') this.#since = message.lastEventId;
    });
    // A broken stream (or an expired token) reconnects with a fresh token from the last row version seen.
    source.onerror = () => {
      source.close();
      if (!this.#stopped) setTimeout(() => void this.#connect(), RECONNECT_MS);
    };
  }
}
