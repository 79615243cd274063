import { z } from 'zod';
import { RowCount, RowId, RowTimestamp } from './row-fields.js';

/** One StepAttempt and the ids of what decided, authorized, ran and receipted it: the `attempts` view. */
export const AttemptRow = z
  .strictObject({
    attempt_id: RowId,
    task_id: RowId,
    step_id: RowId.nullable(),
    attempt_no: z.int().nullable(),
    status: z.string().describe("Hermit 12.3 attempt status, along the kernel's ATTEMPT_EVENT_EDGES."),
    action_request_id: RowId.nullable().describe('The ActionRequest it carries (attempt.awaiting_policy).'),
    action_class: z.string().nullable(),
    policy_outcome: z.string().nullable(),
    risk_band: z.string().nullable(),
    approval_id: RowId.nullable(),
    grant_id: RowId.nullable(),
    execution_outcome: z
      .string()
      .nullable()
      .describe("How the executor saw the run end (completed, errored, unknown, not_run), then a director's resolution of an unknown one."),
    result_code: z.string().nullable().describe('The settled result (succeeded / failed, attempt.receipt_pending).'),
    receipt_id: RowId.nullable(),
    reason_code: z.string().nullable(),
    last_task_seq: RowCount,
    last_event_type: z.string(),
    created_at: RowTimestamp,
    updated_at: RowTimestamp,
  })
  .meta({ title: 'AttemptRow', description: 'One StepAttempt (the attempts view).' });
export type AttemptRow = z.infer<typeof AttemptRow>;
