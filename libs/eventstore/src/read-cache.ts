/** What a process already read and verified of one aggregate: its events in order, up to the stored message `lastStreamSeq`. */
export type CachedRead<E> = {
  readonly events: readonly E[];
  readonly lastStreamSeq: number;
};

/**
 * Aggregates recently read, with their verified events, least recently used
 * evicted once the cached events exceed the bound. The log is append-only
 * (the stream denies delete and purge), so a verified prefix stays true and a
 * read only fetches what was appended after it; the suffix must link to the
 * cached head, and anything else (a fork, a recreated stream) falls back to a
 * full read, which verifies the whole chain again.
 */
export class ReadCache<E> {
  readonly #maxEvents: number;
  readonly #entries = new Map<string, CachedRead<E>>();
  #events = 0;

  constructor(maxEvents: number) {
    this.#maxEvents = maxEvents;
  }

  get(subject: string): CachedRead<E> | undefined {
    const entry = this.#entries.get(subject);
    if (entry !== undefined) {
      this.#entries.delete(subject);
      this.#entries.set(subject, entry);
    }
    return entry;
  }

  set(subject: string, entry: CachedRead<E>): void {
    this.forget(subject);
    if (entry.events.length > this.#maxEvents) return;
    this.#entries.set(subject, entry);
    this.#events += entry.events.length;
    while (this.#events > this.#maxEvents) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.forget(oldest.value);
    }
  }

  forget(subject: string): void {
    const entry = this.#entries.get(subject);
    if (entry === undefined) return;
    this.#entries.delete(subject);
    this.#events -= entry.events.length;
  }

  /** Cached events in all entries (for tests and metrics). */
  get size(): number {
    return this.#events;
  }
}
