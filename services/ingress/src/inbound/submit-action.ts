import { SubmitAction, hasErrorCode, parseContract } from '@writ/contracts';
import { z } from 'zod';
import type { IngressReply, ReceiveActionHandler } from '../application/receive-action.handler.js';

/**
 * `SubmitAction` with the JWS size left to ingress: a request that is too
 * large is still recorded (`ingress.received`) and then refused as
 * INGRESS_TOO_LARGE, never dropped at parse time (invariant 1).
 */
const SubmitActionEnvelope = SubmitAction.extend({ jws: z.string().min(1) });

/** A lost race re-reads and re-decides; request/reply has no redelivery, so the adapter retries here (bounded). */
const CONFLICT_RETRIES = 5;

/**
 * One `SubmitAction` (request/reply or HTTP): parse (CONTRACT_INVALID lists
 * every offending path) → handle, retrying sequence conflicts.
 */
export async function submitAction(handler: ReceiveActionHandler, payload: unknown): Promise<IngressReply> {
  const command = parseContract('SubmitAction', SubmitActionEnvelope, payload);
  for (let attempt = 1; ; attempt++) {
    try {
      return await handler.receive({
        channel: 'http',
        raw: command.jws,
        rawBytes: Buffer.byteLength(command.jws, 'utf8'),
        claimedPrincipalId: command.principal_id,
        idempotencyKey: command.idempotency_key,
      });
    } catch (error) {
      if (!hasErrorCode(error, 'EVENTSTORE_CONFLICT') || attempt >= CONFLICT_RETRIES) throw error;
    }
  }
}
