import { BaseRpcContext } from '@nestjs/microservices';
import type { JsMsg } from '@nats-io/jetstream';
import type { Msg, MsgHdrs } from '@nats-io/transport-node';

/** Header holding the idempotency key; JetStream dedupes on it inside its window. */
export const MSG_ID_HEADER = 'Nats-Msg-Id';

/** Header names → values, as read-only plain data (NATS headers are multi-valued). */
export type HeaderMap = Readonly<Record<string, readonly string[]>>;

function toHeaderMap(headers: MsgHdrs | undefined): HeaderMap {
  const out: Record<string, readonly string[]> = {};
  if (headers === undefined) return out;
  for (const [name, values] of headers) out[name] = [...values];
  return out;
}

function firstHeader(headers: HeaderMap, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [key, values] of Object.entries(headers)) {
    if (key.toLowerCase() === lower && values.length > 0) return values[0];
  }
  return undefined;
}

/**
 * What an `@EventPattern` handler gets from `@Ctx()`: where the message came
 * from and how often it has been delivered. The payload itself arrives parsed
 * (JSON) through `@Payload()`.
 *
 * `idempotencyKey` is the publisher's `Nats-Msg-Id`. JetStream dedupes on it
 * only inside the stream's duplicate window (and not reliably across a leader
 * change), so a handler with side effects must also be idempotent on a key
 * of its own — this one, or a business key in the payload (DESIGN.md, the log).
 */
export class JetStreamContext extends BaseRpcContext<[JsMsg]> {
  readonly subject: string;
  readonly headers: HeaderMap;
  /** 1 on first delivery; grows with every redelivery (nak, ack timeout, crash). */
  readonly deliveryCount: number;
  readonly redelivered: boolean;
  /** The message's sequence in its stream: unique per stream, a natural dedupe key. */
  readonly streamSequence: number;
  readonly stream: string;
  /** The durable consumer name (shared by every instance of the service). */
  readonly consumer: string;
  readonly idempotencyKey: string | undefined;
  /** When the message was stored. */
  readonly publishedAt: Date;

  constructor(message: JsMsg) {
    super([message]);
    this.subject = message.subject;
    this.headers = toHeaderMap(message.headers);
    this.deliveryCount = message.info.deliveryCount;
    this.redelivered = message.redelivered;
    this.streamSequence = message.info.streamSequence;
    this.stream = message.info.stream;
    this.consumer = message.info.consumer;
    this.idempotencyKey = firstHeader(this.headers, MSG_ID_HEADER);
    this.publishedAt = message.time;
  }

  /** First value of header `name` (case-insensitive). */
  header(name: string): string | undefined {
    return firstHeader(this.headers, name);
  }

  /** The raw JetStream message, for what this context does not cover. Do not ack it yourself. */
  getMessage(): JsMsg {
    return this.args[0];
  }
}

/** What a `@MessagePattern` handler (request/reply over core NATS) gets from `@Ctx()`. */
export class RequestContext extends BaseRpcContext<[Msg]> {
  readonly subject: string;
  readonly headers: HeaderMap;

  constructor(message: Msg) {
    super([message]);
    this.subject = message.subject;
    this.headers = toHeaderMap(message.headers);
  }

  header(name: string): string | undefined {
    return firstHeader(this.headers, name);
  }
}
