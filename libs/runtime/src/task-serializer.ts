/**
 * Per key (a task id), the tail of this process's work on it: what is run for
 * one key runs after everything queued earlier for that key, while work for
 * other keys runs alongside. The executor runs one thing at a time in a task's
 * cell (an action, or closing the cell); the receipt service issues one receipt
 * of a task at a time (each appends after the task's last event, so two at once
 * would only make one lose the append guard and start again).
 *
 * It bounds nothing: the caller's concurrency (the bus consumer's) does.
 */
export class TaskSerializer {
  readonly #queues = new Map<string, Promise<unknown>>();

  /** Runs `work` after everything queued earlier for `taskId` in this process; a failure of earlier work does not stop it. */
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

  /** Keys with work queued or running (a drained serializer holds none). */
  get size(): number {
    return this.#queues.size;
  }
}
