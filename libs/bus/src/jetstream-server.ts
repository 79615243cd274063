import { EventEmitter } from 'node:events';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  JetStreamApiCodes,
  JetStreamApiError,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { Server, type CustomTransportStrategy, type MessageHandler } from '@nestjs/microservices';
import { trace, type Tracer } from '@opentelemetry/api';
import type { QuarantineRecord } from '@writ/contracts';
import { createLogger, serviceTracer, type Logger } from '@writ/telemetry';
import { lastValueFrom } from 'rxjs';
import type { JetStreamContext, RequestContext } from './bus-context.js';
import { BusError } from './bus-errors.js';
import { SERVICE_CONNECTION, connectBus, connectConsumerBus } from './nats-credentials.js';
import {
  DEAD_LETTER_DELIVERIES,
  readHandlerOptions,
  resolveConsumerSettings,
  type ConsumerSettings,
  type JetStreamServerOptions,
} from './bus-options.js';
import { assertServiceName, assertSubjectFilter } from './consumer-names.js';
import { DurableConsumer, type DeadLetterEvent } from './durable-consumer.js';
import { RequestResponder } from './request-responder.js';

/** Handlers may name this transport: `@EventPattern('subject', JETSTREAM_TRANSPORT)`. */
export const JETSTREAM_TRANSPORT: unique symbol = Symbol.for('writ.bus.jetstream');

export type JetStreamServerStatus = 'connecting' | 'connected' | 'disconnected' | 'reconnecting' | 'draining' | 'closed';

export type JetStreamServerEvents = {
  /** A failure the bus absorbed (consumer loop ended, a dead letter could not be stored, connection error). */
  error: (error: unknown) => void;
  /** A message was stored on its dead-letter subject and terminated. */
  'dead-letter': (event: DeadLetterEvent) => void;
  /** A message was dead-lettered for what it is (not JSON, not its subject's contract): quarantined (invariant 10). */
  quarantine: (record: QuarantineRecord) => void;
};

const DEFAULT_NATS_URL = 'nats://127.0.0.1:4223';

/**
 * NestJS transport binding handlers to NATS:
 * - `@EventPattern(subject)` → one durable JetStream pull consumer per
 *   pattern (explicit ack, bounded redelivery with backoff, dead letters);
 *   every instance of the service shares the durable, so instances are
 *   competing consumers of one work queue;
 * - `@MessagePattern(subject)` → core NATS request/reply in a queue group
 *   named after the service; errors reply `{ code, message }`.
 *
 * Handlers get the JSON-parsed payload (`@Payload()`) and a `JetStreamContext`
 * or `RequestContext` (`@Ctx()`). A handler's Promise or Observable is awaited
 * before the message is acked. Register `BusExceptionFilter` so error codes
 * reach the ack policy.
 */
