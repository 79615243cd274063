import { z } from 'zod';
import { RowCount, RowId, RowTimestamp } from './row-fields.js';

/** A step of the step queue: the `steps` view. */
export const StepRow = z
  .strictObject({
    step_id: RowId,
    task_id: RowId,
    kind: z.string().nullable(),
    title: z.string().nullable(),
    status: z.string().describe("A step status, moved along the kernel's STEP_EVENT_EDGES."),
    depends_on: z.array(z.string()),
    max_attempts: z.int().nullable(),
    attempt_count: RowCount.describe('Attempts opened so far.'),
    current_attempt_id: RowId.nullable(),
    current_attempt_no: z.int().nullable(),
    current_attempt_status: z.string().nullable().describe('Hermit 12.3 status of the current attempt (awaiting_approval, executing...).'),
    blocked_reason: z.string().nullable().describe('Why it is blocked (step.blocked), else null.'),
    last_task_seq: RowCount,
    last_event_type: z.string(),
    planned_at: RowTimestamp,
    updated_at: RowTimestamp,
  })
  .meta({ title: 'StepRow', description: 'A step of the step queue (the steps view).' });
export type StepRow = z.infer<typeof StepRow>;
