/** What a process already read and verified of one aggregate: its events (and the messages it quarantined) in order, up to the stored message `lastStreamSeq`. */
export type CachedRead = {
  readonly events: readonly unknown[];
  readonly quarantined?: readonly unknown[];
  readonly lastStreamSeq: number;
};

/** What an entry costs against the bound: every message it keeps. */
function sizeOf(entry: CachedRead): number {
  return entry.events.length + (entry.quarantined?.length ?? 0);
}

/**
 * Aggregates recently read, with their verified events, least recently used
 * evicted once the cached events exceed the bound. The log is append-only
 * (the stream denies delete and purge), so a verified prefix stays true and a
 * read only fetches what was appended after it; the suffix must link to the
 * cached head, and anything else (a fork, a recreated stream) falls back to a
 * full read, which verifies the whole chain again.
 */
export class ReadCache<T extends CachedRead> {
  readonly #maxEvents: number;
  readonly #entries = new Map<string, T>();
  #events = 0;

  constructor(maxEvents: number) {
    this.#maxEvents = maxEvents;
  }

  get(subject: string): T | undefined {
    const entry = this.#entries.get(subject);
    if (entry !== undefined) {
      this.#entries.delete(subject);
      this.#entries.set(subject, entry);
    }
    return entry;
  }

  set(subject: string, entry: T): void {
    this.forget(subject);
    if (sizeOf(entry) > this.#maxEvents) return;
    this.#entries.set(subject, entry);
    this.#events += sizeOf(entry);
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
    this.#events -= sizeOf(entry);
  }

  /** Cached events in all entries (for tests and metrics). */
  get size(): number {
    return this.#events;
  }
}