export class JetStreamServer
  extends Server<JetStreamServerEvents, JetStreamServerStatus>
  implements CustomTransportStrategy
{
  override readonly transportId = JETSTREAM_TRANSPORT;
  /** We observe handler failures ourselves (to ack/nak/dead-letter), so Nest need not log them again. */
  override readonly propagatesEventHandlerErrors = true;

  private readonly log: Logger;
  private readonly events = new EventEmitter();
  /** Its spans name the service (`writ.service`): several services may share one process and its SDK. */
  private readonly tracer: Tracer;
  private connection: NatsConnection | undefined;
  /** The connection the durable consumers pull on, when it is not `connection` (`consumerCredsFile`): ours to drain. */
  private consumerConnection: NatsConnection | undefined;
  private consumers: DurableConsumer[] = [];
  private responders: RequestResponder[] = [];
  private statusWatch: Promise<void> | undefined;
  private stopStatusWatch: (() => void) | undefined;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: JetStreamServerOptions) {
    super();
    assertServiceName(options.serviceName);
    // Fail at construction, not at the first message, on bad server-wide settings.
    resolveConsumerSettings('writ.validate', options, {});
    this.log = options.logger ?? createLogger('@writ/bus');
    this.tracer = serviceTracer(trace.getTracer('@writ/bus'), options.serviceName);
    // Node would throw on an 'error' event nobody listens to; errors are also logged where they happen.
    this.events.on('error', () => undefined);
  }

  listen(callback: (...optionalParams: unknown[]) => unknown): void {
    this.starting = this.start();
    this.starting.then(
      () => callback(),
      (error: unknown) => callback(error),
    );
  }

  /** Graceful drain: stop pulling, finish and ack in-flight work, answer pending requests, then disconnect. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  on<EventKey extends keyof JetStreamServerEvents>(event: EventKey, callback: JetStreamServerEvents[EventKey]): this {
    this.events.on(event, callback);
    return this;
  }

  /** The NATS connection. */
  unwrap<T = NatsConnection>(): T {
    if (this.connection === undefined) throw new BusError('BUS_CLOSED', 'the JetStream server is not connected; call listen() first');
    return this.connection as T;
  }

  /** Durable names bound by this server, by pattern (useful for operators and tests). */
  boundConsumers(): ReadonlyArray<{ readonly pattern: string; readonly durable: string; readonly stream: string }> {
    return this.consumers.map((consumer) => ({ pattern: consumer.pattern, durable: consumer.durable, stream: consumer.stream }));
  }

  private async start(): Promise<void> {
    this._status$.next('connecting');
    const nc = this.options.connection ?? (await this.connect());
    this.connection = nc;
    this.watchConnection(nc);
    try {
      const pulling = this.options.consumerConnection ?? (await this.connectConsumers());
      const js = jetstream(pulling ?? nc);
      const jsm = await jetstreamManager(pulling ?? nc);
      for (const [pattern, handler] of this.getHandlers()) {
        assertSubjectFilter(pattern);
        if (handler.isEventHandler) {
          this.consumers.push(await this.bindConsumer(js, jsm, pattern, handler));
        } else {
          this.responders.push(this.bindResponder(nc, pattern, handler));
        }
      }
      // Only report listening once the server has our subscriptions: a request sent right after listen() must find us.
      await nc.flush();
    } catch (error) {
      await this.stopWorkers();
      await this.disconnect();
      this._status$.next('closed');
      throw error;
    }
    this._status$.next('connected');
    this.log.info(
      { service: this.options.serviceName, consumers: this.consumers.map((c) => c.durable), responders: this.responders.length },
      'bus listening',
    );
  }

  private async connect(): Promise<NatsConnection> {
    const env = this.options.env ?? process.env;
    const servers = this.options.servers ?? env['NATS_URL'] ?? DEFAULT_NATS_URL;
    try {
      return await connectBus({ servers, name: this.options.serviceName, ...SERVICE_CONNECTION }, env);
    } catch (cause) {
      throw new BusError('BUS_CONNECTION_FAILED', `cannot connect to NATS at ${String(servers)}`, { cause });
    }
  }

  /**
   * A connection of its own for the durable consumers when the service has a consumer credential
   * (`consumerCredsFile`: a user that may not answer requests, which the server tracks a reply
   * entry per delivery for); undefined when it has none, and they pull on the service's connection.
   */
  private async connectConsumers(): Promise<NatsConnection | undefined> {
    if (![...this.getHandlers().values()].some((handler) => handler.isEventHandler)) return undefined;
    const env = this.options.env ?? process.env;
    const servers = this.options.servers ?? env['WRIT_NATS_URL'] ?? env['NATS_URL'] ?? DEFAULT_NATS_URL;
    this.consumerConnection = await connectConsumerBus(this.options.serviceName, servers, env);
    if (this.consumerConnection === undefined) return undefined;
    const statuses = this.consumerConnection.status();
    void (async () => {
      for await (const status of statuses) if (status.type === 'error') this.events.emit('error', status.error);
    })().catch((error: unknown) => this.events.emit('error', error));
    return this.consumerConnection;
  }

  /** Mirrors the connection's state on `status`, until the connection closes or we stop watching. */
  private watchConnection(nc: NatsConnection): void {
    const statuses = nc.status();
    this.stopStatusWatch = () => (statuses as { stop?: () => void }).stop?.();
    this.statusWatch = (async () => {
      try {
        for await (const status of statuses) {
          if (status.type === 'disconnect') this._status$.next('disconnected');
          else if (status.type === 'reconnecting') this._status$.next('reconnecting');
          else if (status.type === 'reconnect') this._status$.next('connected');
          else if (status.type === 'error') this.events.emit('error', status.error);
        }
      } catch (error) {
        this.events.emit('error', error);
      }
    })();
  }

  private async bindConsumer(js: JetStreamClient, jsm: JetStreamManager, pattern: string, handler: MessageHandler): Promise<DurableConsumer> {
    const settings = resolveConsumerSettings(pattern, this.options, readHandlerOptions(handler.extras));
    const stream = settings.stream ?? (await findStream(jsm, pattern));
    // A missing dead-letter stream is a deploy error; find it at boot, not at the first poison message.
    await findStream(jsm, settings.deadLetterSubject, 'dead-letter subject');
    await ensureDurable(jsm, stream, settings);
    const consumer = await js.consumers.get(stream, settings.durable);
    return new DurableConsumer({
      settings,
      stream,
      consumer,
      js,
      invoke: async (payload: unknown, context: JetStreamContext) => {
        await this.runHandler(handler, payload, context);
      },
      logger: this.log,
      tracer: this.tracer,
      onDeadLetter: (event) => this.events.emit('dead-letter', event),
      onQuarantine: (record) => this.events.emit('quarantine', record),
      onError: (error) => this.events.emit('error', error),
    });
  }

  private bindResponder(nc: NatsConnection, pattern: string, handler: MessageHandler): RequestResponder {
    return new RequestResponder({
      nc,
      pattern,
      queue: this.options.serviceName,
      invoke: (payload: unknown, context: RequestContext) => this.runHandler(handler, payload, context),
      logger: this.log,
      tracer: this.tracer,
    });
  }

  /**
   * Calls a Nest handler (its proxy applies pipes, guards, interceptors and
   * filters) and settles with the last value of whatever it returns: a value,
   * a Promise or an Observable. Rejects with what the handler (or its filter) threw.
   */
  private async runHandler(handler: MessageHandler, payload: unknown, context: JetStreamContext | RequestContext): Promise<unknown> {
    const result: unknown = await handler(payload, context);
    return lastValueFrom(this.transformToObservable(result), { defaultValue: undefined });
  }

  private async shutdown(): Promise<void> {
    this._status$.next('draining');
    // A close during listen() waits for the binding to finish, so nothing is left half-open.
    await this.starting?.catch(() => undefined);
    await this.stopWorkers();
    await this.disconnect();
    this._status$.next('closed');
  }

  private async stopWorkers(): Promise<void> {
    const consumers = this.consumers;
    const responders = this.responders;
    this.consumers = [];
    this.responders = [];
    await Promise.all([...consumers.map((c) => c.stop()), ...responders.map((r) => r.stop())]);
  }

  private async disconnect(): Promise<void> {
    const pulling = this.consumerConnection;
    this.consumerConnection = undefined;
    // Ours: drain flushes the acks and naks still buffered, then closes.
    if (pulling !== undefined && !pulling.isClosed()) await pulling.drain().catch((error: unknown) => this.log.warn({ err: error }, 'the consumers\' NATS connection did not drain cleanly'));
    const nc = this.connection;
    if (nc === undefined) return;
    try {
      if (this.options.connection === undefined) {
        // Our connection: drain flushes the naks/terms still buffered, then closes.
        if (!nc.isClosed()) await nc.drain();
      } else if (!nc.isClosed()) {
        // Not ours to close; make sure our acks left the socket.
        await nc.flush();
      }
    } catch (error) {
      this.log.warn({ err: error }, 'NATS connection did not drain cleanly');
    } finally {
      this.stopStatusWatch?.();
      await this.statusWatch;
    }
  }
}

