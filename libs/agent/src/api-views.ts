import { z } from 'zod';
import { ACTION_STATUSES, type ActionStatus } from './contracts.js';

/**
 * What the SDK reads from Writ's HTTP API (the projection's read models,
 * services/projection README, "HTTP API"). These are views, not contracts: only
 * the fields the SDK relies on are checked, anything else passes through, so
 * a server that adds a field does not break an older SDK.
 */

/** Every status `GET /v1/actions/<id>` reports: the projection's own list (docs/governed-path.md, "Action status"). */
export { ACTION_STATUSES, type ActionStatus };

/** Statuses after which nothing changes any more (a receipt still follows, except for `rejected`). */
export const TERMINAL_ACTION_STATUSES: readonly ActionStatus[] = Object.freeze(['rejected', 'succeeded', 'failed', 'denied', 'unknown_outcome', 'cancelled', 'superseded']);

const text = z.string();
const optionalText = z.string().nullish();

/** `GET /v1/actions/<id>`: the action's status and the ids of what decided and ran it. */
export const ActionView = z.looseObject({
  action_request_id: text,
  /** One of ACTION_STATUSES (a newer server may add one). */
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

/** One event of a task's timeline (payloads as the log holds them; a grant's JWS is withheld). */
export const TaskEventView = z.looseObject({
  task_seq: z.number().int().nonnegative(),
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

/** `GET /v1/tasks/<id>?after=<task_seq>&limit=<n>`: the task and one page of its timeline. */
export const TaskView = z.looseObject({
  task_id: text,
  title: text,
  goal: z.string().nullish(),
  status: text,
  owner_principal_id: optionalText,
  policy_profile: optionalText,
  last_task_seq: z.number().int().nonnegative().nullish(),
  last_event_type: optionalText,
  created_at: optionalText,
  updated_at: optionalText,
  events: z.array(TaskEventView),
  next_after: z.number().int().nonnegative().nullable(),
});
export type TaskView = z.output<typeof TaskView>;

/** `GET /v1/receipts/<id>`: the receipt exactly as signed, and the compact JWS of `receipt.issued`. */
export const ReceiptView = z.looseObject({
  receipt_id: text,
  task_id: optionalText,
  action_request_id: optionalText,
  result_code: optionalText,
  receipt: z.record(z.string(), z.unknown()),
  jws: text,
});
export type ReceiptView = z.output<typeof ReceiptView>;

/** `GET /v1/keys`: the JWKS of the service principals' active keys (public, no token needed). */
export const KeysView = z.looseObject({ keys: z.array(z.unknown()) });
export type KeysView = z.output<typeof KeysView>;

/** What ingress answered `POST /v1/actions` (202 accepted, 200 duplicate). */
export const IngressReplyView = z.looseObject({
  ingress_id: text,
  status: z.enum(['accepted', 'duplicate', 'rejected']),
  reason_code: optionalText,
  message: optionalText,
  action_request_id: optionalText,
  task_id: optionalText,
});
export type IngressReplyView = z.output<typeof IngressReplyView>;
