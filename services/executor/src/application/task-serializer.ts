/**
 * Per task, the tail of this process's work in its cell: one thing at a time
 * (an action, or closing the cell), so each diff is its own and a cell is never
 * closed under a running action. Shared by the run and close-cell handlers.
 */
export class TaskSerializer {
  readonly #queues = new Map<string, Promise<unknown>>();

  /** Runs `work` after everything queued earlier for `taskId` in this process. */
  async run<T>(taskId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(taskId) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    this.#queues.set(taskId, tail);
    try {
      return await run;
    } finally {
      if (this.#queues.get(taskId) === tail) this.#queues.delete(taskId);
    }
  }
}
