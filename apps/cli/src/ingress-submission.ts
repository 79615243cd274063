import { jetstream, type PubAck } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { INGRESS_IDEMPOTENCY_KEY_HEADER } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import type { EventStore } from '@writ/eventstore';

/**
 * Publishes a signed ActionRequest (compact JWS) to `<root>.ingress.action.<principal>`
 * as an agent should: the idempotency key in `Writ-Idempotency-Key`, never as
 * `Nats-Msg-Id`. JetStream dedupes msg ids across the whole ingress stream,
 * every principal's subject alike, so a msg id another principal published
 * first would make the stream drop this request; ingress dedupes by its own
 * record of (principal, key, bytes) instead.
 */
export function publishSignedAction(nc: NatsConnection, subject: string, jws: string, idempotencyKey: string): Promise<PubAck> {
  const h = headers();
  h.set(INGRESS_IDEMPOTENCY_KEY_HEADER, idempotencyKey);
  return jetstream(nc).publish(subject, jws, { headers: h });
}

const hex32 = (text: string): string => sha256Hex(text).slice(0, 32);

/**
 * The ids ingress derives for a request (docs/governed-path.md step 1): its
 * record `ing-` + SHA-256(`<raw_sha256>:<principal>:<key>`), and the task it
 * creates `tsk-` + SHA-256(`<principal>:<key>`) (first 32 hex each).
 */
export function ingressIdsOf(principalId: string, idempotencyKey: string, jws: string): { readonly ingress_id: string; readonly task_id: string } {
  const scoped = `${principalId}:${idempotencyKey}`;
  return { ingress_id: `ing-${hex32(`${sha256Hex(jws)}:${scoped}`)}`, task_id: `tsk-${hex32(scoped)}` };
}

/** Whether ingress already accepted a request of this id from this principal (its claim on `<events>.ingress.iar-…`). */
export async function actionRequestClaimed(store: EventStore, principalId: string, actionRequestId: string): Promise<boolean> {
  return (await store.headOfEntity('ingress', `iar-${hex32(`${principalId}:${actionRequestId}`)}`)).taskSeq > 0;
}
