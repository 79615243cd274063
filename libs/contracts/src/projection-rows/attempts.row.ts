import { z } from 'zod';
import { RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/** `<root>.proj.attempts.<attempt_id>`: one attempt of a step, from policy to its settled result. */
export const AttemptRowSchema = z.strictObject({
  attempt_id: RowId,
  task_id: RowId,
  step_id: RowRef,
  attempt_no: z.int().nullable(),
  status: z.string(),
  /** The ActionRequest it carries (`attempt.awaiting_policy`). */
  action_request_id: RowRef,
  action_class: RowText,
  policy_outcome: RowText,
  risk_band: RowText,
  approval_id: RowRef,
  grant_id: RowRef,
  /** How the executor saw the run end (`completed`, `errored`, `unknown`, `not_run`), then a director's resolution of an unknown one. */
  execution_outcome: RowText,
  /** The settled result (`succeeded` / `failed`, `attempt.receipt_pending`). */
  result_code: RowText,
  receipt_id: RowRef,
  reason_code: RowText,
  /** The context pack the attempt was proposed under (`context.pack_compiled`): its SHA-256, where its bytes are, their size; null until compiled. */
  context_pack_sha256: RowText,
  context_pack_uri: RowText,
  context_pack_byte_size: z.int().min(1).nullable(),
  last_task_seq: z.int().min(0),
  last_event_type: z.string(),
  created_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type AttemptRow = z.infer<typeof AttemptRowSchema>;
