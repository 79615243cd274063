import { jetstream, type JetStreamClient, type PubAck } from '@nats-io/jetstream';
import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { trace } from '@opentelemetry/api';
import { injectTraceContext, MessagingAttributes, withProducerSpan } from '@writ/telemetry';
import { BusError, RemoteError } from './bus-errors.js';
import { decodeJson, encodeJson } from './json-codec.js';
import { connectBus } from './nats-credentials.js';
import { publishError, requestError } from './nats-errors.js';
import { ERROR_CODE_HEADER } from './request-responder.js';

export type { PubAck } from '@nats-io/jetstream';

export type HeaderValues = Readonly<Record<string, string | readonly string[]>>;

export interface PublishOptions {
  /**
   * Idempotency key, sent as `Nats-Msg-Id`: JetStream drops a second publish
   * with the same id inside the stream's duplicate window (the PubAck then
   * says `duplicate: true`). Required, so a retried publish never doubles work.
   */
  readonly msgId: string;
  /**
   * Optimistic concurrency on the subject: the publish is stored only if the
   * subject's last sequence is this one (0 = the subject is empty). A
   * mismatch fails with `BUS_PUBLISH_SEQUENCE_CONFLICT`.
   */
  readonly expectedLastSubjectSequence?: number;
  /** Extra headers (causation/correlation ids...). `Nats-*` and trace headers are set by the client. */
  readonly headers?: HeaderValues;
  /** Default: the client's `timeoutMs`. */
  readonly timeoutMs?: number;
}

export interface RequestOptions {
  readonly headers?: HeaderValues;
  readonly timeoutMs?: number;
}

export interface BusClientOptions {
  /** Publish-ack and request timeout, in ms (default 5 s). */
  readonly timeoutMs?: number;
  /** Drain and close the connection on `close()` (default false: the connection belongs to the caller). */
  readonly closeConnection?: boolean;
}

export interface BusClientConnectOptions extends BusClientOptions {
  /** Default: `NATS_URL` from the environment, else `nats://127.0.0.1:4223`. */
  readonly servers?: string | string[];
  /** Connection name shown by the server (e.g. the service name). */
  readonly name?: string;
}

const RESERVED_HEADER = /^(nats-|traceparent$|tracestate$|baggage$)/i;

function buildHeaders(extra: HeaderValues | undefined): MsgHdrs {
  const headers = natsHeaders();
  for (const [name, value] of Object.entries(extra ?? {})) {
    if (RESERVED_HEADER.test(name)) {
      throw new BusError('BUS_CONFIG_INVALID', `header ${name} is set by the bus; use the matching option instead`);
    }
    for (const item of typeof value === 'string' ? [value] : value) {
      if (/[\r\n]/.test(item)) throw new BusError('BUS_CONFIG_INVALID', `header ${name} holds a line break`);
      headers.append(name, item);
    }
  }
  return headers;
}

/**
 * Publishes commands and events through JetStream, and sends requests over
 * core NATS, with W3C trace context in the headers so that one action is one
 * trace across services. Provide it to Nest with a factory, e.g.
 * `{ provide: BusClient, useFactory: () => BusClient.connect({ name: 'ingress' }) }`.
 */
export class BusClient {
  private readonly js: JetStreamClient;
  private readonly timeoutMs: number;
  private readonly tracer = trace.getTracer('@writ/bus');
  private readonly ownsConnection: boolean;
  private closed = false;

  constructor(
    private readonly connection: NatsConnection,
    options: BusClientOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.ownsConnection = options.closeConnection ?? false;
    this.js = jetstream(connection, { timeout: this.timeoutMs });
  }

  /** Opens its own connection, which `close()` drains. */
  static async connect(options: Omit<BusClientConnectOptions, 'closeConnection'> = {}): Promise<BusClient> {
    const servers = options.servers ?? process.env['NATS_URL'] ?? 'nats://127.0.0.1:4223';
    let nc: NatsConnection;
    try {
      nc = await connectBus({ servers, ...(options.name === undefined ? {} : { name: options.name }) });
    } catch (cause) {
      throw new BusError('BUS_CONNECTION_FAILED', `cannot connect to NATS at ${String(servers)}`, { cause });
    }
    return new BusClient(nc, { ...options, closeConnection: true });
  }

  /**
   * Publishes `payload` as JSON to `subject` through JetStream and returns the
   * server's PubAck (stream, seq, duplicate) once the message is stored.
   */
  async publish(subject: string, payload: unknown, options: PublishOptions): Promise<PubAck> {
    this.assertOpen();
    if (typeof options.msgId !== 'string' || options.msgId === '' || /[\r\n]/.test(options.msgId)) {
      throw new BusError('BUS_CONFIG_INVALID', 'msgId must be a non-empty single-line string');
    }
    const body = encodeJson(payload);
    const headers = buildHeaders(options.headers);
    const expected = options.expectedLastSubjectSequence;
    return withProducerSpan(
      subject,
      async () => {
        injectTraceContext(headers);
        try {
          return await this.js.publish(subject, body, {
            msgID: options.msgId,
            headers,
            timeout: options.timeoutMs ?? this.timeoutMs,
            ...(expected === undefined ? {} : { expect: { lastSubjectSequence: expected } }),
          });
        } catch (error) {
          throw publishError(error, subject, expected);
        }
      },
      { tracer: this.tracer, attributes: { [MessagingAttributes.MESSAGE_ID]: options.msgId } },
    );
  }

  /**
   * Sends a request to a `@MessagePattern` handler and returns its JSON reply.
   * A handler failure comes back as a `RemoteError` carrying the handler's
   * own code (branch with `hasErrorCode(error, 'CONTRACT_INVALID')`).
   */
  async request<T = unknown>(subject: string, payload: unknown, options: RequestOptions = {}): Promise<T> {
    this.assertOpen();
    const body = encodeJson(payload);
    const headers = buildHeaders(options.headers);
    return withProducerSpan(
      subject,
      async () => {
        injectTraceContext(headers);
        let reply;
        try {
          reply = await this.connection.request(subject, body, { timeout: options.timeoutMs ?? this.timeoutMs, headers });
        } catch (error) {
          throw requestError(error, subject);
        }
        const errorCode = reply.headers?.get(ERROR_CODE_HEADER);
        if (errorCode !== undefined && errorCode !== '') {
          const remote = decodeJson(reply.data) as { code?: unknown; message?: unknown };
          throw new RemoteError(errorCode, typeof remote.message === 'string' ? remote.message : errorCode, { subject, remote: true });
        }
        return decodeJson(reply.data) as T;
      },
      { tracer: this.tracer },
    );
  }

  /** Flushes what was published; drains the connection if the client opened it. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.connection.isClosed()) return;
    if (this.ownsConnection) await this.connection.drain();
    else await this.connection.flush();
  }

  private assertOpen(): void {
    if (this.closed) throw new BusError('BUS_CLOSED', 'the bus client is closed');
  }
}
