import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RegisterPrincipal, RevokePrincipal, parseContract, type PrincipalRegistrationOutcome, type PrincipalRevocationOutcome } from '@writ/contracts';
import { RegisterPrincipalHandler } from '../application/register-principal.handler.js';

/**
 * `<root>.qry.ingress.register-principal` (core NATS request/reply; what
 * `writ principal add` sends): parse → handler → reply. A refusal replies
 * `{ code, message }` with header Writ-Error-Code (the bus's exception filter)
 * and nothing is appended.
 */
export function registerPrincipalListener(subjects: { readonly register: string; readonly revoke: string }): Type<unknown> {
  @Controller()
  class RegisterPrincipalListener {
    constructor(@Inject(RegisterPrincipalHandler) private readonly handler: RegisterPrincipalHandler) {}

    @MessagePattern<string>(subjects.register)
    register(@Payload() body: unknown): Promise<PrincipalRegistrationOutcome> {
      return this.handler.register(parseContract('RegisterPrincipal', RegisterPrincipal, body));
    }

    /** `<root>.qry.ingress.revoke-principal` (`writ principal revoke`). */
    @MessagePattern<string>(subjects.revoke)
    revoke(@Payload() body: unknown): Promise<PrincipalRevocationOutcome> {
      return this.handler.revoke(parseContract('RevokePrincipal', RevokePrincipal, body));
    }
  }
  return RegisterPrincipalListener;
}
