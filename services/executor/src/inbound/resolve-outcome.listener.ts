import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter } from '@writ/bus';
import { parseContract, ResolveOutcome, type ResolveOutcomeReply } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { ResolveOutcomeHandler } from '../application/resolve-outcome.handler.js';
import { EXECUTOR_LOGGER } from '../executor.tokens.js';

/**
 * `<root>.qry.executor.resolve-outcome` (request/reply over core NATS, queue group
 * `executor`): parse with the contract, let the handler verify and append
 * `execution.outcome_resolved`, reply. Refusals reply `{ code, message }`
 * (EXECUTOR_RESOLUTION_*, EXECUTOR_EXECUTION_NOT_FOUND, EXECUTOR_OUTCOME_NOT_UNKNOWN;
 * EXECUTOR_NOT_READY when the log could not be read or written).
 */
export function resolveOutcomeListener(subject: string): Type {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class ResolveOutcomeListener {
    constructor(
      @Inject(ResolveOutcomeHandler) private readonly handler: ResolveOutcomeHandler,
      @Inject(EXECUTOR_LOGGER) private readonly logger: Logger,
    ) {}

    @MessagePattern<string>(subject)
    async resolve(@Payload() payload: unknown): Promise<ResolveOutcomeReply> {
      const request = parseContract('ResolveOutcome', ResolveOutcome, payload);
      try {
        const reply = await this.handler.resolve(request);
        this.logger.info({ task_id: request.task_id, attempt_id: request.attempt_id, status: reply.status, outcome: reply.outcome, resolved_by: reply.resolved_by }, 'unknown outcome resolved');
        return reply;
      } catch (error) {
        this.logger.warn({ err: error, task_id: request.task_id, attempt_id: request.attempt_id }, 'outcome resolution refused');
        throw error;
      }
    }
  }
  return ResolveOutcomeListener;
}
