import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter } from '@writ/bus';
import { parseContract, RenewCell, type RenewCellReply } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { RenewCellHandler } from '../application/renew-cell.handler.js';
import { EXECUTOR_LOGGER } from '../executor.tokens.js';

/**
 * `<root>.qry.executor.renew-cell` (request/reply over core NATS, queue group `executor`):
 * parse with the contract, let the handler verify and renew, reply. Any executor answers (a
 * renewal only appends to the cell's log; README → Cells). Refusals reply `{ code, message }`
 * (EXECUTOR_CELL_*, CELL_TRANSITION_INVALID, CELL_TTL_CAP_EXCEEDED, CELL_ACTIVE_TTL_EXPIRED;
 * EXECUTOR_NOT_READY when the log could not be reached).
 */
export function renewCellListener(subject: string): Type {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class RenewCellListener {
    constructor(
      @Inject(RenewCellHandler) private readonly handler: RenewCellHandler,
      @Inject(EXECUTOR_LOGGER) private readonly logger: Logger,
    ) {}

    @MessagePattern<string>(subject)
    async renew(@Payload() payload: unknown): Promise<RenewCellReply> {
      const request = parseContract('RenewCell', RenewCell, payload);
      try {
        const reply = await this.handler.renew(request);
        this.logger.info({ cell_id: reply.cell_id, status: reply.status, renewed_by: reply.renewed_by, active_expires_at: reply.active_expires_at }, 'cell active TTL renewed');
        return reply;
      } catch (error) {
        this.logger.warn({ err: error, cell_id: request.cell_id }, 'cell renewal refused');
        throw error;
      }
    }
  }
  return RenewCellListener;
}
