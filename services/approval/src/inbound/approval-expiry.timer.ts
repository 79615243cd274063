import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type Consumer, type JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { backoffDelay, DeadLetterHeaders } from '@writ/bus';
import { ExpireApproval, hasErrorCode, parseContract } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import type { ExpireApprovalHandler } from '../application/expire-approval.handler.js';
import type { ExpiryScheduler } from '../application/ports.js';

/** What one delivery of a timer message came to (reported for logs and tests). */
export type TimerOutcomeKind =
  /** `approval.expired` appended. */
  | 'expired'
  /** Not pending any more: acknowledged, nothing appended. */
  | 'settled'
  /** Held on the server (nak with delay) until it is due or its hold runs out. */
  | 'deferred'
  /** Held as long as the commands stream allows: re-published as a fresh message and acknowledged. */
  | 'refreshed'
  /** The log or the bus failed: redelivered with backoff. */
  | 'retry'
  /** Can never succeed (not an ExpireApproval, or the approval is not in the log): dead-lettered. */
  | 'dead-lettered';

export interface TimerOutcome {
  readonly kind: TimerOutcomeKind;
  readonly approval_id: string | undefined;
  readonly task_id: string | undefined;
  /** For `deferred`: how long the server holds the message. */
  readonly delay_ms?: number;
  readonly code?: string;
}

export interface ExpiryTimerOptions {
  readonly nc: NatsConnection;
  readonly serviceName: string;
  /** The commands stream capturing `subject`. */
  readonly stream: string;
  /** `<root>.cmd.approval.expire`. */
  readonly subject: string;
  readonly durable: string;
  readonly deadLetterSubject: string;
  readonly handler: ExpireApprovalHandler;
  readonly scheduler: ExpiryScheduler;
  /** Longest a message is held on the server (from its publication) before it is re-published. */
  readonly refreshMs: number;
  readonly logger: Logger;
  /** How long one pull waits on the server (default 5 s): bounds a graceful stop. */
  readonly pullExpiresMs?: number;
  readonly onOutcome?: (outcome: TimerOutcome) => void;
}

/** Redelivery after a failure: 1 s, doubling, at most 60 s (the bus's defaults). */
const FAILURE_BACKOFF = { initialMs: 1_000, maxMs: 60_000, multiplier: 2 } as const;
/** A hold shorter than this is not worth a round trip: the message is re-published instead. */
const MIN_HOLD_MS = 1_000;
const ACK_WAIT_MS = 60_000;
const PULL_BATCH = 8;

/**
 * The approval expiry timer: a durable pull consumer of `<root>.cmd.approval.expire` whose
 * messages are held on the NATS server, not in this process, until they are due. Each
 * delivery folds the approval from the log (ExpireApprovalHandler): resolved → ack; due →
 * `approval.expired` → ack; not due → `nak(delay)` until `expires_at` (so a restart, a crash
 * or another instance changes nothing: the server redelivers the message when it is due).
 *
 * Messages of the commands stream live at most its max age (1 day), so a message is held at
 * most `refreshMs` after it was published (default 12 h); by then it is re-published as a new
 * message (msg id `<approval_id>:expire:<old stream seq>`) and the old one acknowledged. The
 * durable has no `max_deliver` (a hold is a delivery), so a timer is never dropped by the server;
 * failures are retried with backoff, and a message that can never succeed is dead-lettered.
 */
