import type { EventDraft, EventEnvelope } from '@writ/contracts';
import type { EventStore } from '@writ/eventstore';
import type { MemoryLog, TaskLog } from '../application/ports.js';

/** The task streams of the event store, as the handlers see them. */
export class EventStoreTaskLog implements TaskLog {
  readonly #store: EventStore;

  constructor(store: EventStore) {
    this.#store = store;
  }

  async read(taskId: string): Promise<readonly EventEnvelope[]> {
    return (await this.#store.read(taskId)).map((stored) => stored.event);
  }

  async append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ head: number; duplicate: boolean }> {
    const result = await this.#store.append(taskId, drafts, expectedSeq);
    return { head: result.taskSeq, duplicate: result.events[0]?.duplicate ?? false };
  }
}

/** The memory records' streams of the event store (`<events>.memory.<memory_id>`). */
export class EventStoreMemoryLog implements MemoryLog {
  readonly #store: EventStore;

  constructor(store: EventStore) {
    this.#store = store;
  }

  async read(memoryId: string): Promise<readonly EventEnvelope[]> {
    return (await this.#store.readEntity('memory', memoryId)).map((stored) => stored.event);
  }

  async append(memoryId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<void> {
    await this.#store.appendToEntity('memory', memoryId, drafts, expectedSeq);
  }
}
