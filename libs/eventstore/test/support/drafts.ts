import { randomUUID } from 'node:crypto';
import type { EventDraft } from '@writ/contracts';

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
