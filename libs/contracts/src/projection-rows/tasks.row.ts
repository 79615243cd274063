import { z } from 'zod';
import { RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/** `<root>.proj.tasks.<task_id>`: a task and where it is in its lifecycle. */
export const TaskRowSchema = z.strictObject({
  task_id: RowId,
  title: z.string(),
  goal: z.string(),
  /** Hermit 12.1 task status, moved along the kernel's `TASK_EVENT_EDGES`. */
  status: z.string(),
  owner_principal_id: RowRef,
  /** The task's `policy_profile_ref`, e.g. `local_edit_allowed`. */
  policy_profile: RowText,
  /** `task_seq` of the last event of the task folded here, and its type. */
  last_task_seq: z.int().min(0),
  last_event_type: z.string(),
  created_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type TaskRow = z.infer<typeof TaskRowSchema>;
