import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter } from '@writ/bus';
import { hasErrorCode, parseContract, ObserveWorkspace, type WorkspaceObserved } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { CellRouter } from '../application/cell-routing.js';
import { ExecutorError } from '../application/executor-errors.js';
import { ObserveWorkspaceHandler } from '../application/observe-workspace.handler.js';
import { EXECUTOR_LOGGER } from '../executor.tokens.js';

/** Codes an observation replies as they are; anything else is EXECUTOR_INTERNAL. */
const REPLIED_CODES = ['EXECUTOR_OBSERVE_UNSTABLE', 'EXECUTOR_CELL_HOST_UNAVAILABLE'] as const;

/**
 * `<root>.qry.executor.observe` (request/reply over core NATS, queue group `executor`):
 * parse with the contract (CONTRACT_INVALID is replied), observe, reply the fingerprints.
 * Whichever executor the queue group picks, the answer is the holder's: a task whose cell
 * another host holds is relayed to that host's `<root>.qry.executor.observe.host.<host_id>`
 * (`routed`), which answers from its own files (`routed: false`, no second relay).
 * Failures reply `{ code, message }`: EXECUTOR_OBSERVE_UNSTABLE, EXECUTOR_CELL_HOST_UNAVAILABLE
 * (the holder did not answer), or EXECUTOR_INTERNAL for anything untyped (a host path never
 * reaches the reply).
 */
export function observeListener(subject: string, options: { readonly routed: boolean }): Type {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class ObserveListener {
    constructor(
      @Inject(ObserveWorkspaceHandler) private readonly handler: ObserveWorkspaceHandler,
      @Inject(CellRouter) private readonly router: CellRouter,
      @Inject(EXECUTOR_LOGGER) private readonly logger: Logger,
    ) {}

    @MessagePattern<string>(subject)
    async observe(@Payload() payload: unknown): Promise<WorkspaceObserved> {
      const request = parseContract('ObserveWorkspace', ObserveWorkspace, payload);
      try {
        const local = (r: typeof request) => this.handler.observe(r);
        const reply = options.routed ? await this.router.observe(request, local) : await local(request);
        this.logger.info({ task_id: request.task_id, resources: request.resources.length }, 'workspace observed');
        return reply;
      } catch (error) {
        if (hasErrorCode(error, ...REPLIED_CODES)) throw error;
        this.logger.error({ err: error, task_id: request.task_id }, 'workspace observation failed');
        throw new ExecutorError('EXECUTOR_INTERNAL', `the workspace of task ${request.task_id} could not be observed`, { details: { task_id: request.task_id } });
      }
    }
  }
  return ObserveListener;
}
