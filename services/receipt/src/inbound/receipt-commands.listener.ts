import { Controller, Inject, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { busOptions, type JetStreamContext } from '@writ/bus';
import { IssueReceipt, hasErrorCode, parseContract } from '@writ/contracts';
import { TaskSerializer } from '@writ/runtime';
import { METRICS, writMetrics, type Logger } from '@writ/telemetry';
import { IssueReceiptHandler } from '../application/issue-receipt.handler.js';
import type { CommandOrigin } from '../application/ports.js';
import { ReceiptServiceError, TERMINAL_CODES } from '../application/receipt-errors.js';
import type { ReceiptSubjects } from '../config.js';

export const RECEIPT_LOGGER = Symbol('receipt.logger');

/** Codes that can never succeed on redelivery: dead-lettered at once with the reason. */
const ERROR_ACTIONS = Object.fromEntries(TERMINAL_CODES.map((code) => [code, 'dead-letter' as const]));

function originOf(ctx: JetStreamContext): CommandOrigin {
  return { commandId: ctx.idempotencyKey ?? `${ctx.stream}-${ctx.streamSequence}` };
}

/** Anything without a Writ code is a bug or an outage: typed before it reaches the bus (retried with backoff). */
function typed(error: unknown): never {
  if (hasErrorCode(error)) throw error;
  throw new ReceiptServiceError('RECEIPT_UNAVAILABLE', 'the command could not be handled now', { cause: error });
}

/**
 * The service's bus listener, made per subject set (subjects derive from the
 * configured root): parse with the contract (CONTRACT_INVALID → dead letter)
 * → application handler → ack.
 *
 * Up to `concurrency` commands (`WRIT_RECEIPT_CONCURRENCY`) are handled at
 * once: receipts of different tasks are independent (each task's chain is
 * guarded by its own stream sequence), while the commands of one task wait
 * for each other in arrival order (a second receipt of a task started
 * alongside the first would only lose the append guard and start over). The
 * transparency log orders leaves by the event stream's sequence, whatever
 * order the receipts were issued in.
 */
export function receiptCommandsListener(subjects: ReceiptSubjects, commandsStream: string, concurrency: number): Type {
  @Controller()
  class ReceiptCommandsListener {
    readonly #tasks = new TaskSerializer();
    readonly #issued = writMetrics().counter(METRICS.receiptsIssued);

    constructor(
      @Inject(IssueReceiptHandler) private readonly receipts: IssueReceiptHandler,
      @Inject(RECEIPT_LOGGER) private readonly log: Logger,
    ) {}

    @EventPattern<string>(subjects.issue, busOptions({ stream: commandsStream, deadLetterSubject: subjects.deadLetter('issue'), errorActions: ERROR_ACTIONS, concurrency }))
    async issue(@Payload() body: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
      const command = parseContract('IssueReceipt', IssueReceipt, body);
      const outcome = await this.#tasks.run(command.task_id, () => this.receipts.handle(command, originOf(ctx))).catch(typed);
      if (outcome.status === 'issued') this.#issued.add(1, { action_class: outcome.action_class, result: outcome.result, cause: outcome.cause });
      this.log.debug({ task_id: command.task_id, attempt_id: command.attempt_id, cause: command.cause, outcome }, 'receipt command handled');
    }
  }
  return ReceiptCommandsListener;
}
