import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter, busOptions, JetStreamContext, type ConsumerOptions } from '@writ/bus';
import { parseContract } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { FORWARD_HOPS_HEADER, hopsOf } from '../application/cell-routing.js';
import { CloseCell } from '../application/close-cell.js';
import { CloseCellHandler } from '../application/close-cell.handler.js';
import { EXECUTOR_LOGGER } from '../executor.tokens.js';

/** On top of the bus defaults: an unreachable Docker is retried with backoff (the cell stays until it is reachable). */
export const CLOSE_CELL_ERROR_ACTIONS = Object.freeze({
  CONTRACT_INVALID: 'dead-letter',
  CELL_DOCKER_UNAVAILABLE: 'retry-backoff',
  EXECUTOR_CELL_ROUTE_LOOP: 'dead-letter',
} as const);

/**
 * The JetStream listener of `<root>.cmd.executor.close-cell` (competing consumers
 * on their own durable; and this host's own `….close-cell.host.<host_id>`): parse with
 * the local contract, close here or forward to the host holding the cell, ack.
 */
export function closeCellListener(subject: string, options: ConsumerOptions): Type {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class CloseCellListener {
    constructor(
      @Inject(CloseCellHandler) private readonly handler: CloseCellHandler,
      @Inject(EXECUTOR_LOGGER) private readonly logger: Logger,
    ) {}

    @EventPattern<string>(subject, busOptions({ ...options, errorActions: { ...CLOSE_CELL_ERROR_ACTIONS, ...options.errorActions } }))
    async onCloseCell(@Payload() payload: unknown, @Ctx() context: JetStreamContext): Promise<void> {
      const command = parseContract('CloseCell', CloseCell, payload);
      const outcome = await this.handler.handle(command, { hops: hopsOf(context.header(FORWARD_HOPS_HEADER)) });
      this.logger.debug({ ...outcome, reason: command.reason }, 'close-cell handled');
    }
  }
  return CloseCellListener;
}
