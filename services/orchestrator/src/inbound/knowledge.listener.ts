import { Controller, Inject, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { SubmitKnowledgeRequest, parseContract, type BeliefRequestReply, type WorkingStateRevisionReply } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { KnowledgeRequestHandler } from '../application/knowledge-request.handler.js';
import type { OrchestratorSubjects } from '../config.js';

/**
 * The knowledge requests (core NATS request/reply, issue 17): parse with the
 * contract (CONTRACT_INVALID answered with every offending path) → the
 * handler → its reply; a refusal travels as `{ code, message }` (header
 * Writ-Error-Code), the kernel's KNOWLEDGE_* codes as they are.
 */
export function createKnowledgeListener(subjects: Pick<OrchestratorSubjects, 'reviseWorkingState' | 'changeBelief'>, logger: Logger): Type {
  @Controller()
  class KnowledgeListener {
    constructor(@Inject(KnowledgeRequestHandler) private readonly knowledge: KnowledgeRequestHandler) {}

    @MessagePattern<string>(subjects.reviseWorkingState)
    async reviseWorkingState(@Payload() body: unknown): Promise<WorkingStateRevisionReply> {
      const reply = await this.knowledge.reviseWorkingState(parseContract('SubmitKnowledgeRequest', SubmitKnowledgeRequest, body));
      logger.info({ task_id: reply.task_id, request_id: reply.request_id, revision: reply.revision, duplicate: reply.duplicate }, 'working state revision accepted');
      return reply;
    }

    @MessagePattern<string>(subjects.changeBelief)
    async changeBelief(@Payload() body: unknown): Promise<BeliefRequestReply> {
      const reply = await this.knowledge.changeBelief(parseContract('SubmitKnowledgeRequest', SubmitKnowledgeRequest, body));
      logger.info({ task_id: reply.task_id, request_id: reply.request_id, op: reply.op, belief_id: reply.belief_id, duplicate: reply.duplicate }, 'belief change accepted');
      return reply;
    }
  }
  return KnowledgeListener;
}
