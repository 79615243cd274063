import type { BeforeApplicationShutdown } from '@nestjs/common';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { SpanKind } from '@opentelemetry/api';
import { ERROR_CODE_HEADER, toHandlerFailure } from '@writ/bus';
import { EvaluatePolicyDryRun, parseContract } from '@writ/contracts';
import { markSpanFailed, redactString, withConsumerSpan, type Logger } from '@writ/telemetry';
import type { EvaluateDryRunHandler } from '../application/evaluate-dry-run.handler.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * `<root>.qry.policy.evaluate` served straight from a core NATS subscription
 * (queue group `policy`), not through Nest's message pipeline: a dry run is
 * a pure evaluation, and the pipeline (RxJS, interceptors, an async span per
 * request) doubled its p99 in scripts/bench/policy.bench.mjs. The wire
 * behaviour is the bus's: the reply is the JSON result, a failure is
 * `{ code, message }` with header Writ-Error-Code, and a request carrying W3C
 * trace context gets its SERVER span (one without pays nothing for it).
 */
export class DryRunResponder implements BeforeApplicationShutdown {
  readonly #subscription: Subscription;
  readonly #loop: Promise<void>;

  constructor(
    nc: NatsConnection,
    private readonly subject: string,
    queue: string,
    private readonly handler: EvaluateDryRunHandler,
    private readonly logger: Logger,
  ) {
    this.#subscription = nc.subscribe(subject, { queue });
    this.#loop = this.#serve();
  }

  /** Stops taking requests and answers those already received (before the connection drains). */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.#subscription.isClosed()) await this.#subscription.drain().catch((error: unknown) => this.logger.warn({ err: error, subject: this.subject }, 'dry-run subscription did not drain cleanly'));
    await this.#loop;
  }

  async #serve(): Promise<void> {
    try {
      for await (const message of this.#subscription) {
        if (message.headers?.has('traceparent') === true) {
          await withConsumerSpan(message.headers, message.subject, async (span) => {
            const failure = this.#answer(message);
            if (failure !== undefined) markSpanFailed(span, failure, failure.message);
          }, { kind: SpanKind.SERVER }).catch((error: unknown) => this.logger.error({ err: error }, 'dry-run span failed'));
        } else {
          this.#answer(message);
        }
      }
    } catch (error) {
      this.logger.error({ err: error, subject: this.subject }, 'dry-run responder ended with an error');
    }
  }

  /** Evaluates and replies; returns the failure it replied with, if any. Never throws. */
  #answer(message: Msg): { code: string; message: string } | undefined {
    let body: Uint8Array;
    try {
      const request = parseContract('EvaluatePolicyDryRun', EvaluatePolicyDryRun, JSON.parse(decoder.decode(message.data)));
      body = encoder.encode(JSON.stringify(this.handler.evaluate(request)));
    } catch (error) {
      const failure = toHandlerFailure(error instanceof SyntaxError ? { code: 'BUS_PAYLOAD_INVALID', message: 'the request is not JSON' } : error);
      const safe = { code: failure.code, message: redactString(failure.message) };
      const headers = natsHeaders();
      headers.set(ERROR_CODE_HEADER, safe.code);
      if (!message.respond(encoder.encode(JSON.stringify(safe)), { headers })) this.logger.warn({ subject: this.subject, code: safe.code }, 'dry run failed and had no reply subject');
      return safe;
    }
    if (!message.respond(body)) this.logger.warn({ subject: this.subject }, 'dry run had no reply subject');
    return undefined;
  }
}
