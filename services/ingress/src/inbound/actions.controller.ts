import { Body, Controller, Headers, HttpStatus, Inject, Post, Res } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import { hasErrorCode } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { peekCompactJws } from '../application/compact-jws.js';
import { ReceiveActionHandler, type IngressReply } from '../application/receive-action.handler.js';
import { submitAction } from './submit-action.js';

interface StatusResponse {
  status(code: number): unknown;
}

type ErrorBody = { code: string; message: string };

const STATUS: Readonly<Record<IngressReply['status'], number>> = {
  accepted: HttpStatus.ACCEPTED,
  duplicate: HttpStatus.OK,
  rejected: HttpStatus.UNPROCESSABLE_ENTITY,
};

/**
 * `POST /v1/actions` served by ingress itself (the projection's public
 * endpoint forwards to the same handler over NATS). The body is the compact
 * JWS as an agent publishes it (`application/jose` or `text/plain`), with the
 * idempotency key in `Idempotency-Key` (default: the claimed
 * action_request_id) and optionally `Writ-Principal`; or a `SubmitAction` JSON document.
 * 202 accepted, 200 duplicate (the same bytes again), 422 rejected (body: the
 * reply with its reason_code; 409 for INGRESS_IDEMPOTENCY_CONFLICT, the key
 * held by another request), 400 `{ code: CONTRACT_INVALID }`, 503 on
 * infrastructure failure.
 */
@PublicRoute()
@Controller('v1/actions')
export class ActionsController {
  constructor(@Inject(ReceiveActionHandler) private readonly handler: ReceiveActionHandler) {}

  @Post()
  async submit(
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Headers('writ-principal') principalId: string | undefined,
    @Res({ passthrough: true }) res: StatusResponse,
  ): Promise<IngressReply | ErrorBody> {
    const payload =
      typeof body === 'string'
        ? {
            jws: body.trim(),
            idempotency_key: idempotencyKey ?? defaultKey(body.trim()),
            ...(principalId === undefined ? {} : { principal_id: principalId }),
          }
        : body;
    try {
      const reply = await submitAction(this.handler, payload);
      // A key held by other bytes is a conflict, as the projection's public endpoint maps it.
      res.status(reply.reason_code === 'INGRESS_IDEMPOTENCY_CONFLICT' ? HttpStatus.CONFLICT : STATUS[reply.status]);
      return reply;
    } catch (error) {
      const code = hasErrorCode(error) ? error.code : 'INGRESS_UNAVAILABLE';
      res.status(code === 'CONTRACT_INVALID' ? HttpStatus.BAD_REQUEST : HttpStatus.SERVICE_UNAVAILABLE);
      return { code, message: code === 'CONTRACT_INVALID' && error instanceof Error ? error.message : 'ingress could not record the request; retry with the same Idempotency-Key' };
    }
  }
}

/** Without an explicit key, the claimed action_request_id is the key (as for NATS without Nats-Msg-Id), else the body's digest. */
function defaultKey(jws: string): string {
  return peekCompactJws(jws).actionRequestId ?? `sha256:${sha256Hex(jws)}`;
}
