import type { EventDraft, EventEnvelope } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import type { TaskLog } from '../application/ports.js';

/** The task log on the JetStream event store (`<prefix>.task.<task_id>`). */
export class EventStoreTaskLog implements TaskLog {
  constructor(private readonly store: EventStore) {}

  async read(taskId: string): Promise<readonly EventEnvelope[]> {
    return (await this.store.read(taskId)).map((stored) => stored.event);
  }

  async readThrough(taskId: string, streamSeq: number, hash: string): Promise<readonly EventEnvelope[]> {
    return (await this.store.readThrough(taskId, streamSeq, hash)).map((stored) => stored.event);
  }

  async append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicates: number }> {
    const result = await this.store.append(taskId, drafts, expectedSeq);
    return { duplicates: result.events.filter((event) => event.duplicate).length };
  }
}
