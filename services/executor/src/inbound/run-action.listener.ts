import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter, busOptions, type ConsumerOptions } from '@writ/bus';
import { parseContract, RunAction } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { RunActionHandler } from '../application/run-action.handler.js';
import { EXECUTOR_LOGGER } from '../executor.tokens.js';

/**
 * The executor's one ack table (STYLE.md, Errors), on top of the bus defaults
 * (CONTRACT_INVALID → dead-letter at once, EVENTSTORE_CONFLICT → retry soon,
 * anything else → retry with backoff, then dead-letter):
 * - a missing cell image or an unreachable Docker is retried with backoff: nothing
 *   was claimed, another executor (or this one, fixed) takes it;
 * - a completion that could not be recorded is retried: the redelivery finds the
 *   claim without completion and records the outcome as unknown, never re-runs.
 */
export const RUN_ACTION_ERROR_ACTIONS = Object.freeze({
  CONTRACT_INVALID: 'dead-letter',
  EVENTSTORE_CONFLICT: 'retry-soon',
  CELL_IMAGE_MISSING: 'retry-backoff',
  CELL_DOCKER_UNAVAILABLE: 'retry-backoff',
  EXECUTOR_NOT_READY: 'retry-backoff',
  EXECUTOR_COMPLETION_NOT_RECORDED: 'retry-backoff',
} as const);

/**
 * The JetStream listener of `<root>.cmd.executor.run`: parse the RunAction with
 * its contract, hand it to the handler, and let the bus ack (the handler
 * resolved), retry or dead-letter (it threw; see `RUN_ACTION_ERROR_ACTIONS`).
 * Made per subject, because the subject root comes from config.
 */
export function runActionListener(subject: string, options: ConsumerOptions): Type {
  // The bus's filter on the listener itself: without it Nest replaces every handler error and
  // the ack table loses the codes. (Not global: on the HTTP side it would swallow responses.)
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class RunActionListener {
    constructor(
      @Inject(RunActionHandler) private readonly handler: RunActionHandler,
      @Inject(EXECUTOR_LOGGER) private readonly logger: Logger,
    ) {}

    @EventPattern<string>(subject, busOptions({ ...options, errorActions: { ...RUN_ACTION_ERROR_ACTIONS, ...options.errorActions } }))
    async onRunAction(@Payload() payload: unknown): Promise<void> {
      const command = parseContract('RunAction', RunAction, payload);
      const outcome = await this.handler.handle(command);
      this.logger.info({ task_id: command.task_id, attempt_id: command.attempt_id, grant_id: command.grant_id, ...outcome }, 'run-action handled');
    }
  }
  return RunActionListener;
}
