import type { Consumer, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { Span, Tracer } from '@opentelemetry/api';
import { MessagingAttributes, markSpanFailed, withConsumerSpan, type Logger } from '@writ/telemetry';
import { backoffDelay, decideAck, type DeadLetterKind } from './ack-policy.js';
import { JetStreamContext } from './bus-context.js';
import { BusError } from './bus-errors.js';
import type { ConsumerSettings } from './bus-options.js';
import type { QuarantineRecord } from '@writ/contracts';
import { buildDeadLetter, publishDeadLetter, quarantineOf } from './dead-letter.js';
import { toHandlerFailure, type HandlerFailure } from './handler-failure.js';
import { decodeJson } from './json-codec.js';

/** Reported after a letter is stored on the dead-letter subject (and the original terminated). */
export interface DeadLetterEvent {
  readonly deadLetterSubject: string;
  readonly kind: DeadLetterKind;
  readonly failure: HandlerFailure;
  readonly subject: string;
  readonly stream: string;
  readonly streamSequence: number;
  readonly deliveryCount: number;
  readonly consumer: string;
}

export interface DurableConsumerDeps {
  readonly settings: ConsumerSettings;
  readonly stream: string;
  /** The durable; pulled with bounded `fetch` requests. */
  readonly consumer: Consumer;
  readonly js: JetStreamClient;
  /** Runs the Nest handler and settles when its Promise/Observable does. */
  readonly invoke: (payload: unknown, context: JetStreamContext) => Promise<void>;
  readonly logger: Logger;
  readonly tracer: Tracer;
  readonly onDeadLetter: (event: DeadLetterEvent) => void;
  /** A message dead-lettered for what it is (not JSON, not its subject's contract): quarantined. */
  readonly onQuarantine: (record: QuarantineRecord) => void;
  readonly onError: (error: unknown) => void;
}

type Outcome = 'ack' | 'retry' | 'dead-letter' | 'released' | 'dead-letter-failed';

/**
 * The pull loop of one durable consumer in this process. It pulls at most
 * `pullBatch` messages ahead (by default `concurrency`: only as many as it
 * has free handler slots), with bounded `fetch` requests, hands them to at
 * most `concurrency` handlers at once in arrival order, and keeps every
 * message that waits for a slot its own (`working()`, as a running handler
 * does), so a wait never runs out its ack timer. A pull per message is a
 * round trip the server and this process each pay for; a serial consumer
 * that keeps up (the projection) asks for a batch ahead instead. Every
 * handler outcome turns into exactly one of
 * ack / nak(delay) / dead-letter+term. Nothing escapes the loop: each
 * message's processing catches its own failures, and `stop()` awaits the
 * loop, which awaits every in-flight handler.
 *
 * Why `fetch` and not `consume`: a pull request stays open on the server
 * until it expires, and a message the server sends just as a client drops its
 * subscription is stranded until `ack_wait` runs out. Here a stop lets the
 * open request run to its end (at most `pullExpiresMs`), so every message the
 * server hands us is seen: handled if it was started, released at once if not.
 */
export class DurableConsumer {
  private readonly inFlight = new Set<Promise<void>>();
  /** Pulled, waiting for a handler slot, in arrival order. */
  private readonly waiting: JsMsg[] = [];
  private stopping = false;
  private wake: (() => void) | undefined;
  /** Settles when the loop has ended and every in-flight message is settled. */
  readonly finished: Promise<void>;

  constructor(private readonly deps: DurableConsumerDeps) {
    this.finished = this.loop();
  }

  get durable(): string {
    return this.deps.settings.durable;
  }

  get pattern(): string {
    return this.deps.settings.pattern;
  }

  get stream(): string {
    return this.deps.stream;
  }

  /**
   * Graceful drain: stop pulling, release messages that arrive from the open
   * pull (nak without delay, so another instance takes them at once), let
   * in-flight handlers finish and ack, then return.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.finished;
  }

  private async loop(): Promise<void> {
    const { settings } = this.deps;
    const ahead = Math.max(settings.pullBatch, settings.concurrency);
    let failures = 0;
    // Messages waiting for a slot stay ours the way a running handler's does.
    const keepWaiting = setInterval(() => {
      for (const message of this.waiting) message.working();
    }, Math.max(500, Math.floor(settings.ackWaitMs / 2)));
    keepWaiting.unref();
    while (!this.stopping) {
      await this.waitForRoom(ahead);
      if (this.stopping) break;
      try {
        const batch = await this.deps.consumer.fetch({
          max_messages: ahead - this.inFlight.size - this.waiting.length,
          expires: settings.pullExpiresMs,
        });
        for await (const message of batch) {
          if (this.stopping) this.release(message);
          else {
            this.waiting.push(message);
            this.startWaiting();
          }
        }
        failures = 0;
      } catch (error) {
        // The stream or consumer went away, or the connection is down: report, back off, try again.
        failures += 1;
        this.deps.logger.error({ err: error, consumer: this.durable, failures }, 'pull failed; retrying');
        this.deps.onError(
          new BusError('BUS_PULL_FAILED', `pull from ${this.durable} failed (${failures} in a row)`, { cause: error, details: { consumer: this.durable } }),
        );
        await this.pause(backoffDelay(failures, settings.retry.backoff));
      }
    }
    for (const message of this.waiting.splice(0)) this.release(message);
    clearInterval(keepWaiting);
    await Promise.all(this.inFlight);
  }

  /** Starts waiting messages, oldest first, while handler slots are free. */
  private startWaiting(): void {
    while (this.inFlight.size < this.deps.settings.concurrency && this.waiting.length > 0) {
      const message = this.waiting.shift()!;
      if (this.stopping) {
        this.release(message);
        continue;
      }
      const task: Promise<void> = this.process(message).finally(() => {
        this.inFlight.delete(task);
        this.startWaiting();
      });
      this.inFlight.add(task);
    }
  }

  /** Until fewer than `ahead` messages are pulled and not yet handled. */
  private async waitForRoom(ahead: number): Promise<void> {
    while (this.inFlight.size + this.waiting.length >= ahead) {
      await Promise.race(this.inFlight);
    }
  }

  /** Waits `ms`, or less if `stop()` is called meanwhile. */
  private async pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.wake = undefined;
  }

  /** Log fields locating a message. */
  private where(message: JsMsg): Record<string, unknown> {
    return { consumer: this.durable, subject: message.subject, seq: message.seq, deliveryCount: message.info.deliveryCount };
  }

  private release(message: JsMsg): void {
    message.nak();
  }

  /** Never rejects. */
  private async process(message: JsMsg): Promise<void> {
    try {
      await withConsumerSpan(message.headers, message.subject, (span) => this.handle(message, span), {
        tracer: this.deps.tracer,
        attributes: {
          [MessagingAttributes.CONSUMER_GROUP]: this.durable,
          [MessagingAttributes.DELIVERY_COUNT]: message.info.deliveryCount,
          [MessagingAttributes.STREAM_SEQUENCE]: message.info.streamSequence,
          ...(message.headers?.has('Nats-Msg-Id') ? { [MessagingAttributes.MESSAGE_ID]: message.headers.get('Nats-Msg-Id') } : {}),
        },
      });
    } catch (error) {
      // Only a bug in the bus gets here; the message stays unacked and comes back after ack_wait.
      this.deps.logger.error({ err: error, consumer: this.durable, seq: message.seq }, 'message processing failed in the bus');
      this.deps.onError(error);
    }
  }

  private async handle(message: JsMsg, span: Span): Promise<void> {
    const outcome = await this.outcomeOf(message, span);
    span.setAttribute('writ.bus.outcome', outcome);
  }

  private async outcomeOf(message: JsMsg, span: Span): Promise<Outcome> {
    const { retry } = this.deps.settings;
    const deliveryCount = message.info.deliveryCount;
    if (deliveryCount > retry.maxDeliver) {
      // The last handled attempt never reported back (process crash, or the letter could not be stored).
      const failure = {
        code: 'BUS_RETRIES_EXHAUSTED',
        message: `delivered ${deliveryCount} times, more than maxDeliver ${retry.maxDeliver}; the last attempt did not finish`,
      };
      markSpanFailed(span, failure, failure.message);
      return this.deadLetter(message, failure, 'exhausted');
    }

    let payload: unknown = message.data;
    if (!this.deps.settings.rawPayload) {
      try {
        payload = decodeJson(message.data);
      } catch (error) {
        return this.fail(message, span, toHandlerFailure(error));
      }
    }

    // Keep the message ours while the handler runs, however long it takes.
    const heartbeat = setInterval(() => message.working(), Math.max(500, Math.floor(this.deps.settings.ackWaitMs / 2)));
    heartbeat.unref();
    let failure: HandlerFailure | undefined;
    try {
      await this.deps.invoke(payload, new JetStreamContext(message));
    } catch (error) {
      failure = toHandlerFailure(error);
    } finally {
      clearInterval(heartbeat);
    }
    if (failure !== undefined) return this.fail(message, span, failure);

    // Not awaited for the server's confirmation (ackAck): that is a round trip per message, and an ack lost
    // on the way only means a redelivery, which every handler absorbs (DESIGN: each consumer is idempotent
    // by its own key, not by the bus). The connection's drain at stop flushes the acks still buffered.
    message.ack();
    return 'ack';
  }

  private async fail(message: JsMsg, span: Span, failure: HandlerFailure): Promise<Outcome> {
    markSpanFailed(span, failure, failure.message);
    const decision = decideAck(failure, message.info.deliveryCount, this.deps.settings.retry);
    if (decision.action === 'retry') {
      this.deps.logger.warn(
        { ...this.where(message), code: failure.code, delayMs: decision.delayMs },
        `handler failed (${failure.code}): ${failure.message}; retrying`,
      );
      message.nak(decision.delayMs);
      return 'retry';
    }
    return this.deadLetter(message, failure, decision.kind);
  }

  private async deadLetter(message: JsMsg, failure: HandlerFailure, kind: DeadLetterKind): Promise<Outcome> {
    const { settings, stream } = this.deps;
    const letter = buildDeadLetter({
      deadLetterSubject: settings.deadLetterSubject,
      kind,
      failure,
      deliveryCount: message.info.deliveryCount,
      subject: message.subject,
      stream,
      streamSequence: message.info.streamSequence,
      consumer: settings.durable,
      service: settings.service,
      msgId: message.headers?.has('Nats-Msg-Id') ? message.headers.get('Nats-Msg-Id') : undefined,
      failedAt: new Date(),
      originalHeaders: message.headers ?? [],
    });
    try {
      await publishDeadLetter(this.deps.js, letter, message.data);
    } catch (error) {
      // Never drop a message whose letter is not stored: keep it and try again later.
      this.deps.logger.error(
        { err: error, consumer: this.durable, deadLetterSubject: letter.subject, seq: message.seq },
        'dead letter could not be stored; keeping the message',
      );
      message.nak(backoffDelay(message.info.deliveryCount, settings.retry.backoff));
      this.deps.onError(
        new BusError('BUS_DEAD_LETTER_FAILED', `dead letter for ${stream} #${message.info.streamSequence} not stored on ${letter.subject}`, {
          cause: error,
          details: { stream, streamSequence: message.info.streamSequence, deadLetterSubject: letter.subject },
        }),
      );
      return 'dead-letter-failed';
    }
    message.term();
    this.deps.logger.error(
      { ...this.where(message), code: failure.code, kind, deadLetterSubject: letter.subject },
      `message dead-lettered (${kind}, ${failure.code}): ${failure.message}`,
    );
    const quarantined = quarantineOf({ kind, failure, stream, subject: message.subject, streamSequence: message.info.streamSequence }, message.data);
    if (quarantined !== undefined) this.deps.onQuarantine(quarantined);
    this.deps.onDeadLetter({
      deadLetterSubject: letter.subject,
      kind,
      failure,
      subject: message.subject,
      stream,
      streamSequence: message.info.streamSequence,
      deliveryCount: message.info.deliveryCount,
      consumer: settings.durable,
    });
    return 'dead-letter';
  }
}
