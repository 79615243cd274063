/**
 * Wakes the open change streams when the views may have changed: at once
 * when this process's projector commits (`notify`, from the publisher), and
 * otherwise when a poll of the checkpoint sees another instance's commits.
 * It carries no rows: a stream always re-reads the feed from its own
 * position, so a wake-up it misses or gets twice costs a read, never a row.
 */
export class ChangeNotifier {
  #generation = 0;
  readonly #waiters = new Set<() => void>();

  /** Grows by one at every notify: a stream reads it before a read of the feed, and waits only if it has not moved since. */
  get generation(): number {
    return this.#generation;
  }

  notify(): void {
    this.#generation += 1;
    for (const wake of [...this.#waiters]) wake();
  }

  /** Resolves once the generation is past `seen`, after `timeoutMs`, or when `signal` aborts: whichever comes first. */
  next(seen: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#generation !== seen || signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
