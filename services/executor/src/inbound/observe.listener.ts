import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter } from '@writ/bus';
import { hasErrorCode, parseContract, ObserveWorkspace, type WorkspaceObserved } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { ExecutorError } from '../application/executor-errors.js';
import { ObserveWorkspaceHandler } from '../application/observe-workspace.handler.js';
import { EXECUTOR_LOGGER } from '../executor.tokens.js';

/**
 * `<root>.qry.executor.observe` (request/reply over core NATS, queue group `executor`):
 * parse with the contract (CONTRACT_INVALID is replied), observe, reply the fingerprints.
 * Failures reply `{ code, message }`: EXECUTOR_OBSERVE_UNSTABLE, or EXECUTOR_INTERNAL for
 * anything untyped (a host path never reaches the reply).
 */
export function observeListener(subject: string): Type {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class ObserveListener {
    constructor(
      @Inject(ObserveWorkspaceHandler) private readonly handler: ObserveWorkspaceHandler,
      @Inject(EXECUTOR_LOGGER) private readonly logger: Logger,
    ) {}

    @MessagePattern<string>(subject)
    async observe(@Payload() payload: unknown): Promise<WorkspaceObserved> {
      const request = parseContract('ObserveWorkspace', ObserveWorkspace, payload);
      try {
        const reply = await this.handler.observe(request);
        this.logger.info({ task_id: request.task_id, resources: request.resources.length }, 'workspace observed');
        return reply;
      } catch (error) {
        if (hasErrorCode(error, 'EXECUTOR_OBSERVE_UNSTABLE')) throw error;
        this.logger.error({ err: error, task_id: request.task_id }, 'workspace observation failed');
        throw new ExecutorError('EXECUTOR_INTERNAL', `the workspace of task ${request.task_id} could not be observed`, { details: { task_id: request.task_id } });
      }
    }
  }
  return ObserveListener;
}
