import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { SubmitIngressMessage, parseContract, type IngressMessageReply } from '@writ/contracts';
import { SubmitMessageHandler } from '../application/submit-message.handler.js';

/**
 * `<root>.qry.ingress.submit-message` (core NATS request/reply; what `writ
 * say` sends, and the projection forwards): parse → handler → reply. A
 * refusal replies `{ code, message }` with header Writ-Error-Code (the bus's
 * exception filter); a refusal before the record appends nothing.
 */
export function submitMessageListener(subject: string): Type<unknown> {
  @Controller()
  class SubmitMessageListener {
    constructor(@Inject(SubmitMessageHandler) private readonly handler: SubmitMessageHandler) {}

    @MessagePattern<string>(subject)
    submit(@Payload() body: unknown): Promise<IngressMessageReply> {
      return this.handler.submit(parseContract('SubmitIngressMessage', SubmitIngressMessage, body));
    }
  }
  return SubmitMessageListener;
}
