import { WritError, type EventDraft, type EventEnvelope } from '@writ/contracts';
import type { TaskLog } from '../src/application/ports.js';

/**
 * An in-memory task log with the event store's append semantics (expected
 * sequence guard → EVENTSTORE_CONFLICT, dedupe by idempotency key), for pure
 * tests of the handler's decisions. Integration tests use the real event store.
 */
export class MemoryTaskLog implements TaskLog {
  readonly streams = new Map<string, EventEnvelope[]>();
  reads = 0;

  async read(taskId: string): Promise<readonly EventEnvelope[]> {
    this.reads += 1;
    return [...(this.streams.get(taskId) ?? [])];
  }

  async append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ head: number; duplicate: boolean }> {
    const stream = this.streams.get(taskId) ?? [];
    const first = drafts[0];
    if (first !== undefined && stream.some((event) => event.idempotency_key === first.idempotency_key)) return { head: stream.length, duplicate: true };
    if (stream.length !== expectedSeq) {
      throw new WritError('EVENTSTORE_CONFLICT', `task ${taskId} is at ${stream.length}, not ${expectedSeq}`);
    }
    for (const draft of drafts) this.push(taskId, draft);
    return { head: this.streams.get(taskId)?.length ?? 0, duplicate: false };
  }

  /** Appends without a guard (another writer). */
  push(taskId: string, draft: EventDraft): void {
    const stream = this.streams.get(taskId) ?? [];
    stream.push({ ...draft, task_id: taskId, task_seq: stream.length + 1, prev_event_hash: null, hash: '0'.repeat(64) });
    this.streams.set(taskId, stream);
  }
}