/** The one stream whose subjects overlap `subject` (a handler pattern, or a dead-letter subject). */
async function findStream(jsm: JetStreamManager, subject: string, role: 'pattern' | 'dead-letter subject' = 'pattern'): Promise<string> {
  const names: string[] = [];
  for await (const name of jsm.streams.names(subject)) names.push(name);
  if (names.length === 1) return names[0] as string;
  const hint = role === 'pattern' ? 'create it first or set the stream option' : 'create a dead-letter stream (e.g. WRIT_DLQ on writ.dlq.>)';
  if (names.length === 0) {
    throw new BusError('BUS_STREAM_NOT_FOUND', `no stream captures ${role} ${subject}; ${hint}`, { details: { subject, role } });
  }
  throw new BusError('BUS_STREAM_AMBIGUOUS', `${role} ${subject} spans streams ${names.join(', ')}; set the stream option`, {
    details: { subject, role, streams: names },
  });
}

/**
 * Creates the durable, or aligns an existing one's mutable settings (ack
 * wait, max deliver) with ours. An existing durable keeps its position: that
 * is what lets a restarted service resume where it left off.
 */
async function ensureDurable(jsm: JetStreamManager, stream: string, settings: ConsumerSettings): Promise<void> {
  const wanted: Partial<ConsumerConfig> = {
    description: `writ ${settings.service}: ${settings.pattern}`,
    ack_wait: nanos(settings.ackWaitMs),
    max_deliver: settings.retry.maxDeliver + DEAD_LETTER_DELIVERIES,
  };
  const fail = (message: string, cause?: unknown): BusError =>
    new BusError('BUS_CONSUMER_SETUP_FAILED', message, { cause, details: { stream, durable: settings.durable, pattern: settings.pattern } });
  try {
    const existing = await jsm.consumers.info(stream, settings.durable).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound) return undefined;
      throw error;
    });
    if (existing === undefined) {
      await jsm.consumers.add(stream, {
        ...wanted,
        durable_name: settings.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: settings.deliverPolicy === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
        filter_subject: settings.pattern,
      });
      return;
    }
    if (existing.config.filter_subject !== settings.pattern || existing.config.ack_policy !== AckPolicy.Explicit) {
      throw fail(
        `durable ${settings.durable} on ${stream} exists with filter ${String(existing.config.filter_subject)} ` +
          `and ack policy ${existing.config.ack_policy}; expected ${settings.pattern}, explicit`,
      );
    }
    const drifted = (['ack_wait', 'max_deliver', 'description'] as const).some((key) => existing.config[key] !== wanted[key]);
    if (drifted) {
      await jsm.consumers.update(stream, settings.durable, wanted);
    }
  } catch (error) {
    if (error instanceof BusError) throw error;
    throw fail(`cannot set up durable ${settings.durable} on ${stream}`, error);
  }
}
