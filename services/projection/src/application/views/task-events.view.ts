import { redactSecrets } from '@writ/telemetry';
import { occurredAt, type ProjectedEvent } from '../projected-event.js';
import type { View } from './view.js';
import type { TaskEventRow } from '@writ/contracts/projection-rows';

/**
 * One line of a task's timeline (`GET /v1/tasks/<id>`): every event of the
 * task stream in `task_seq` order. Payloads pass through the secret redaction
 * (invariant 6: nothing secret-shaped reaches a projection, e.g. the bearer
 * JWS of a grant, which is withheld); deterministic, so a rebuild yields the same rows.
 */
export type { TaskEventRow };

/** A grant's JWS is a bearer capability: it has no reader, so the timeline never holds it (the claims stay). */
function timelinePayload(eventType: string, payload: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  if (eventType !== 'grant.issued' || payload['jws'] === undefined) return payload;
  const { jws: _withheld, ...rest } = payload;
  return { ...rest, jws: '[WITHHELD]' };
}

function fold(row: TaskEventRow | undefined, event: ProjectedEvent): TaskEventRow | undefined {
  if (row !== undefined || event.aggregate.type !== 'task') return row;
  const { envelope } = event;
  return {
    task_id: event.aggregate.id,
    task_seq: envelope.task_seq,
    stream_seq: event.streamSeq,
    event_id: envelope.event_id,
    event_type: envelope.event_type,
    entity_type: envelope.entity_type,
    entity_id: envelope.entity_id,
    step_id: envelope.step_id ?? null,
    attempt_id: envelope.attempt_id ?? null,
    actor_type: envelope.actor_type,
    actor_id: envelope.actor_id,
    payload: redactSecrets(timelinePayload(envelope.event_type, envelope.payload)),
    occurred_at: occurredAt(event),
  };
}

export const taskEventsView: View<TaskEventRow> = {
  name: 'task_events',
  primaryKey: ['task_id', 'task_seq'],
  published: false,
  topicId: (row) => `${row.task_id}.${row.task_seq}`,
  locate: (event) => (event.aggregate.type === 'task' ? { task_id: event.aggregate.id, task_seq: event.envelope.task_seq } : undefined),
  fold,
};
