import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
} from '@nats-io/jetstream';
import { headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  DEAD_LETTER_DELIVERIES,
  DEFAULTS,
  DeadLetterHeaders,
  MSG_ID_HEADER,
  classifierFromTable,
  decideAck,
  durableName,
  toHandlerFailure,
  type HandlerFailure,
  type RetrySettings,
} from '@writ/bus';
import { INGRESS_IDEMPOTENCY_KEY_HEADER } from '@writ/contracts';
import { METRICS, redactString, withConsumerSpan, writMetrics, type Logger } from '@writ/telemetry';
import type { ReceiveActionHandler } from '../application/receive-action.handler.js';
import { IngressError } from '../ingress-errors.js';

export interface IngressActionConsumerOptions {
  readonly serviceName: string;
  readonly stream: string;
  /** `<root>.ingress.action.*`: the last token is the principal the request comes from. */
  readonly pattern: string;
  readonly deadLetterSubject: string;
  readonly maxDeliver: number;
  readonly ackWaitMs: number;
  /** First retry delay of a failed message (`WRIT_BUS_BACKOFF_INITIAL_MS`), doubling up to the bus's cap; default the bus's. */
  readonly backoff?: { readonly initialMs: number };
  /** How long one pull waits on the server (`WRIT_BUS_PULL_EXPIRES_MS`); default the bus's (5 s). */
  readonly pullExpiresMs?: number;
}

const decoder = new TextDecoder();

/**
 * The durable consumer of `<root>.ingress.action.*`.
 *
 * Why not `@EventPattern` on `JetStreamServer`: the bus hands handlers the body
 * parsed as JSON and dead-letters anything else as BUS_PAYLOAD_INVALID before
 * the handler runs, but an agent's body is a compact JWS — not JSON — and
 * every inbound request must be recorded before it is judged (invariant 1).
 * So this consumer takes raw bytes, and otherwise behaves like the bus: one
 * durable named `<service>__<pattern token>` shared by every instance
 * (competing consumers), explicit ack confirmed by the server, `working()`
 * while the handler runs, the bus's ack table (`decideAck`: conflicts retry
 * soon, everything else backs off), `maxDeliver` then a dead letter with the
 * bus's `Writ-Dlq-*` headers, and a drain on shutdown.
 */
