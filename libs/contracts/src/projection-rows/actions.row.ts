import { z } from 'zod';
import { RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/**
 * What `GET /v1/actions/<id>` reports (docs/governed-path.md, "Action status").
 * `cancelled` and `superseded` are the two attempt endings the docs' list does
 * not name; a superseded attempt's action goes back to `awaiting_policy` when
 * its replacement attempt is created for the same request.
 */
export const ACTION_STATUSES = [
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
] as const;
export const ActionStatusSchema = z.enum(ACTION_STATUSES);
export type ActionStatus = z.infer<typeof ActionStatusSchema>;

/** `<root>.proj.actions.<action_request_id>`: one agent request and the ids of what decided and ran it. */
export const ActionRowSchema = z.strictObject({
  action_request_id: RowId,
  status: ActionStatusSchema,
  /** The claimed principal while `received`/`rejected`; the authenticated one once bound to a task. */
  principal_id: RowRef,
  ingress_id: RowRef,
  task_id: RowRef,
  step_id: RowRef,
  attempt_id: RowRef,
  action_class: RowText,
  policy_outcome: RowText,
  risk_band: RowText,
  policy_result_id: RowRef,
  approval_id: RowRef,
  grant_id: RowRef,
  receipt_id: RowRef,
  reason_code: RowText,
  /** When ingress received it; null for an action the projection met first on its task stream. */
  received_at: RowInstant.nullable(),
  /** When the projection first saw the action (the event that created its row); never changes. `GET /v1/actions` orders and filters by it. */
  created_at: RowInstant,
  updated_at: RowInstant,
  row_version: RowVersion,
});
export type ActionRow = z.infer<typeof ActionRowSchema>;
