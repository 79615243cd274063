import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RegisterPrincipal, parseContract, type PrincipalRegistrationOutcome } from '@writ/contracts';
import { RegisterPrincipalHandler } from '../application/register-principal.handler.js';

/**
 * `<root>.qry.ingress.register-principal` (core NATS request/reply; what
 * `writ principal add` sends): parse → handler → reply. A refusal replies
 * `{ code, message }` with header Writ-Error-Code (the bus's exception filter)
 * and nothing is appended.
 */
export function registerPrincipalListener(subject: string): Type<unknown> {
  @Controller()
  class RegisterPrincipalListener {
    constructor(@Inject(RegisterPrincipalHandler) private readonly handler: RegisterPrincipalHandler) {}

    @MessagePattern<string>(subject)
    register(@Payload() body: unknown): Promise<PrincipalRegistrationOutcome> {
      return this.handler.register(parseContract('RegisterPrincipal', RegisterPrincipal, body));
    }
  }
  return RegisterPrincipalListener;
}
