import { z } from 'zod';
import { ActionClass } from '../action-class.js';
import { Id, Name, Timestamp } from '../ids.js';
import { ActionStatusSchema } from '../projection-rows/actions.row.js';
import { CellRowStatusSchema } from '../projection-rows/cells.row.js';
import { ReceiptClass, ReceiptResultCode } from '../receipt.js';
import { RiskBand } from '../risk-band.js';
import { ApprovalStatus, TaskStatus } from '../states.js';
import { PageCursor, PageLimit } from './pagination.js';

/**
 * The query parameters of the list endpoints, one strict schema per list:
 * the service parses `req.query` with it (an unknown or malformed parameter is
 * 400 PROJECTION_REQUEST_INVALID naming it) and the OpenAPI document lists its
 * properties as the operation's parameters, so the two cannot disagree.
 * Time windows are half-open on the list's own time column: `since` ≤ t < `until`.
 */

const since = (column: string) => Timestamp.optional().describe(`Only rows whose ${column} is at or after this instant (RFC 3339; encode "+" as %2B).`);
const until = (column: string) => Timestamp.optional().describe(`Only rows whose ${column} is before this instant (RFC 3339).`);
const taskOwner = Id.optional().describe('Only rows of tasks this principal owns (the agent that opened the task).');
const taskId = Id.optional().describe('Only rows of this task.');

const paging = { limit: PageLimit, cursor: PageCursor.optional() };

/** `GET /v1/tasks`: newest first, by (created_at, task_id). */
export const TaskListQuery = z.strictObject({
  status: TaskStatus.optional().describe('Only tasks in this status.'),
  principal_id: Id.optional().describe('Only tasks this principal owns.'),
  policy_profile: Name.optional().describe('Only tasks under this policy profile.'),
  q: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe('Only tasks whose id, title, goal, owner or policy profile contains this text (case-insensitive; % and _ match themselves).'),
  since: since('created_at'),
  until: until('created_at'),
  ...paging,
});
export type TaskListQuery = z.output<typeof TaskListQuery>;

/** `GET /v1/actions`: newest first, by (created_at, action_request_id). */
export const ActionListQuery = z.strictObject({
  status: ActionStatusSchema.optional().describe('Only actions in this status.'),
  principal_id: Id.optional().describe('Only actions of this principal (the proposer, once bound to a task the authenticated one).'),
  task_id: taskId,
  action_class: ActionClass.optional().describe('Only actions of this action class.'),
  risk_band: RiskBand.optional().describe('Only actions policy put in this risk band.'),
  since: since('created_at'),
  until: until('created_at'),
  ...paging,
});
export type ActionListQuery = z.output<typeof ActionListQuery>;

/** `GET /v1/approvals`: the inbox, oldest request first, by (requested_at, approval_id). */
export const ApprovalListQuery = z.strictObject({
  status: ApprovalStatus.optional().describe('Only approvals in this status (the inbox: pending).'),
  task_id: taskId,
  principal_id: taskOwner,
  action_class: ActionClass.optional().describe("Only approvals whose packet names this action class."),
  risk_band: RiskBand.optional().describe("Only approvals whose packet names this risk band."),
  since: since('requested_at'),
  until: until('requested_at'),
  ...paging,
});
export type ApprovalListQuery = z.output<typeof ApprovalListQuery>;

/** `GET /v1/receipts`: newest first, by (created_at, receipt_id). */
export const ReceiptListQuery = z.strictObject({
  task_id: taskId,
  principal_id: taskOwner,
  action_request_id: Id.optional().describe('Only receipts of this action request.'),
  result_code: ReceiptResultCode.optional().describe('Only receipts with this result.'),
  receipt_class: ReceiptClass.optional().describe('Only receipts of this class.'),
  since: since('created_at'),
  until: until('created_at'),
  ...paging,
});
export type ReceiptListQuery = z.output<typeof ReceiptListQuery>;

/** `GET /v1/cells`: newest first, by (created_at, cell_id). */
export const CellListQuery = z.strictObject({
  status: CellRowStatusSchema.optional().describe('Only cells in this Lazarus status.'),
  task_id: taskId,
  principal_id: taskOwner,
  director_id: Id.optional().describe('Only cells this principal directs.'),
  since: since('created_at'),
  until: until('created_at'),
  ...paging,
});
export type CellListQuery = z.output<typeof CellListQuery>;

/** Every list endpoint's query schema, by the list's name (the name also goes into its cursors). */
export const LIST_QUERIES = Object.freeze({
  tasks: TaskListQuery,
  actions: ActionListQuery,
  approvals: ApprovalListQuery,
  receipts: ReceiptListQuery,
  cells: CellListQuery,
});
export type ListName = keyof typeof LIST_QUERIES;
