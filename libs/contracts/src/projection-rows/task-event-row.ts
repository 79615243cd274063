import { z } from 'zod';
import { RowCount, RowId, RowObject, RowTimestamp } from './row-fields.js';

/** One event of a task's timeline: the `task_events` view, payloads redacted (a grant's JWS is withheld). */
export const TaskEventRow = z
  .strictObject({
    task_id: RowId,
    task_seq: RowCount,
    stream_seq: RowCount,
    event_id: RowId,
    event_type: z.string(),
    entity_type: z.string(),
    entity_id: RowId,
    step_id: RowId.nullable(),
    attempt_id: RowId.nullable(),
    actor_type: z.string(),
    actor_id: RowId,
    payload: RowObject,
    occurred_at: RowTimestamp,
  })
  .meta({ title: 'TaskEventRow', description: "One event of a task's timeline (the task_events view), payload redacted." });
export type TaskEventRow = z.infer<typeof TaskEventRow>;
