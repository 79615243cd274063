import { z } from 'zod';
import { Id, Timestamp } from '../ids.js';
import { Text } from '../text.js';

/** Largest signed ActionRequest ingress accepts (compact JWS bytes). */
export const MAX_INGRESS_BYTES = 256 * 1024;

export const IngressChannel = z.enum(['nats', 'http']);
export type IngressChannel = z.infer<typeof IngressChannel>;

/** Why ingress refused a request; stable codes agents can branch on. */
export const IngressRejectionCode = z.enum([
  'INGRESS_REQUEST_INVALID',
  'INGRESS_SIGNATURE_INVALID',
  'INGRESS_PRINCIPAL_UNKNOWN',
  'INGRESS_PRINCIPAL_MISMATCH',
  'INGRESS_KEY_UNKNOWN',
  'INGRESS_STALE',
  'INGRESS_TOO_LARGE',
  'INGRESS_TASK_UNKNOWN',
  'INGRESS_TASK_TERMINAL',
  /** `supersedes` names no earlier request of the task by this principal whose attempt is still pending, or task_id is missing. */
  'INGRESS_SUPERSEDES_INVALID',
  /** The principal is a participant (a spawned seed) that is paused, retired, expired or failed: it no longer acts. */
  'INGRESS_PARTICIPANT_INACTIVE',
  /** The idempotency key is held by another request of the same principal (other bytes): a new request needs a new key. */
  'INGRESS_IDEMPOTENCY_CONFLICT',
]);
export type IngressRejectionCode = z.infer<typeof IngressRejectionCode>;

/**
 * `ingress.received` on `writ.evt.ingress.<ingress_id>`: written before the
 * request is verified or any task changes (invariant 1). `raw` is the request
 * exactly as received (a compact JWS), so the decision can be re-checked later.
 */
export const IngressReceived = z.strictObject({
  ingress_id: Id,
  source_channel: IngressChannel,
  claimed_principal_id: z.string().max(256),
  idempotency_key: z.string().min(1).max(256),
  raw: z.string().max(MAX_INGRESS_BYTES),
  raw_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  received_at: Timestamp,
});
export type IngressReceived = z.infer<typeof IngressReceived>;

/** `ingress.rejected`: nothing else happens for this request. */
export const IngressRejected = z.strictObject({
  ingress_id: Id,
  reason_code: IngressRejectionCode,
  message: Text,
  action_request_id: Id.optional(),
  at: Timestamp,
});
export type IngressRejected = z.infer<typeof IngressRejected>;

/** `ingress.accepted`: the request became (or joined) a task. */
export const IngressAccepted = z.strictObject({
  ingress_id: Id,
  action_request_id: Id,
  principal_id: Id,
  task_id: Id,
  step_id: Id,
  attempt_id: Id,
  created_task: z.boolean(),
  at: Timestamp,
});
export type IngressAccepted = z.infer<typeof IngressAccepted>;
