import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter } from '@writ/bus';
import { ReceiveActionHandler, type IngressReply } from '../application/receive-action.handler.js';
import { submitAction } from './submit-action.js';

/**
 * The request/reply listener for `SubmitAction` (what `POST /v1/actions`
 * forwards), bound to `<root>.qry.ingress.submit-action`. Replies
 * `{ ingress_id, status, reason_code?, message?, action_request_id?, task_id? }`;
 * a malformed command replies `{ code: 'CONTRACT_INVALID', message }`.
 *
 * `BusExceptionFilter` is bound here, on the listener: in a hybrid app the
 * microservice's handlers are created when it is connected, before a global
 * filter could be added to it, and an app-wide one would also catch HTTP
 * errors (which it cannot answer).
 */
export function submitActionListener(subject: string): Type<unknown> {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class SubmitActionListener {
    constructor(@Inject(ReceiveActionHandler) private readonly handler: ReceiveActionHandler) {}

    @MessagePattern(subject)
    submit(@Payload() payload: unknown): Promise<IngressReply> {
      return submitAction(this.handler, payload);
    }
  }
  return SubmitActionListener;
}
