import { z } from 'zod';
import { ActionClass } from '../action-class.js';
import { RowId, RowTimestamp } from './row-fields.js';

/**
 * What `GET /v1/actions/<id>` reports (docs/governed-path.md, "Action status").
 * `cancelled` and `superseded` are the two attempt endings the docs' list does
 * not name; a superseded attempt's action goes back to `awaiting_policy` when
 * its replacement attempt is created for the same request.
 */
export const ActionStatus = z.enum([
  'received',
  'rejected',
  'awaiting_policy',
  'awaiting_approval',
  'authorized',
  'executing',
  'receipt_pending',
  'succeeded',
  'failed',
  'denied',
  'unknown_outcome',
  'cancelled',
  'superseded',
]);
export type ActionStatus = z.infer<typeof ActionStatus>;

/** One ActionRequest and what became of it: the `actions` view (`GET /v1/actions`, `<root>.proj.actions.<id>`). */
export const ActionRow = z
  .strictObject({
    action_request_id: RowId,
    status: ActionStatus,
    principal_id: RowId.nullable().describe('The claimed principal while received/rejected; the authenticated one once bound to a task.'),
    ingress_id: RowId.nullable(),
    task_id: RowId.nullable(),
    step_id: RowId.nullable(),
    attempt_id: RowId.nullable(),
    action_class: ActionClass.nullable(),
    policy_outcome: z.string().nullable().describe('allow, require_approval, deny or downgrade, as policy said.'),
    risk_band: z.string().nullable().describe('low, moderate, high or critical, as policy said.'),
    policy_result_id: RowId.nullable(),
    approval_id: RowId.nullable(),
    grant_id: RowId.nullable(),
    receipt_id: RowId.nullable(),
    reason_code: z.string().nullable().describe('Why it was rejected, denied or failed (a stable code).'),
    received_at: RowTimestamp.nullable().describe('When ingress received it; null for an action the projection met first on its task stream.'),
    created_at: RowTimestamp.describe('When the projection first saw the action (the event that created its row); never changes. Lists order and filter by it.'),
    updated_at: RowTimestamp,
  })
  .meta({ title: 'ActionRow', description: 'An ActionRequest and what became of it (the actions view).' });
export type ActionRow = z.infer<typeof ActionRow>;
