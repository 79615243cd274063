import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { HeldTimer, type HeldTimerJob, type HeldTimerOptions, type HeldTimerOutcome } from '@writ/bus';
import { ExpireApproval, hasErrorCode, parseContract } from '@writ/contracts';
import type { ExpireApprovalHandler } from '../application/expire-approval.handler.js';
import type { ExpiryScheduler } from '../application/ports.js';

/** What one delivery of a timer message came to: `expired` (appended), `settled` (not pending any more), or how it was held, retried or dead-lettered. */
export type TimerOutcome = HeldTimerOutcome<'expired' | 'settled', { approval_id: string; task_id: string }>;

/** The held timer's options, its job made from the expiry handler and scheduler. */
export interface ExpiryTimerOptions extends Omit<HeldTimerOptions<ExpireApproval, 'expired' | 'settled', { approval_id: string; task_id: string }>, 'job'> {
  readonly handler: ExpireApprovalHandler;
  readonly scheduler: ExpiryScheduler;
}

function approvalExpiryJob(handler: ExpireApprovalHandler, scheduler: ExpiryScheduler): HeldTimerJob<ExpireApproval, 'expired' | 'settled', { approval_id: string; task_id: string }> {
  return {
    name: 'approval expiry',
    parse: (body) => parseContract('ExpireApproval', ExpireApproval, body),
    labels: (command) => ({ approval_id: command.approval_id, task_id: command.task_id }),
    fire: (command, origin) => handler.handle(command, origin),
    reschedule: (command, msgId) => scheduler.schedule(command, msgId),
    refreshMsgId: (command, seq) => `${command.approval_id}:expire:${seq}`,
    terminalCode: (error) => (hasErrorCode(error, 'APPROVAL_NOT_FOUND') || hasErrorCode(error, 'KERNEL_COMMAND_INVALID') ? error.code : undefined),
    unavailableCode: 'APPROVAL_UNAVAILABLE',
  };
}

/**
 * The approval expiry timer (`<root>.cmd.approval.expire`), held on the NATS
 * server until due (`HeldTimer` in @writ/bus): each delivery folds the
 * approval from the log (ExpireApprovalHandler): resolved → ack; due →
 * `approval.expired` → ack; not due → held until `expires_at`. A refreshed
 * timer is re-published with msg id `<approval_id>:expire:<old stream seq>`.
 */
export class ExpiryTimer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly #timer: HeldTimer<ExpireApproval, 'expired' | 'settled', { approval_id: string; task_id: string }>;

  constructor(options: ExpiryTimerOptions) {
    const { handler, scheduler, ...rest } = options;
    this.#timer = new HeldTimer({ ...rest, job: approvalExpiryJob(handler, scheduler) });
  }

  /** Nest starts the timer with the app (after the bus streams exist: the runtime ensured them). */
  onApplicationBootstrap(): Promise<void> {
    return this.#timer.start();
  }

  /** Before the bus drains and the connection closes. */
  beforeApplicationShutdown(): Promise<void> {
    return this.#timer.stop();
  }

  /** True once the durable is bound and the pull loop runs. */
  get bound(): boolean {
    return this.#timer.bound;
  }

  start(): Promise<void> {
    return this.#timer.start();
  }

  stop(): Promise<void> {
    return this.#timer.stop();
  }
}
