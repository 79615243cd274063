import type { EventStore } from '@writ/eventstore';
import type { IngressLog, LoggedEvent } from '../application/ports.js';

/** The ingress port over `@writ/eventstore` (one JetStream stream, hash-chained per aggregate). */
export class EventStoreIngressLog implements IngressLog {
  constructor(private readonly store: EventStore) {}

  async headOfIngress(entityId: string): Promise<number> {
    return (await this.store.headOfEntity('ingress', entityId)).taskSeq;
  }

  async readIngress(entityId: string): Promise<LoggedEvent[]> {
    return (await this.store.readEntity('ingress', entityId)).map(({ streamSeq, event }) => ({ streamSeq, event }));
  }

  async appendIngress(entityId: string, drafts: readonly unknown[], expectedSeq: number): Promise<{ readonly duplicate: boolean }> {
    const result = await this.store.appendToEntity('ingress', entityId, drafts, expectedSeq);
    return { duplicate: result.events.every((event) => event.duplicate) };
  }

  async headOfTask(taskId: string): Promise<number> {
    return (await this.store.head(taskId)).taskSeq;
  }

  async readTask(taskId: string): Promise<LoggedEvent[]> {
    return (await this.store.read(taskId)).map(({ streamSeq, event }) => ({ streamSeq, event }));
  }

  async appendTask(taskId: string, drafts: readonly unknown[], expectedSeq: number): Promise<void> {
    await this.store.append(taskId, drafts, expectedSeq);
  }
}