export class ExpiryTimer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  #stopping = false;
  #finished: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #bound = false;

  constructor(private readonly options: ExpiryTimerOptions) {}

  /** Nest starts the timer with the app (after the bus streams exist: the runtime ensured them). */
  onApplicationBootstrap(): Promise<void> {
    return this.start();
  }

  /** Before the bus drains and the connection closes. */
  beforeApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /** True once the durable is bound and the pull loop runs. */
  get bound(): boolean {
    return this.#bound && !this.#stopping;
  }

  async start(): Promise<void> {
    if (this.#finished !== undefined) return;
    const { nc, stream, durable, subject } = this.options;
    const jsm = await jetstreamManager(nc);
    const wanted = { ack_wait: ACK_WAIT_MS * 1_000_000, max_deliver: -1, description: 'Writ approval expiry timer: messages held (nak with delay) until the approval is due' };
    const existing = await jsm.consumers.info(stream, durable).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound) return undefined;
      throw error;
    });
    if (existing === undefined) {
      await jsm.consumers.add(stream, { ...wanted, durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: subject });
    } else if (existing.config.ack_wait !== wanted.ack_wait || existing.config.max_deliver !== wanted.max_deliver) {
      await jsm.consumers.update(stream, durable, wanted);
    }
    const consumer = await jetstream(nc).consumers.get(stream, durable);
    this.#bound = true;
    this.#finished = this.#loop(consumer);
  }

  /** Stops pulling; a message pulled but not started is released at once; the one in hand finishes. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#finished;
  }

  async #loop(consumer: Consumer): Promise<void> {
    let failures = 0;
    while (!this.#stopping) {
      try {
        const batch = await consumer.fetch({ max_messages: PULL_BATCH, expires: this.options.pullExpiresMs ?? 5_000 });
        for await (const message of batch) {
          if (this.#stopping) message.nak();
          else await this.#process(message);
        }
        failures = 0;
      } catch (error) {
        failures += 1;
        this.options.logger.error({ err: error, consumer: this.options.durable, failures }, 'expiry timer pull failed; retrying');
        await this.#pause(backoffDelay(failures, FAILURE_BACKOFF));
      }
    }
  }

  async #pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.#wake = undefined;
  }

  #report(outcome: TimerOutcome): void {
    const level = outcome.kind === 'retry' || outcome.kind === 'dead-lettered' ? 'warn' : 'debug';
    this.options.logger[level]({ ...outcome }, `approval expiry timer: ${outcome.kind}`);
    this.options.onOutcome?.(outcome);
  }

  /** Never rejects: every path ends in ack, nak(delay), or a dead letter and term. */
  async #process(message: JsMsg): Promise<void> {
    let command: ExpireApproval;
    try {
      command = parseContract('ExpireApproval', ExpireApproval, message.json());
    } catch (error) {
      await this.#deadLetter(message, hasErrorCode(error) ? error.code : 'CONTRACT_INVALID', error, undefined);
      return;
    }
    const where = { approval_id: command.approval_id, task_id: command.task_id };
    try {
      const msgId = message.headers?.get('Nats-Msg-Id');
      const outcome = await this.options.handler.handle(command, { commandId: msgId === undefined || msgId === '' ? `${this.options.stream}-${message.seq}` : msgId });
      if (outcome.kind !== 'not_due') {
        await message.ackAck();
        this.#report({ kind: outcome.kind, ...where });
        return;
      }
      const ageMs = Math.max(0, Date.now() - message.time.getTime());
      const holdLeftMs = this.options.refreshMs - ageMs;
      if (outcome.dueInMs <= holdLeftMs || holdLeftMs >= MIN_HOLD_MS) {
        const delay = Math.ceil(Math.min(outcome.dueInMs, holdLeftMs));
        message.nak(delay);
        this.#report({ kind: 'deferred', ...where, delay_ms: delay });
        return;
      }
      // Held as long as the stream allows: a fresh message carries the timer on (same id for a redelivery of this one).
      await this.options.scheduler.schedule(command, `${command.approval_id}:expire:${message.seq}`);
      await message.ackAck();
      this.#report({ kind: 'refreshed', ...where });
    } catch (error) {
      if (hasErrorCode(error, 'APPROVAL_NOT_FOUND') || hasErrorCode(error, 'KERNEL_COMMAND_INVALID')) {
        await this.#deadLetter(message, error.code, error, where);
        return;
      }
      message.nak(backoffDelay(message.info.deliveryCount, FAILURE_BACKOFF));
      this.#report({ kind: 'retry', ...where, code: hasErrorCode(error) ? error.code : 'APPROVAL_UNAVAILABLE' });
      this.options.logger.warn({ err: error, ...where }, 'approval expiry timer failed; retrying with backoff');
    }
  }

  async #deadLetter(message: JsMsg, code: string, error: unknown, where: { approval_id: string; task_id: string } | undefined): Promise<void> {
    const { stream, durable, serviceName, deadLetterSubject } = this.options;
    const headers = natsHeaders();
    const text = (error instanceof Error ? error.message : String(error)).replace(/[\r\n]+/g, ' ').slice(0, 1024);
    for (const [name, value] of [
      [DeadLetterHeaders.REASON, 'terminal'],
      [DeadLetterHeaders.ERROR_CODE, code],
      [DeadLetterHeaders.ERROR_MESSAGE, text],
      [DeadLetterHeaders.DELIVERY_COUNT, String(message.info.deliveryCount)],
      [DeadLetterHeaders.SUBJECT, message.subject],
      [DeadLetterHeaders.STREAM, stream],
      [DeadLetterHeaders.STREAM_SEQ, String(message.seq)],
      [DeadLetterHeaders.CONSUMER, durable],
      [DeadLetterHeaders.SERVICE, serviceName],
      [DeadLetterHeaders.FAILED_AT, new Date().toISOString()],
    ] as const) {
      headers.set(name, value);
    }
    try {
      await jetstream(this.options.nc).publish(deadLetterSubject, message.data, { msgID: `dlq:${stream}:${message.seq}:${durable}`, headers });
      message.term();
      this.#report({ kind: 'dead-lettered', approval_id: where?.approval_id, task_id: where?.task_id, code });
    } catch (publishError) {
      // Never drop a timer whose letter is not stored: keep it and try again later.
      message.nak(backoffDelay(message.info.deliveryCount, FAILURE_BACKOFF));
      this.options.logger.error({ err: publishError, consumer: durable, seq: message.seq }, 'expiry timer dead letter could not be stored; keeping the message');
    }
  }
}
