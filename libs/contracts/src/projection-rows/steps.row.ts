import { z } from 'zod';
import { RowCount, RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/** `<root>.proj.steps.<step_id>`: the step queue, each step with its current attempt. */
export const StepRowSchema = z.strictObject({
  step_id: RowId,
  task_id: RowId,
  kind: RowText,
  title: RowText,
  status: z.string(),
  depends_on: z.array(z.string()),
  max_attempts: z.int().nullable(),
  /** Attempts opened so far. */
  attempt_count: RowCount,
  current_attempt_id: RowRef,
  current_attempt_no: z.int().nullable(),
  /** Hermit 12.3 status of the current attempt (`awaiting_approval`, `executing`...). */
  current_attempt_status: RowText,
  /** Why it is blocked (`step.blocked`), else null. */
  blocked_reason: RowText,
  last_task_seq: z.int().min(0),
  last_event_type: z.string(),
  planned_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type StepRow = z.infer<typeof StepRowSchema>;
