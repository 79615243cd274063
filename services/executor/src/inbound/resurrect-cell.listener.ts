import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter } from '@writ/bus';
import { parseContract, ResurrectCell, type ResurrectCellReply } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { ResurrectCellHandler } from '../application/resurrect-cell.handler.js';
import { EXECUTOR_LOGGER } from '../executor.tokens.js';

/**
 * `<root>.qry.executor.resurrect-cell` (request/reply over core NATS, queue group
 * `executor`): parse with the contract, let the handler verify and resurrect, reply.
 * Refusals reply `{ code, message }` (EXECUTOR_CELL_*, CELL_GRACE_EXPIRED,
 * CELL_TRANSITION_INVALID; EXECUTOR_NOT_READY when the log or Docker could not be reached).
 */
export function resurrectCellListener(subject: string): Type {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class ResurrectCellListener {
    constructor(
      @Inject(ResurrectCellHandler) private readonly handler: ResurrectCellHandler,
      @Inject(EXECUTOR_LOGGER) private readonly logger: Logger,
    ) {}

    @MessagePattern<string>(subject)
    async resurrect(@Payload() payload: unknown): Promise<ResurrectCellReply> {
      const request = parseContract('ResurrectCell', ResurrectCell, payload);
      try {
        const reply = await this.handler.resurrect(request);
        this.logger.info({ cell_id: reply.cell_id, restored_from: reply.restored_from, resurrected_by: reply.resurrected_by }, 'cell resurrected');
        return reply;
      } catch (error) {
        this.logger.warn({ err: error, cell_id: request.cell_id }, 'cell resurrection refused');
        throw error;
      }
    }
  }
  return ResurrectCellListener;
}
