import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { SubmitClaim, parseContract, type ClaimReply } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { SubmitClaimHandler, type ClaimKind } from '../application/submit-claim.handler.js';
import type { OrchestratorSubjects } from '../config.js';

/**
 * The claim requests (core NATS request/reply, docs/task-claims.md): parse
 * with the contract (CONTRACT_INVALID answered with every offending path) →
 * the handler → its reply; a refusal travels as `{ code, message }`.
 */
export function createClaimsListener(subjects: Pick<OrchestratorSubjects, 'claimDone' | 'claimBlocked' | 'claimCorrection'>, logger: Logger): Type {
  @Controller()
  class ClaimsListener {
    constructor(@Inject(SubmitClaimHandler) private readonly claims: SubmitClaimHandler) {}

    @MessagePattern<string>(subjects.claimDone)
    async claimDone(@Payload() body: unknown): Promise<ClaimReply> {
      return this.#submit('done', body);
    }

    @MessagePattern<string>(subjects.claimBlocked)
    async claimBlocked(@Payload() body: unknown): Promise<ClaimReply> {
      return this.#submit('blocked', body);
    }

    @MessagePattern<string>(subjects.claimCorrection)
    async claimCorrection(@Payload() body: unknown): Promise<ClaimReply> {
      return this.#submit('correction', body);
    }

    async #submit(kind: ClaimKind, body: unknown): Promise<ClaimReply> {
      const request = parseContract('SubmitClaim', SubmitClaim, body);
      const reply = await this.claims.submit(kind, request);
      logger.info({ task_id: reply.task_id, claim_id: reply.claim_id, kind, status: reply.status, codes: reply.refusals.map((r) => r.code) }, 'claim answered');
      return reply;
    }
  }
  return ClaimsListener;
}
