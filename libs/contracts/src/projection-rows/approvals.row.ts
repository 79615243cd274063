import { z } from 'zod';
import { ApprovalStatus } from '../states.js';
import { RowId, RowInstant, RowObject, RowRef, RowText, RowVersion } from './row-fields.js';

/** `<root>.proj.approvals.<approval_id>`: an approval and its resolution. */
export const ApprovalRowSchema = z.strictObject({
  approval_id: RowId,
  task_id: RowId,
  step_id: RowRef,
  attempt_id: RowRef,
  status: ApprovalStatus,
  /** What the approver decides on: the packet when the event carries one, else the refs to it. */
  packet: RowObject,
  requested_by: RowRef,
  resolved_by: RowRef,
  resolution_note: RowText,
  requested_at: RowInstant,
  resolved_at: RowInstant.nullable(),
  /** As requested; a pending approval past it stays `pending` until `approval.expired` is in the log. */
  expires_at: RowInstant.nullable(),
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type ApprovalRow = z.infer<typeof ApprovalRowSchema>;
