import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import { markSpanFailed, redactString, withConsumerSpan, type Logger } from '@writ/telemetry';
import { RequestContext } from './bus-context.js';
import { toHandlerFailure, type HandlerFailure } from './handler-failure.js';
import { decodeJson, encodeJson } from './json-codec.js';

/**
 * Header marking a reply as an error; its value is the error code and the body
 * is `{ code, message }` (STYLE.md: request/reply → `{ code, message }`).
 * A success reply has no such header and its body is the handler's result as JSON.
 */
export const ERROR_CODE_HEADER = 'Writ-Error-Code';

export interface RequestResponderDeps {
  readonly nc: NatsConnection;
  readonly pattern: string;
  /** Queue group: one instance of the service answers each request. */
  readonly queue: string;
  readonly invoke: (payload: unknown, context: RequestContext) => Promise<unknown>;
  readonly logger: Logger;
  readonly tracer: Tracer;
}

/**
 * Serves one `@MessagePattern` over core NATS request/reply. Queries are not
 * durable: a request nobody answers in time fails at the caller
 * (`BUS_TIMEOUT` / `BUS_NO_RESPONDERS`) and the caller decides.
 */
export class RequestResponder {
  private readonly subscription: Subscription;
  private readonly inFlight = new Set<Promise<void>>();
  readonly finished: Promise<void>;

  constructor(private readonly deps: RequestResponderDeps) {
    this.subscription = deps.nc.subscribe(deps.pattern, { queue: deps.queue });
    this.finished = this.loop();
  }

  /** Stops taking requests, answers those already received, then returns. */
  async stop(): Promise<void> {
    if (!this.subscription.isClosed()) {
      await this.subscription.drain().catch((error: unknown) => {
        this.deps.logger.warn({ err: error, pattern: this.deps.pattern }, 'request subscription did not drain cleanly');
      });
    }
    await this.finished;
  }

  private async loop(): Promise<void> {
    try {
      for await (const message of this.subscription) {
        const task: Promise<void> = this.respond(message).finally(() => this.inFlight.delete(task));
        this.inFlight.add(task);
      }
    } catch (error) {
      this.deps.logger.error({ err: error, pattern: this.deps.pattern }, 'request loop ended with an error');
    } finally {
      await Promise.all(this.inFlight);
    }
  }

  /** Never rejects. */
  private async respond(message: Msg): Promise<void> {
    try {
      await withConsumerSpan(
        message.headers,
        message.subject,
        async (span) => {
          let failure: HandlerFailure | undefined;
          let result: unknown;
          try {
            result = await this.deps.invoke(decodeJson(message.data), new RequestContext(message));
          } catch (error) {
            failure = toHandlerFailure(error);
          }
          if (failure !== undefined) {
            markSpanFailed(span, failure, failure.message);
            this.replyError(message, failure);
          } else {
            this.reply(message, result);
          }
        },
        { kind: SpanKind.SERVER, tracer: this.deps.tracer },
      );
    } catch (error) {
      this.deps.logger.error({ err: error, subject: message.subject }, 'request handling failed in the bus');
    }
  }

  private reply(message: Msg, result: unknown): void {
    let body: Uint8Array;
    try {
      body = encodeJson(result ?? null);
    } catch (error) {
      this.replyError(message, toHandlerFailure(error));
      return;
    }
    if (!message.respond(body)) this.deps.logger.warn({ subject: message.subject }, 'request had no reply subject');
  }

  private replyError(message: Msg, failure: HandlerFailure): void {
    // The message crosses a trust boundary: never let a secret ride along.
    const safe = { code: failure.code, message: redactString(failure.message) };
    const headers = natsHeaders();
    headers.set(ERROR_CODE_HEADER, safe.code);
    if (!message.respond(encodeJson(safe), { headers })) {
      this.deps.logger.warn({ subject: message.subject, code: failure.code }, 'request failed and had no reply subject');
    }
  }
}
