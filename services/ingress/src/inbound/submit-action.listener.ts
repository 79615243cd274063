import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ReceiveActionHandler, type IngressReply } from '../application/receive-action.handler.js';
import { submitAction } from './submit-action.js';

/**
 * The request/reply listener for `SubmitAction` (what `POST /v1/actions`
 * forwards), bound to `<root>.qry.ingress.submit-action`. Replies
 * `{ ingress_id, status, reason_code?, message?, action_request_id?, task_id? }`;
 * a malformed command replies `{ code: 'CONTRACT_INVALID', message }` (the
 * bus's exception filter is on the microservice: `startServiceApp`).
 */
export function submitActionListener(subject: string): Type<unknown> {
  @Controller()
  class SubmitActionListener {
    constructor(@Inject(ReceiveActionHandler) private readonly handler: ReceiveActionHandler) {}

    @MessagePattern(subject)
    submit(@Payload() payload: unknown): Promise<IngressReply> {
      return submitAction(this.handler, payload);
    }
  }
  return SubmitActionListener;
}
