/** The last stored event of one aggregate: its task_seq and hash (for chaining) and its stream sequence (for the guard). */
export type StreamHead = {
  readonly taskSeq: number;
  readonly streamSeq: number;
  readonly hash: string | null;
};

export const EMPTY_HEAD: StreamHead = { taskSeq: 0, streamSeq: 0, hash: null };

/**
 * Heads of recently written or read aggregates, least recently used evicted.
 * Never trusted on its own: an append sends the cached stream sequence as the
 * server's expected-last-subject-sequence, so a stale entry only turns into a
 * conflict (then the entry is dropped and the caller re-reads), never into a
 * wrong chain link. Each entry comes from one stored message, so its three
 * fields are always consistent with each other.
 */
export class HeadCache {
  readonly #capacity: number;
  readonly #heads = new Map<string, StreamHead>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(subject: string): StreamHead | undefined {
    return this.#heads.get(subject);
  }

  /** Records a head just read from the server, whatever was cached. */
  replace(subject: string, head: StreamHead): void {
    if (this.#capacity === 0) return;
    this.#heads.delete(subject);
    this.#heads.set(subject, head);
    if (this.#heads.size > this.#capacity) {
      const oldest = this.#heads.keys().next();
      if (!oldest.done) this.#heads.delete(oldest.value);
    }
  }

  /**
   * Records a head just written. Concurrent appends of one process may finish
   * out of order; only a later stream sequence replaces an entry, so a slower
   * acknowledgement cannot roll the cache back.
   */
  advance(subject: string, head: StreamHead): void {
    const current = this.#heads.get(subject);
    if (current !== undefined && current.streamSeq >= head.streamSeq) return;
    this.replace(subject, head);
  }

  forget(subject: string): void {
    this.#heads.delete(subject);
  }
}
