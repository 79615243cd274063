import { randomUUID } from 'node:crypto';
import type { EventDraft, EventEnvelope } from '@writ/contracts';
import { GENESIS, sealEvent, type ChainLink } from '../../src/event-chain.js';

/** A valid draft of a task event; each call gets a fresh event_id. */
export function taskDraft(taskId: string, overrides: Partial<EventDraft> = {}): EventDraft {
  return {
    event_id: `evt-${randomUUID()}`,
    schema_version: 1,
    event_type: 'task.note_added',
    entity_type: 'task',
    entity_id: taskId,
    occurred_at: '2026-11-25T12:00:00.000Z',
    actor_type: 'agent',
    actor_id: 'agent-1',
    payload: { note: 'hello' },
    causation_id: null,
    correlation_id: 'corr-1',
    ...overrides,
  };
}

/** `drafts` sealed in order as one aggregate's chain. */
export function sealedChain(drafts: readonly EventDraft[], taskId: string): EventEnvelope[] {
  const events: EventEnvelope[] = [];
  let link: ChainLink = GENESIS;
  for (const draft of drafts) {
    const event = sealEvent(draft, taskId, link);
    events.push(event);
    link = { taskSeq: event.task_seq, hash: event.hash };
  }
  return events;
}
