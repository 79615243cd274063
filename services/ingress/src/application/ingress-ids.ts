import { sha256Hex } from '@writ/crypto';

/** The ids one ingress derives everything from, so a redelivery or a crash half way finishes the same work. */
export interface IngressIds {
  /** The record of this one request (`writ.evt.ingress.<id>`): bound to its principal, key AND bytes. */
  readonly ingressId: string;
  /** Where the idempotency key is claimed for the first authenticated request that carries it (`idk-…`). */
  readonly keyClaimId: string;
  /** The task this ingress creates (`tsk-…`); a request naming `task_id` acts in that task instead. */
  readonly newTaskId: string;
  readonly stepId: string;
  readonly attemptId: string;
}

const hex32 = (text: string): string => sha256Hex(text).slice(0, 32);
const ID = /^[A-Za-z0-9_-]{1,128}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

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
 * The ids of one inbound request (docs/governed-path.md step 1):
 *
 * - `ingress_id` = `ing-` + the first 32 hex of SHA-256(`<raw_sha256>:<principal_id>:<key>`):
 *   the record of exactly these bytes under this principal and key. Another body
 *   under the same key is another record, so a request that fails authentication
 *   (a squatter naming someone else's key) never occupies the record of the
 *   genuine one, and "duplicate" is only ever answered for the same bytes.
 * - the key claim, task, step and attempt share the hash of `<principal_id>:<key>`
 *   (`idk-`, `tsk-`, `stp-`, `att-`): the key belongs to the first authenticated
 *   request carrying it, and that request's task id is what a client can derive.
 *
 * A principal token that is not an Id hashes `:<token>:<key>` instead (see `identity`).
 */
export function ingressIds(principalId: string, idempotencyKey: string, rawSha256: string): IngressIds {
  if (!SHA256_HEX.test(rawSha256)) throw new TypeError('rawSha256 must be 64 lowercase hex digits');
  const scoped = identity(principalId, idempotencyKey);
  const key = hex32(scoped);
  return { ingressId: `ing-${hex32(`${rawSha256}:${scoped}`)}`, keyClaimId: `idk-${key}`, newTaskId: `tsk-${key}`, stepId: `stp-${key}`, attemptId: `att-${key}` };
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
