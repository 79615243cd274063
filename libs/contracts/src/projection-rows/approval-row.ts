import { z } from 'zod';
import { ApprovalStatus } from '../states.js';
import { RowId, RowObject, RowTimestamp } from './row-fields.js';

/** An approval: the `approvals` view (`GET /v1/approvals`, `<root>.proj.approvals.<id>`). */
export const ApprovalRow = z
  .strictObject({
    approval_id: RowId,
    task_id: RowId,
    step_id: RowId.nullable(),
    attempt_id: RowId.nullable(),
    status: ApprovalStatus,
    packet: RowObject.describe('What the approver decides on: the packet when the event carries one, else the refs to it.'),
    requested_by: RowId.nullable(),
    resolved_by: RowId.nullable(),
    resolution_note: z.string().nullable(),
    requested_at: RowTimestamp,
    resolved_at: RowTimestamp.nullable(),
    expires_at: RowTimestamp.nullable().describe('As requested; a pending approval past it stays pending here until approval.expired is in the log.'),
    updated_at: RowTimestamp,
  })
  .meta({ title: 'ApprovalRow', description: 'An approval (the approvals view).' });
export type ApprovalRow = z.infer<typeof ApprovalRow>;
