import type { EventDraft, EventEnvelope } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';

/** A task's events as read (chain verified), and the `task_seq` to append after (0 for an empty task). */
export interface TaskHistory {
  readonly events: readonly EventEnvelope[];
  readonly seq: number;
}

export interface TaskAppendResult {
  /** How many of the drafts the log already held (deduped by idempotency key). */
  readonly duplicates: number;
  /** The log already held every draft: nothing new was appended. */
  readonly duplicate: boolean;
}

/**
 * The task streams of the event log (`<prefix>.task.<task_id>`) as a service's
 * handlers use them: read, then append guarded by the `task_seq` read (a lost
 * race throws EVENTSTORE_CONFLICT; the bus retries and the handler re-reads).
 */
export class EventStoreTaskLog {
  constructor(private readonly store: EventStore) {}

  async read(taskId: string): Promise<TaskHistory> {
    const stored = await this.store.read(taskId);
    return { events: stored.map((entry) => entry.event), seq: stored.at(-1)?.event.task_seq ?? 0 };
  }

  async append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<TaskAppendResult> {
    const result = await this.store.append(taskId, drafts, expectedSeq);
    const duplicates = result.events.filter((event) => event.duplicate).length;
    return { duplicates, duplicate: duplicates === result.events.length };
  }
}
