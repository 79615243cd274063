import { z } from 'zod';
import { RowCount, RowId, RowInstant, RowObject, RowRef } from './row-fields.js';

/**
 * One event of a task's timeline: the `task_events` view, payloads redacted
 * (a grant's JWS is withheld). Not published on `<root>.proj.*` nor in the
 * changes feed (no `row_version`): read per task over HTTP only
 * (`GET /v1/tasks/<id>`, its `events`). Keyed by (task_id, task_seq).
 */
export const TaskEventRowSchema = z.strictObject({
  task_id: RowId,
  task_seq: RowCount,
  /** The event's sequence in the event log (JetStream stream sequence). */
  stream_seq: RowCount,
  event_id: RowRef.unwrap(),
  event_type: z.string(),
  entity_type: z.string(),
  entity_id: RowRef.unwrap(),
  step_id: RowRef,
  attempt_id: RowRef,
  actor_type: z.string(),
  actor_id: RowRef.unwrap(),
  payload: RowObject,
  occurred_at: RowInstant,
});
export type TaskEventRow = z.infer<typeof TaskEventRowSchema>;
