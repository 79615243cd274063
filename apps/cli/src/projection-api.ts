import { z } from 'zod';

/**
 * What this CLI reads from the projection's HTTP API (services/projection
 * README, "HTTP API"): only the fields it shows or relies on are checked,
 * anything else passes through untouched (and is printed as is by --json).
 */
const text = z.string();
const optionalText = z.string().nullish();

/** `GET /v1/actions/<id>`. */
export const ActionView = z.looseObject({
  action_request_id: text,
  status: text,
  principal_id: optionalText,
  ingress_id: optionalText,
  task_id: optionalText,
  step_id: optionalText,
  attempt_id: optionalText,
  action_class: optionalText,
  policy_outcome: optionalText,
  risk_band: optionalText,
  policy_result_id: optionalText,
  approval_id: optionalText,
  grant_id: optionalText,
  receipt_id: optionalText,
  reason_code: optionalText,
  received_at: optionalText,
  updated_at: optionalText,
});
export type ActionView = z.output<typeof ActionView>;

/** One line of a task's timeline. */
export const TaskEventView = z.looseObject({
  task_seq: z.int().nonnegative(),
  event_id: text,
  event_type: text,
  entity_type: text,
  entity_id: text,
  step_id: optionalText,
  attempt_id: optionalText,
  actor_type: text,
  actor_id: text,
  payload: z.record(z.string(), z.unknown()),
  occurred_at: text,
});
export type TaskEventView = z.output<typeof TaskEventView>;

/** `GET /v1/tasks/<id>?after=&limit=`: the task and one page of its timeline. */
export const TaskView = z.looseObject({
  task_id: text,
  title: text,
  goal: z.string().nullish(),
  status: text,
  owner_principal_id: optionalText,
  policy_profile: optionalText,
  last_task_seq: z.int().nonnegative().nullish(),
  last_event_type: optionalText,
  created_at: optionalText,
  updated_at: optionalText,
  events: z.array(TaskEventView),
  next_after: z.int().nonnegative().nullable(),
});
export type TaskView = z.output<typeof TaskView>;

/** One row of `GET /v1/approvals`. */
export const ApprovalView = z.looseObject({
  approval_id: text,
  task_id: text,
  step_id: optionalText,
  attempt_id: optionalText,
  status: text,
  packet: z.record(z.string(), z.unknown()).nullish(),
  requested_by: optionalText,
  resolved_by: optionalText,
  resolution_note: optionalText,
  requested_at: optionalText,
  resolved_at: optionalText,
  expires_at: optionalText,
});
export type ApprovalView = z.output<typeof ApprovalView>;

/** `GET /v1/approvals`: a page of the inbox (`next_cursor` pages on; the server also repeats `items` as the earlier `approvals`). */
export const ApprovalList = z.looseObject({ items: z.array(ApprovalView), next_cursor: z.string().nullish() });
export type ApprovalList = z.output<typeof ApprovalList>;

/** What `POST /v1/approvals/<id>/grant|deny` answers (the approval service's reply, forwarded). */
export const ResolveApprovalReply = z.looseObject({
  approval_id: text,
  task_id: text,
  status: text,
  resolved_by: optionalText,
  event_id: optionalText,
});
export type ResolveApprovalReply = z.output<typeof ResolveApprovalReply>;

/** `GET /v1/receipts/<id>`: the receipt exactly as signed, and the compact JWS of `receipt.issued`. */
export const ReceiptView = z.looseObject({
  receipt_id: text,
  task_id: optionalText,
  step_id: optionalText,
  attempt_id: optionalText,
  action_request_id: optionalText,
  result_code: optionalText,
  receipt_class: optionalText,
  receipt: z.record(z.string(), z.unknown()),
  jws: text,
  receipt_hash: optionalText,
  created_at: optionalText,
});
export type ReceiptView = z.output<typeof ReceiptView>;

/** `GET /v1/keys`: a JWKS (each key is checked when it is imported). */
export const KeysView = z.looseObject({ keys: z.array(z.unknown()) });
