import type { EventDraft } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import type { TaskHistory, TaskLog } from '../application/ports.js';

/** The task streams of the event log, through `@writ/eventstore` (chain verified on every read). */
export class EventStoreTaskLog implements TaskLog {
  constructor(private readonly store: EventStore) {}

  async read(taskId: string): Promise<TaskHistory> {
    const stored = await this.store.read(taskId);
    return { events: stored.map((entry) => entry.event), seq: stored.at(-1)?.event.task_seq ?? 0 };
  }

  async append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicate: boolean }> {
    const result = await this.store.append(taskId, drafts, expectedSeq);
    return { duplicate: result.events.every((event) => event.duplicate) };
  }
}
