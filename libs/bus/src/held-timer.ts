import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type Consumer, type JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@writ/telemetry';
import { backoffDelay } from './ack-policy.js';
import { DeadLetterHeaders, headerSafe } from './dead-letter.js';

/** What firing a due timer came to: done (any kind the job names), or not yet due. */
export type HeldTimerFiring<K extends string> = { readonly kind: K } | { readonly kind: 'not_due'; readonly dueInMs: number };

/** What one delivery of a timer message came to (logged, and reported to `onOutcome`). */
export type HeldTimerOutcomeKind<K extends string> =
  /** The job fired and reported this kind (e.g. `expired`, or `settled` when there was nothing left to do): acknowledged. */
  | K
  /** Held on the server (nak with delay) until it is due or its hold runs out. */
  | 'deferred'
  /** Held as long as the commands stream allows: re-published as a fresh message and acknowledged. */
  | 'refreshed'
  /** The log or the bus failed: redelivered with backoff. */
  | 'retry'
  /** Can never succeed (not a valid command, or what it names does not exist): dead-lettered. */
  | 'dead-lettered';

/** An outcome, with the labels of the command it was about (absent when the message did not parse). */
export type HeldTimerOutcome<K extends string, L extends object> = Partial<L> & {
  readonly kind: HeldTimerOutcomeKind<K>;
  /** For `deferred`: how long the server holds the message. */
  readonly delay_ms?: number;
  readonly code?: string;
};

/** What a timer does with its messages: the part each service writes. */
export interface HeldTimerJob<C, K extends string, L extends object> {
  /** For logs and the consumer description: `approval expiry`, `participant TTL`. */
  readonly name: string;
  /** Parses a message body; a throw dead-letters the message (with the error's code, else CONTRACT_INVALID). */
  parse(body: unknown): C;
  /** What the command is about, for logs and outcomes. */
  labels(command: C): L;
  /** Folds what the command names from the log and fires it if due. A throw is retried, unless `terminalCode` names it. */
  fire(command: C, origin: { readonly commandId: string }): Promise<HeldTimerFiring<K>>;
  /** Publishes the command again as a fresh message with this msg id (the hold ran out before it was due). */
  reschedule(command: C, msgId: string): Promise<void>;
  /** The msg id of the fresh message that carries a timer on from stream sequence `seq` (same for a redelivery of that one). */
  refreshMsgId(command: C, seq: number): string;
  /** The code of an error that can never succeed (dead-lettered), or undefined (retried with backoff). */
  terminalCode(error: unknown): string | undefined;
  /** The code reported for a retried error that carries none. */
  readonly unavailableCode: string;
}

export interface HeldTimerOptions<C, K extends string, L extends object> {
  readonly nc: NatsConnection;
  readonly serviceName: string;
  /** The commands stream capturing `subject`. */
  readonly stream: string;
  readonly subject: string;
  readonly durable: string;
  readonly deadLetterSubject: string;
  readonly job: HeldTimerJob<C, K, L>;
  /** Longest a message is held on the server (from its publication) before it is re-published: below the stream's max age. */
  readonly refreshMs: number;
  readonly logger: Logger;
  /** How long one pull waits on the server (default 5 s): bounds a graceful stop. */
  readonly pullExpiresMs?: number;
  readonly onOutcome?: (outcome: HeldTimerOutcome<K, L>) => void;
}

/** Redelivery after a failure: 1 s, doubling, at most 60 s (the bus's defaults). */
const FAILURE_BACKOFF = { initialMs: 1_000, maxMs: 60_000, multiplier: 2 } as const;
/** A hold shorter than this is not worth a round trip: the message is re-published instead. */
const MIN_HOLD_MS = 1_000;
const ACK_WAIT_MS = 60_000;
const PULL_BATCH = 8;

function errorCodeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A durable timer whose messages are held on the NATS server, not in this
 * process, until they are due: a pull consumer of one command subject where
 * each delivery asks the job to fire; done → ack; not due → `nak(delay)`
 * until it is (so a restart, a crash or another instance changes nothing:
 * the server redelivers the message when it is due, and the log decides
 * whether it still does anything).
 *
 * Messages of the commands stream live at most its max age, so a message is
 * held at most `refreshMs` after it was published; by then it is re-published
 * as a new message (`job.refreshMsgId`) and the old one acknowledged. The
 * durable has no `max_deliver` (a hold is a delivery), so a timer is never
 * dropped by the server; failures are retried with backoff, and a message
 * that can never succeed is dead-lettered (kept if its letter cannot be
 * stored).
 */
