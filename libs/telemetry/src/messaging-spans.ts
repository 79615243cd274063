import {
  context as otelContext,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { redactString } from './redaction.js';
import { extractTraceContext, type TraceCarrier } from './trace-context.js';

/** Messaging semantic-convention attribute names (spelled here once; no semconv package dependency). */
export const MessagingAttributes = {
  SYSTEM: 'messaging.system',
  DESTINATION: 'messaging.destination.name',
  OPERATION_TYPE: 'messaging.operation.type',
  OPERATION_NAME: 'messaging.operation.name',
  MESSAGE_ID: 'messaging.message.id',
  CONSUMER_GROUP: 'messaging.consumer.group.name',
  DELIVERY_COUNT: 'messaging.nats.delivery_count',
  STREAM_SEQUENCE: 'messaging.nats.stream_sequence',
} as const;

const DEFAULT_TRACER = '@writ/telemetry';

export interface MessagingSpanOptions {
  /** Extra span attributes (message id, consumer group...). */
  readonly attributes?: Attributes;
  /** Defaults to the global tracer named `@writ/telemetry`. */
  readonly tracer?: Tracer;
}

export interface ConsumerSpanOptions extends MessagingSpanOptions {
  /**
   * CONSUMER for async messages (the default); SERVER for request/reply,
   * where the caller waits on the answer.
   */
  readonly kind?: SpanKind.CONSUMER | SpanKind.SERVER;
}

/**
 * Runs `fn` inside a PRODUCER span named `publish <destination>`. Inject the
 * trace context into the outgoing headers *inside* `fn`, so the receiver's
 * span becomes a child of this one and one action stays one trace.
 */
export async function withProducerSpan<T>(
  destination: string,
  fn: (span: Span) => Promise<T>,
  options: MessagingSpanOptions = {},
): Promise<T> {
  const tracer = options.tracer ?? trace.getTracer(DEFAULT_TRACER);
  const span = tracer.startSpan(`publish ${destination}`, {
    kind: SpanKind.PRODUCER,
    attributes: {
      [MessagingAttributes.SYSTEM]: 'nats',
      [MessagingAttributes.DESTINATION]: destination,
      [MessagingAttributes.OPERATION_TYPE]: 'send',
      [MessagingAttributes.OPERATION_NAME]: 'publish',
      ...options.attributes,
    },
  });
  return runInSpan(span, trace.setSpan(otelContext.active(), span), fn);
}

/**
 * Runs `fn` inside a CONSUMER (or SERVER) span named `process <destination>`
 * whose parent is the trace context carried by `headers`. The parent comes
 * from the message only, never from whatever context the consuming loop
 * happens to run in, so unrelated messages never share a trace.
 */
export async function withConsumerSpan<T>(
  headers: TraceCarrier | undefined,
  destination: string,
  fn: (span: Span) => Promise<T>,
  options: ConsumerSpanOptions = {},
): Promise<T> {
  const tracer = options.tracer ?? trace.getTracer(DEFAULT_TRACER);
  const parent = extractTraceContext(headers, ROOT_CONTEXT);
  const span = tracer.startSpan(
    `process ${destination}`,
    {
      kind: options.kind ?? SpanKind.CONSUMER,
      attributes: {
        [MessagingAttributes.SYSTEM]: 'nats',
        [MessagingAttributes.DESTINATION]: destination,
        [MessagingAttributes.OPERATION_TYPE]: 'process',
        [MessagingAttributes.OPERATION_NAME]: 'process',
        ...options.attributes,
      },
    },
    parent,
  );
  return runInSpan(span, trace.setSpan(parent, span), fn);
}

async function runInSpan<T>(span: Span, ctx: Context, fn: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await otelContext.with(ctx, () => fn(span));
  } catch (error) {
    markSpanFailed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Records `error` on `span` with a redacted message and sets the span's status to ERROR. */
export function markSpanFailed(span: Span, error: unknown, message?: string): void {
  const text = redactString(message ?? (error instanceof Error ? error.message : String(error)));
  if (error instanceof Error) {
    // No stack: it can quote values; the message is redacted.
    const code: unknown = (error as Error & { code?: unknown }).code;
    span.recordException({ name: error.name, message: text, ...(typeof code === 'string' ? { code } : {}) });
  }
  span.setStatus({ code: SpanStatusCode.ERROR, message: text });
}

/**
 * The span attribute naming the Writ service a span was made in. Several services may share one
 * process (apps/serve) and so one SDK whose resource `service.name` is the process's; this
 * attribute still tells which service handled a message.
 */
export const SERVICE_ATTRIBUTE = 'writ.service';

/** `tracer`, with every span it starts carrying `writ.service` = `service` (`SERVICE_ATTRIBUTE`). */
export function serviceTracer(tracer: Tracer, service: string): Tracer {
  return {
    startSpan: (name, options, context) => tracer.startSpan(name, { ...options, attributes: { ...options?.attributes, [SERVICE_ATTRIBUTE]: service } }, context),
    startActiveSpan: ((name: string, ...rest: unknown[]) => {
      const fn = rest.pop() as (span: Span) => unknown;
      const [options, context] = rest as [SpanOptionsOf<Tracer> | undefined, Context | undefined];
      const withService = { ...options, attributes: { ...options?.attributes, [SERVICE_ATTRIBUTE]: service } };
      return context === undefined ? tracer.startActiveSpan(name, withService, fn) : tracer.startActiveSpan(name, withService, context, fn);
    }) as Tracer['startActiveSpan'],
  };
}

type SpanOptionsOf<T extends Tracer> = Parameters<T['startSpan']>[1];
