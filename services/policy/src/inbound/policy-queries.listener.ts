import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ApplyPolicyProfile, parseContract, type ApplyPolicyProfileReply } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { ApplyProfileHandler } from '../application/apply-profile.handler.js';

export const POLICY_LOGGER = Symbol.for('writ.policy.Logger');

/**
 * `<root>.qry.policy.apply-profile` (core NATS request/reply, queue group
 * `policy`), made per app because its subject comes from configuration:
 * parse with the contract (CONTRACT_INVALID replied) → handler → reply;
 * a refusal replies `{ code, message }` with header Writ-Error-Code. (The dry
 * run, a hot path, is served by `DryRunResponder`.)
 */
export function createPolicyQueriesListener(subjects: { readonly applyProfile: string }): Type {
  @Controller()
  class PolicyQueriesListener {
    constructor(
      @Inject(ApplyProfileHandler) private readonly applications: ApplyProfileHandler,
      @Inject(POLICY_LOGGER) private readonly log: Logger,
    ) {}

    @MessagePattern<string>(subjects.applyProfile)
    async applyProfile(@Payload() body: unknown): Promise<ApplyPolicyProfileReply> {
      const request = parseContract('ApplyPolicyProfile', ApplyPolicyProfile, body);
      try {
        const reply = await this.applications.apply(request);
        this.log.info({ ...reply }, 'policy profile application handled');
        return reply;
      } catch (error) {
        this.log.warn({ code: (error as { code?: unknown }).code, message: (error as Error).message }, 'policy profile application refused');
        throw error;
      }
    }
  }
  return PolicyQueriesListener;
}