export class HeldTimer<C, K extends string, L extends object> {
  #stopping = false;
  #finished: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #bound = false;

  constructor(private readonly options: HeldTimerOptions<C, K, L>) {}

  /** True once the durable is bound and the pull loop runs. */
  get bound(): boolean {
    return this.#bound && !this.#stopping;
  }

  async start(): Promise<void> {
    if (this.#finished !== undefined) return;
    const { nc, stream, durable, subject, job } = this.options;
    const jsm = await jetstreamManager(nc);
    const wanted = { ack_wait: ACK_WAIT_MS * 1_000_000, max_deliver: -1, description: `Writ ${job.name} timer: messages held (nak with delay) until due` };
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
        this.options.logger.error({ err: error, consumer: this.options.durable, failures }, `${this.options.job.name} timer pull failed; retrying`);
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

  #report(outcome: HeldTimerOutcome<K, L>): void {
    const level = outcome.kind === 'retry' || outcome.kind === 'dead-lettered' ? 'warn' : 'debug';
    this.options.logger[level]({ ...outcome } as Record<string, unknown>, `${this.options.job.name} timer: ${String(outcome.kind)}`);
    this.options.onOutcome?.(outcome);
  }

  /** Never rejects: every path ends in ack, nak(delay), or a dead letter and term. */
  async #process(message: JsMsg): Promise<void> {
    const { job } = this.options;
    let command: C;
    try {
      command = job.parse(message.json());
    } catch (error) {
      await this.#deadLetter(message, errorCodeOf(error) ?? 'CONTRACT_INVALID', error, undefined);
      return;
    }
    const labels = job.labels(command);
    try {
      const msgId = message.headers?.get('Nats-Msg-Id');
      const fired = await job.fire(command, { commandId: msgId === undefined || msgId === '' ? `${this.options.stream}-${message.seq}` : msgId });
      if (fired.kind !== 'not_due') {
        await message.ackAck();
        this.#report({ ...labels, kind: fired.kind as K });
        return;
      }
      const dueInMs = (fired as { dueInMs: number }).dueInMs;
      const ageMs = Math.max(0, Date.now() - message.time.getTime());
      const holdLeftMs = this.options.refreshMs - ageMs;
      if (dueInMs <= holdLeftMs || holdLeftMs >= MIN_HOLD_MS) {
        const delay = Math.ceil(Math.min(dueInMs, holdLeftMs));
        message.nak(delay);
        this.#report({ ...labels, kind: 'deferred', delay_ms: delay });
        return;
      }
      // Held as long as the stream allows: a fresh message carries the timer on.
      await job.reschedule(command, job.refreshMsgId(command, message.seq));
      await message.ackAck();
      this.#report({ ...labels, kind: 'refreshed' });
    } catch (error) {
      const terminal = job.terminalCode(error);
      if (terminal !== undefined) {
        await this.#deadLetter(message, terminal, error, labels);
        return;
      }
      message.nak(backoffDelay(message.info.deliveryCount, FAILURE_BACKOFF));
      this.#report({ ...labels, kind: 'retry', code: errorCodeOf(error) ?? job.unavailableCode });
      this.options.logger.warn({ err: error, ...(labels as Record<string, unknown>) }, `${job.name} timer failed; retrying with backoff`);
    }
  }

  async #deadLetter(message: JsMsg, code: string, error: unknown, labels: L | undefined): Promise<void> {
    const { stream, durable, serviceName, deadLetterSubject } = this.options;
    const headers = natsHeaders();
    for (const [name, value] of [
      [DeadLetterHeaders.REASON, 'terminal'],
      [DeadLetterHeaders.ERROR_CODE, code],
      [DeadLetterHeaders.ERROR_MESSAGE, headerSafe(error instanceof Error ? error.message : String(error))],
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
      this.#report({ ...labels, kind: 'dead-lettered', code } as HeldTimerOutcome<K, L>);
    } catch (publishError) {
      // Never drop a timer whose letter is not stored: keep it and try again later.
      message.nak(backoffDelay(message.info.deliveryCount, FAILURE_BACKOFF));
      this.options.logger.error({ err: publishError, consumer: durable, seq: message.seq }, `${this.options.job.name} timer dead letter could not be stored; keeping the message`);
    }
  }
}