export class IngressActionConsumer {
  readonly durable: string;
  readonly #retry: RetrySettings;
  #js: JetStreamClient | undefined;
  #messages: ConsumerMessages | undefined;
  // Its own consumer, not the bus's: its dead letters are counted here, like the bus's (writ_dead_letters_total).
  readonly #deadLetters = writMetrics().counter(METRICS.deadLetters);
  #loop: Promise<void> | undefined;
  #stopping = false;
  #loopEnded = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly handler: ReceiveActionHandler,
    private readonly options: IngressActionConsumerOptions,
    private readonly log: Logger,
  ) {
    this.durable = durableName(options.serviceName, options.pattern);
    this.#retry = {
      maxDeliver: options.maxDeliver,
      backoff: { ...DEFAULTS.backoff, ...options.backoff },
      retrySoonDelayMs: DEFAULTS.retrySoonDelayMs,
      classify: classifierFromTable(),
    };
  }

  /** True once the durable is bound and pulling. */
  get bound(): boolean {
    return this.#messages !== undefined && !this.#stopping && !this.#loopEnded;
  }

  /** Creates (or aligns) the durable and starts pulling, one message at a time. */
  async start(): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const wanted = {
      description: `writ ${this.options.serviceName}: ${this.options.pattern} (raw signed ActionRequests)`,
      ack_wait: nanos(this.options.ackWaitMs),
      max_deliver: this.options.maxDeliver + DEAD_LETTER_DELIVERIES,
    };
    try {
      const existing = await jsm.consumers.info(this.options.stream, this.durable).catch((error: unknown) => {
        if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound) return undefined;
        throw error;
      });
      if (existing === undefined) {
        await jsm.consumers.add(this.options.stream, {
          ...wanted,
          durable_name: this.durable,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          filter_subject: this.options.pattern,
        });
      } else if (existing.config.filter_subject !== this.options.pattern || existing.config.ack_policy !== AckPolicy.Explicit) {
        throw new IngressError('INGRESS_SETUP_FAILED', `durable ${this.durable} exists with filter ${String(existing.config.filter_subject)}; expected ${this.options.pattern}`);
      } else if (existing.config.ack_wait !== wanted.ack_wait || existing.config.max_deliver !== wanted.max_deliver) {
        await jsm.consumers.update(this.options.stream, this.durable, wanted);
      }
      // The dead-letter subject must be captured, or a poison message could never be parked.
      const dlqStreams: string[] = [];
      for await (const name of jsm.streams.names(this.options.deadLetterSubject)) dlqStreams.push(name);
      if (dlqStreams.length !== 1) {
        throw new IngressError('INGRESS_SETUP_FAILED', `no single stream captures the dead-letter subject ${this.options.deadLetterSubject}`);
      }
    } catch (error) {
      if (error instanceof IngressError) throw error;
      throw new IngressError('INGRESS_SETUP_FAILED', `cannot bind durable ${this.durable} on ${this.options.stream}`, { cause: error });
    }
    this.#js = jetstream(this.nc);
    const consumer = await this.#js.consumers.get(this.options.stream, this.durable);
    // A pull that goes unanswered (one sent while a cluster still routes the durable's leader, replicas e2e)
    // is noticed after two missed heartbeats, half the pull's expiry each, and sent again: with the library's
    // 30 s the instance took nothing for half a minute while its sibling took every request.
    this.#messages = await consumer.consume({ max_messages: 1, expires: this.options.pullExpiresMs ?? DEFAULTS.pullExpiresMs });
    const messages = this.#messages;
    this.#loop = (async () => {
      try {
        for await (const message of messages) {
          if (this.#stopping) {
            message.nak();
            continue;
          }
          await this.process(message);
        }
      } catch (error) {
        this.log.error({ err: error, consumer: this.durable }, 'ingress consumer loop ended with an error');
      } finally {
        this.#loopEnded = true;
      }
    })();
    this.log.info({ consumer: this.durable, stream: this.options.stream, pattern: this.options.pattern }, 'ingress consumer bound');
  }

  /** Drain: stop pulling, let the message in hand finish and be acked, release anything else. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#messages?.close().catch(() => undefined);
    await this.#loop;
  }

  /** Never throws: every outcome ends in ack, nak or a dead letter. */
  private async process(message: JsMsg): Promise<void> {
    const deliveries = message.info.deliveryCount;
    if (deliveries > this.#retry.maxDeliver) {
      await this.deadLetter(message, { code: 'BUS_RETRIES_EXHAUSTED', message: `delivered ${deliveries} times; the last attempt did not finish` }, 'exhausted');
      return;
    }
    const heartbeat = setInterval(() => message.working(), Math.max(500, Math.floor(this.options.ackWaitMs / 2)));
    heartbeat.unref();
    let failure: HandlerFailure | undefined;
    try {
      const token = message.subject.slice(message.subject.lastIndexOf('.') + 1);
      const idempotencyKey = messageIdempotencyKey(message);
      // The span records a failure itself (redacted) and rethrows.
      const reply = await withConsumerSpan(message.headers, message.subject, () =>
        this.handler.receive({
          channel: 'nats',
          raw: decoder.decode(message.data),
          rawBytes: message.data.byteLength,
          subjectPrincipalId: token,
          idempotencyKey,
          storedAt: message.info.timestampNanos > 0n ? message.time : undefined,
        }),
      );
      this.log.debug({ ingress_id: reply.ingress_id, status: reply.status, reason_code: reply.reason_code, task_id: reply.task_id }, 'ingress handled');
    } catch (error) {
      failure = toHandlerFailure(error);
    } finally {
      clearInterval(heartbeat);
    }
    if (failure === undefined) {
      // Awaited, unlike the bus's acks: through `consume()`, an instance that did not wait took every
      // request and its sibling none (replicas e2e, 42 and 0), so the work was no longer shared.
      try {
        await message.ackAck();
      } catch (error) {
        this.log.warn({ err: error, seq: message.seq }, 'ack not confirmed; the message may be redelivered (ingress is idempotent)');
      }
      return;
    }
    const decision = decideAck(failure, deliveries, this.#retry);
    if (decision.action === 'retry') {
      this.log.warn({ code: failure.code, seq: message.seq, delayMs: decision.delayMs }, `ingress failed (${failure.code}); retrying`);
      message.nak(decision.delayMs);
      return;
    }
    await this.deadLetter(message, failure, decision.kind);
  }

  private async deadLetter(message: JsMsg, failure: HandlerFailure, kind: 'terminal' | 'exhausted'): Promise<void> {
    const headers = natsHeaders();
    for (const [name, values] of message.headers ?? []) {
      if (name.toLowerCase().startsWith('nats-')) continue;
      for (const value of values) headers.append(name, value);
    }
    const safe = (value: string) => redactString(value).replace(/[\r\n]+/g, ' ').slice(0, 1024);
    headers.set(DeadLetterHeaders.REASON, kind);
    headers.set(DeadLetterHeaders.ERROR_CODE, safe(failure.code));
    headers.set(DeadLetterHeaders.ERROR_MESSAGE, safe(failure.message));
    headers.set(DeadLetterHeaders.DELIVERY_COUNT, String(message.info.deliveryCount));
    headers.set(DeadLetterHeaders.SUBJECT, message.subject);
    headers.set(DeadLetterHeaders.STREAM, message.info.stream);
    headers.set(DeadLetterHeaders.STREAM_SEQ, String(message.info.streamSequence));
    headers.set(DeadLetterHeaders.CONSUMER, this.durable);
    headers.set(DeadLetterHeaders.SERVICE, this.options.serviceName);
    headers.set(DeadLetterHeaders.FAILED_AT, new Date().toISOString());
    const msgId = message.headers?.get(MSG_ID_HEADER);
    if (msgId !== undefined && msgId !== '') headers.set(DeadLetterHeaders.MSG_ID, safe(msgId));
    const js = this.#js ?? jetstream(this.nc);
    try {
      await js.publish(this.options.deadLetterSubject, message.data, {
        msgID: `dlq:${message.info.stream}:${message.info.streamSequence}:${this.durable}`,
        headers,
      });
    } catch (error) {
      this.log.error({ err: error, seq: message.seq }, 'dead letter could not be stored; keeping the message');
      message.nak(this.#retry.backoff.maxMs);
      return;
    }
    message.term();
    this.#deadLetters.add(1, { stream: message.info.stream, durable: this.durable, reason: failure.code });
    this.log.error({ code: failure.code, kind, seq: message.seq, deadLetterSubject: this.options.deadLetterSubject }, `ingress message dead-lettered (${kind}, ${failure.code})`);
  }
}

/**
 * The idempotency key an agent named: `Writ-Idempotency-Key`, else (older
 * clients) `Nats-Msg-Id`, else none (ingress falls back to the claimed
 * action_request_id). Either way ingress scopes it to the principal and binds
 * "duplicate" to the very bytes; only `Nats-Msg-Id` is also seen by
 * JetStream's stream-wide dedupe (see INGRESS_IDEMPOTENCY_KEY_HEADER).
 */
function messageIdempotencyKey(message: JsMsg): string | undefined {
  for (const header of [INGRESS_IDEMPOTENCY_KEY_HEADER, MSG_ID_HEADER]) {
    const value = message.headers?.get(header);
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}
