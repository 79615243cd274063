import { sha256Hex } from '@writ/crypto';

/** The ids one ingress derives everything from, so a redelivery or a crash half way finishes the same work. */
export interface IngressIds {
  readonly ingressId: string;
  /** The task this ingress creates (`tsk-…`); a request naming `task_id` acts in that task instead. */
  readonly newTaskId: string;
  readonly stepId: string;
  readonly attemptId: string;
}

const hex32 = (text: string): string => sha256Hex(text).slice(0, 32);
const ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * `<principal_id>:<key>` is unambiguous for a real principal (an Id has no
 * colon). A subject token that is not an Id (`a:b`) can never be registered;
 * its input is moved out of that space (leading colon), so publishing to
 * `ingress.action.a:b` with key `c` cannot pre-empt principal `a`'s key `b:c`.
 */
function identity(principalId: string, key: string): string {
  return ID.test(principalId) ? `${principalId}:${key}` : `:${principalId}:${key}`;
}

/**
 * `ingress_id` = `ing-` + the first 32 hex of SHA-256(`<principal_id>:<idempotency key>`)
 * (docs/governed-path.md step 1); the task, step and attempt ids share its hash.
 * A principal token that is not an Id hashes `:<token>:<key>` instead (see `identity`).
 */
export function ingressIds(principalId: string, idempotencyKey: string): IngressIds {
  const hash = hex32(identity(principalId, idempotencyKey));
  return { ingressId: `ing-${hash}`, newTaskId: `tsk-${hash}`, stepId: `stp-${hash}`, attemptId: `att-${hash}` };
}

/**
 * The entity (`writ.evt.ingress.iar-…`) on which a principal's action_request_id
 * is claimed by the first ingress that carries it: a replay under a new
 * idempotency key finds the claim taken and is refused.
 */
export function actionRequestClaimId(principalId: string, actionRequestId: string): string {
  return `iar-${hex32(identity(principalId, actionRequestId))}`;
}

/** Event id (an `Id`: no dots) and idempotency key of the event `type` this ingress appends to `entityId`'s stream. */
export function eventKeys(ingressId: string, type: string): { readonly eventId: string; readonly idempotencyKey: string } {
  return { eventId: `${ingressId}-${type.replaceAll('.', '_')}`, idempotencyKey: `${ingressId}:${type}` };
}
