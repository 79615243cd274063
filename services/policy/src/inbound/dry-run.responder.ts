import type { BeforeApplicationShutdown } from '@nestjs/common';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { SpanKind } from '@opentelemetry/api';
import { ERROR_CODE_HEADER, toHandlerFailure } from '@writ/bus';
import { EvaluatePolicyDryRun, parseContract } from '@writ/contracts';
import { markSpanFailed, redactString, withConsumerSpan, type Logger } from '@writ/telemetry';
import type { EvaluateDryRunHandler } from '../application/evaluate-dry-run.handler.js';

const decoder = new TextDecoder();

/**
 * `<root>.qry.policy.evaluate` served straight from a core NATS subscription
 * (queue group `policy`), not through Nest's message pipeline: a dry run is
 * a pure evaluation, and the pipeline (RxJS, interceptors, an async span per
 * request) doubled its p99 in scripts/bench/policy.bench.mjs. The
 * subscription takes a callback, so a request is answered synchronously as
 * the client parses it (no async iterator, no promise per message), the
 * reply is the handler's JSON text as is, and nothing is logged per
 * request. The wire behaviour is the bus's: the reply is the JSON result, a
 * failure is `{ code, message }` with header Writ-Error-Code, and a request
 * carrying W3C trace context gets its SERVER span (one without pays nothing
 * for it).
 */
export class DryRunResponder implements BeforeApplicationShutdown {
  readonly #subscription: Subscription;
  /** Requests whose span is still open (traced requests only): shutdown waits for them. */
  readonly #traced = new Set<Promise<void>>();

  constructor(
    nc: NatsConnection,
    private readonly subject: string,
    queue: string,
    private readonly handler: EvaluateDryRunHandler,
    private readonly logger: Logger,
  ) {
    this.#subscription = nc.subscribe(subject, {
      queue,
      callback: (error, message) => {
        // The client calls this from its protocol parser: a throw here would reach the connection, so none escapes.
        try {
          this.#receive(error, message);
        } catch (thrown) {
          this.logger.error({ err: thrown, subject: this.subject }, 'dry-run request could not be answered');
        }
      },
    });
    void this.#subscription.closed.then((ended) => {
      if (ended instanceof Error) this.logger.error({ err: ended, subject: this.subject }, 'dry-run responder ended with an error');
    });
  }

  /** Stops taking requests and answers those already received (before the connection drains). */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.#subscription.isClosed()) await this.#subscription.drain().catch((error: unknown) => this.logger.warn({ err: error, subject: this.subject }, 'dry-run subscription did not drain cleanly'));
    await Promise.all(this.#traced);
  }

  #receive(error: Error | null, message: Msg): void {
    if (error !== null) {
      this.logger.error({ err: error, subject: this.subject }, 'dry-run subscription reported an error');
      return;
    }
    if (message.headers?.has('traceparent') !== true) {
      this.#answer(message);
      return;
    }
    const traced = withConsumerSpan(message.headers, message.subject, async (span) => {
      const failure = this.#answer(message);
      if (failure !== undefined) markSpanFailed(span, failure, failure.message);
    }, { kind: SpanKind.SERVER })
      .catch((spanError: unknown) => this.logger.error({ err: spanError }, 'dry-run span failed'))
      .finally(() => this.#traced.delete(traced));
    this.#traced.add(traced);
  }

  /** Evaluates and replies; returns the failure it replied with, if any. Never throws. */
  #answer(message: Msg): { code: string; message: string } | undefined {
    let body: string;
    try {
      const request = parseContract('EvaluatePolicyDryRun', EvaluatePolicyDryRun, JSON.parse(decoder.decode(message.data)));
      body = this.handler.evaluateToJson(request);
    } catch (error) {
      const failure = toHandlerFailure(error instanceof SyntaxError ? { code: 'BUS_PAYLOAD_INVALID', message: 'the request is not JSON' } : error);
      const safe = { code: failure.code, message: redactString(failure.message) };
      const headers = natsHeaders();
      headers.set(ERROR_CODE_HEADER, safe.code);
      if (!message.respond(JSON.stringify(safe), { headers })) this.logger.warn({ subject: this.subject, code: safe.code }, 'dry run failed and had no reply subject');
      return safe;
    }
    if (!message.respond(body)) this.logger.warn({ subject: this.subject }, 'dry run had no reply subject');
    return undefined;
  }
}
