import { z } from 'zod';
import { RowCount, RowId, RowTimestamp } from './row-fields.js';

/** A task: the `tasks` view (`GET /v1/tasks`, `<root>.proj.tasks.<id>`). */
export const TaskRow = z
  .strictObject({
    task_id: RowId,
    title: z.string(),
    goal: z.string(),
    status: z.string().describe("Hermit 12.1 task status, moved along the kernel's TASK_EVENT_EDGES."),
    owner_principal_id: RowId.nullable(),
    policy_profile: z.string().nullable().describe("The task's policy_profile_ref, e.g. local_edit_allowed."),
    last_task_seq: RowCount.describe('task_seq of the last event of the task folded here.'),
    last_event_type: z.string(),
    created_at: RowTimestamp,
    updated_at: RowTimestamp,
  })
  .meta({ title: 'TaskRow', description: 'A task (the tasks view).' });
export type TaskRow = z.infer<typeof TaskRow>;
