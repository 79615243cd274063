import { setTimeout as delay } from 'node:timers/promises';
import { TaskView, type TaskEventView } from './api-views.js';
import { TASK_TERMINAL_STATES } from './contracts.js';
import type { WritApi } from './writ-api.js';

/** One new event of the task's timeline, with the task's status as of the page it came in. */
export interface TaskUpdate {
  readonly taskId: string;
  readonly taskStatus: string;
  readonly event: TaskEventView;
}

export interface TaskUpdatesOptions {
  /** Start after this `task_seq` (default 0: from the task's first event). */
  readonly after?: number;
  /** Pause between polls once the timeline is read to its end; default 500 ms. */
  readonly pollMs?: number;
  /** Stop when aborted (the iteration ends quietly). */
  readonly signal?: AbortSignal;
  /** Keep polling after the task ended (default false: the iteration ends once a terminal task's events are all delivered). */
  readonly followEnded?: boolean;
}

const PAGE = 1_000;
const TERMINAL = new Set<string>(TASK_TERMINAL_STATES);

/**
 * The task's timeline as it grows, event by event, in `task_seq` order, each
 * delivered once. An agent's bus credential may not subscribe to
 * `<root>.proj.>` (docs/security.md), so this reads `GET /v1/tasks/<id>?after=`
 * with the agent's own token, a page at a time, and waits `pollMs` once it is
 * at the end. A task not yet projected (404) is waited for. Ends when the task
 * has ended and everything is delivered (unless `followEnded`), when
 * `signal` aborts, or when the consumer stops iterating.
 */
export class TaskUpdates implements AsyncIterable<TaskUpdate> {
  readonly taskId: string;
  readonly #api: WritApi;
  readonly #options: TaskUpdatesOptions;

  constructor(api: WritApi, taskId: string, options: TaskUpdatesOptions = {}) {
    this.#api = api;
    this.taskId = taskId;
    this.#options = options;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TaskUpdate> {
    let after = this.#options.after ?? 0;
    const signal = this.#options.signal;
    const route = () => `/v1/tasks/${encodeURIComponent(this.taskId)}?after=${after}&limit=${PAGE}`;
    while (signal?.aborted !== true) {
      const page = await this.#api.find(route(), TaskView, `task ${this.taskId}`);
      if (page !== undefined) {
        for (const event of page.events) {
          if (event.task_seq <= after) continue;
          after = event.task_seq;
          yield { taskId: this.taskId, taskStatus: page.status, event };
        }
        if (page.next_after !== null) continue;
        if (TERMINAL.has(page.status) && this.#options.followEnded !== true) return;
      }
      try {
        await delay(this.#options.pollMs ?? 500, undefined, signal === undefined ? undefined : { signal });
      } catch {
        return; // aborted
      }
    }
  }
}
