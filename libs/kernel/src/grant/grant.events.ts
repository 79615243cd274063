import { ActionClass, CapabilityGrantClaims, Id, Text, Timestamp } from '@writ/contracts';
import { z } from 'zod';

const at = Timestamp;

export const GrantRefusal = z.enum([
  'GRANT_NOT_YET_VALID',
  'GRANT_EXPIRED',
  'GRANT_WRONG_TASK',
  'GRANT_WRONG_ATTEMPT',
  'GRANT_WRONG_ACTION_CLASS',
  'GRANT_OUT_OF_SCOPE',
  'GRANT_SECRET_OUT_OF_SCOPE',
  'GRANT_WALL_CLOCK_EXCEEDED',
  'GRANT_EXHAUSTED',
  'GRANT_REVOKED',
]);

/** The events of the CapabilityGrant aggregate (Hermit 8.12, 16.6). */
export const GrantEvent = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('grant.issued'),
    // `jws` is the signed grant the executor verifies; the claims are its payload, kept for folding and audit.
    data: z.strictObject({ claims: CapabilityGrantClaims, jws: z.string().min(1).max(16 * 1024).optional(), at }),
  }),
  z.strictObject({
    type: z.literal('grant.use_claimed'),
    // `executor_id` / `host_id`: who claimed it, and on which host (its restart there can prove the use never started).
    data: z.strictObject({ use_id: Id, use_no: z.int().min(1).max(1_000), task_id: Id, attempt_id: Id, action_class: ActionClass, executor_id: Id.optional(), host_id: Id.optional(), at }),
  }),
  /**
   * A claimed use proven never to have started (its claimer is gone, and the exec was fenced or
   * never created): it no longer counts against `max_uses`, so the attempt goes on with a new
   * use of the same grant, checked again like any use. Its `execution.completed` says `not_run`.
   */
  z.strictObject({ type: z.literal('grant.use_released'), data: z.strictObject({ use_id: Id, use_no: z.int().min(1).max(1_000), reason_code: z.string().max(64).regex(/^[A-Z][A-Z0-9_]*$/), reason: Text, at }) }),
  z.strictObject({ type: z.literal('grant.refused'), data: z.strictObject({ use_id: Id, code: GrantRefusal, message: Text, at }) }),
  z.strictObject({ type: z.literal('grant.revoked'), data: z.strictObject({ revoked_by: Id, reason: Text, at }) }),
]);
export type GrantEvent = z.infer<typeof GrantEvent>;
export type GrantEventType = GrantEvent['type'];
