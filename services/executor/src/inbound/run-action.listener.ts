import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter, busOptions, JetStreamContext, type ConsumerOptions } from '@writ/bus';
import { parseContract, RunAction } from '@writ/contracts';
import { METRICS, writMetrics, type Logger } from '@writ/telemetry';
import { FORWARD_HOPS_HEADER, hopsOf } from '../application/cell-routing.js';
import { RunActionHandler, type RunActionOutcome } from '../application/run-action.handler.js';
import { EXECUTOR_LOGGER } from '../executor.tokens.js';

/**
 * The executor's one ack table (STYLE.md, Errors), on top of the bus defaults
 * (CONTRACT_INVALID → dead-letter at once, EVENTSTORE_CONFLICT → retry soon,
 * anything else → retry with backoff, then dead-letter):
 * - a missing cell image or an unreachable Docker is retried with backoff: nothing
 *   was claimed, another executor (or this one, fixed) takes it;
 * - a completion that could not be recorded is retried: the redelivery finds the
 *   claim without completion and records the outcome as unknown, never re-runs;
 * - the host holding the task's cell stopped beating: nothing was claimed; retried with
 *   backoff (it may beat again, or a sweep marks the cell DOWNED and recovery applies),
 *   then dead-lettered with EXECUTOR_CELL_HOST_UNAVAILABLE;
 * - a command forwarded between hosts too often is dead-lettered at once.
 */
export const RUN_ACTION_ERROR_ACTIONS = Object.freeze({
  CONTRACT_INVALID: 'dead-letter',
  EVENTSTORE_CONFLICT: 'retry-soon',
  CELL_IMAGE_MISSING: 'retry-backoff',
  CELL_DOCKER_UNAVAILABLE: 'retry-backoff',
  EXECUTOR_NOT_READY: 'retry-backoff',
  EXECUTOR_COMPLETION_NOT_RECORDED: 'retry-backoff',
  EXECUTOR_CELL_HOST_UNAVAILABLE: 'retry-backoff',
  EXECUTOR_CELL_ROUTE_LOOP: 'dead-letter',
} as const);

/**
 * The JetStream listener of `<root>.cmd.executor.run` (and of this host's own
 * `<root>.cmd.executor.run.host.<host_id>`): parse the RunAction with its contract,
 * hand it to the handler, and let the bus ack (the handler resolved: it ran, was
 * settled, or was forwarded and stored on the holder's subject), retry or dead-letter
 * (it threw; see `RUN_ACTION_ERROR_ACTIONS`). Made per subject, because the subject
 * root and the host id come from config.
 */
export function runActionListener(subject: string, options: ConsumerOptions): Type {
  // The bus's filter on the listener itself: without it Nest replaces every handler error and
  // the ack table loses the codes. (Not global: on the HTTP side it would swallow responses.)
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class RunActionListener {
    readonly #metrics = executionMetrics();

    constructor(
      @Inject(RunActionHandler) private readonly handler: RunActionHandler,
      @Inject(EXECUTOR_LOGGER) private readonly logger: Logger,
    ) {}

    @EventPattern<string>(subject, busOptions({ ...options, errorActions: { ...RUN_ACTION_ERROR_ACTIONS, ...options.errorActions } }))
    async onRunAction(@Payload() payload: unknown, @Ctx() context: JetStreamContext): Promise<void> {
      const command = parseContract('RunAction', RunAction, payload);
      const outcome = await this.handler.handle(command, { hops: hopsOf(context.header(FORWARD_HOPS_HEADER)) });
      this.#metrics(command.action_request.action_class, outcome);
      this.logger.debug({ task_id: command.task_id, attempt_id: command.attempt_id, grant_id: command.grant_id, ...outcome }, 'run-action handled');
    }
  }
  return RunActionListener;
}

/**
 * What one handled delivery adds to the executor's figures: a use run to its
 * recorded end (executed, or recorded unknown after a crash), its outcome and
 * duration, an unknown outcome, a refusal by reason. A redelivery that finds
 * the work done (`already-done`) and a forwarded command add nothing.
 */
export function executionMetrics(): (actionClass: string, outcome: RunActionOutcome) => void {
  const metrics = writMetrics();
  const executions = metrics.counter(METRICS.executions);
  const duration = metrics.histogram(METRICS.executionDuration);
  const unknown = metrics.counter(METRICS.unknownOutcomes);
  const uses = metrics.counter(METRICS.grantUses);
  const refused = metrics.counter(METRICS.grantsRefused);
  return (actionClass, outcome) => {
    if (outcome.status === 'refused') refused.add(1, { reason: outcome.code });
    if (outcome.status !== 'executed' && outcome.status !== 'unknown-recorded') return;
    const result = outcome.status === 'executed' ? outcome.outcome : 'unknown';
    uses.add(1, { action_class: actionClass });
    executions.add(1, { action_class: actionClass, outcome: result });
    if (outcome.status === 'executed') duration.record(outcome.duration_ms / 1000, { action_class: actionClass, outcome: result });
    if (result === 'unknown') unknown.add(1, { action_class: actionClass });
  };
}
