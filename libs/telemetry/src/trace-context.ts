import {
  context as otelContext,
  isSpanContextValid,
  propagation,
  trace,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';

/**
 * The part of NATS `MsgHdrs` the propagators need. Structural on purpose:
 * telemetry does not depend on the NATS client, and a plain record works too.
 * NATS' `get` returns "" for a missing header, which we read as absent.
 */
export interface HeaderCarrier {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
  keys(): string[];
}

export type TraceCarrier = HeaderCarrier | Record<string, string | string[] | undefined>;

function isHeaderCarrier(carrier: TraceCarrier): carrier is HeaderCarrier {
  return typeof (carrier as HeaderCarrier).get === 'function' && typeof (carrier as HeaderCarrier).set === 'function';
}

const carrierSetter: TextMapSetter<TraceCarrier> = {
  set(carrier, key, value) {
    if (isHeaderCarrier(carrier)) carrier.set(key, value);
    else carrier[key] = value;
  },
};

const carrierGetter: TextMapGetter<TraceCarrier> = {
  get(carrier, key) {
    if (isHeaderCarrier(carrier)) {
      const value = carrier.get(key);
      return value === '' ? undefined : value;
    }
    return carrier[key];
  },
  keys(carrier) {
    return isHeaderCarrier(carrier) ? carrier.keys() : Object.keys(carrier);
  },
};

/**
 * Writes the W3C trace context (`traceparent`, `tracestate`, `baggage`) of
 * `ctx` (default: the active context) into message headers, through whatever
 * propagator `startTelemetry` registered. Without a registered propagator this
 * is a no-op, which is OpenTelemetry's normal behaviour when telemetry is off.
 */
export function injectTraceContext<C extends TraceCarrier>(headers: C, ctx: Context = otelContext.active()): C {
  propagation.inject(ctx, headers, carrierSetter);
  return headers;
}

/**
 * Reads the trace context carried by `headers` into a new context derived from
 * `base` (default: the active context); missing or malformed headers leave
 * `base` unchanged, so a consumer starts a fresh trace rather than failing.
 */
export function extractTraceContext(headers: TraceCarrier | undefined, base: Context = otelContext.active()): Context {
  if (headers === undefined) return base;
  return propagation.extract(base, headers, carrierGetter);
}

export interface TraceIds {
  readonly trace_id: string;
  readonly span_id: string;
  readonly trace_flags: string;
}

/** The ids of the active span, in the field names log lines carry; undefined outside a sampled-or-not valid span. */
export function activeTraceIds(ctx: Context = otelContext.active()): TraceIds | undefined {
  const spanContext = trace.getSpanContext(ctx);
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return undefined;
  return {
    trace_id: spanContext.traceId,
    span_id: spanContext.spanId,
    trace_flags: `0${spanContext.traceFlags.toString(16)}`.slice(-2),
  };
}
