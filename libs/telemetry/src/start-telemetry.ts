import { context, metrics, propagation, ProxyTracerProvider, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  osDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
  type Resource,
} from '@opentelemetry/resources';
import { MeterProvider, type MetricReader } from '@opentelemetry/sdk-metrics';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import { NoopSpanProcessor, SimpleSpanProcessor, TracerProvider, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { loadWhenNeeded } from './lazy-module.js';
import { SERIES_RESOURCE_LABELS, prometheusEnabled, prometheusReader, pushedMetricReaders } from './metrics/metric-readers.js';
import { TelemetryError } from './telemetry-errors.js';

/**
 * Where spans go:
 * - `custom`: the `spanExporter` passed in (tests use `InMemorySpanExporter`), exported synchronously;
 * - `otlp`: an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` or `..._TRACES_ENDPOINT`); the SDK builds the exporter from `OTEL_*`;
 * - `env`: `OTEL_TRACES_EXPORTER` is set explicitly; the SDK honours it as the spec says;
 * - `none`: nothing is exported, but spans still get real ids so trace context
 *   flows across services and log lines carry trace_id/span_id;
 * - `disabled`: `OTEL_SDK_DISABLED=true`; nothing is registered at all.
 */
export type TraceExportMode = 'custom' | 'otlp' | 'env' | 'none' | 'disabled';

export interface TelemetryOptions {
  /** `service.name` of every span and metric; required, e.g. `orchestrator`. */
  readonly serviceName: string;
  readonly serviceVersion?: string;
  /** Extra resource attributes (deployment.environment, ...). */
  readonly resourceAttributes?: Attributes;
  /** Overrides the env-driven exporter; spans are exported as they end. */
  readonly spanExporter?: SpanExporter;
}

/** No process detector: it records the command line, which may carry secrets (invariant 6). */
const RESOURCE_DETECTORS = [envDetector, serviceInstanceIdDetector, hostDetector, osDetector];

const newContextManager = () => new AsyncLocalStorageContextManager();
const newPropagator = () => new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });

/**
 * Exported spans (`otlp`, `env`): the SDK's NodeSDK, which builds the exporters `OTEL_*` names.
 * Loaded only then: with every OTLP exporter, gRPC and the SDK's declarative configuration it
 * is ~12 MB of each service's resident memory that a service exporting no spans never uses.
 */
function nodeSdk(serviceName: string, resource: Resource, metricReaders: MetricReader[]): Pick<NodeSDK, 'shutdown'> {
  const { NodeSDK: Sdk } = loadWhenNeeded<typeof import('@opentelemetry/sdk-node')>('@opentelemetry/sdk-node');
  const sdk = new Sdk({
    serviceName,
    resource,
    resourceDetectors: RESOURCE_DETECTORS,
    contextManager: newContextManager(),
    textMapPropagator: newPropagator(),
    instrumentations: [],
    // Always given: without readers the SDK would default to an OTLP exporter on localhost.
    metricReaders,
    // Logs go through pino (createLogger), correlated by trace_id; no OTel log pipeline.
    logRecordProcessors: [],
  });
  sdk.start();
  return sdk;
}

/**
 * Spans exported nowhere or to the caller's exporter (`none`, `custom`): what NodeSDK registers
 * for them (context manager, propagator, resource with its detectors, tracer and meter
 * providers), without loading NodeSDK itself.
 */
function ownProviders(serviceName: string, resource: Resource, metricReaders: MetricReader[], spanProcessors: SpanProcessor[]): Pick<NodeSDK, 'shutdown'> {
  context.setGlobalContextManager(newContextManager().enable());
  propagation.setGlobalPropagator(newPropagator());
  const described = resource.merge(detectResources({ detectors: RESOURCE_DETECTORS })).merge(resourceFromAttributes({ 'service.name': serviceName }));
  const meterProvider = metricReaders.length === 0 ? undefined : new MeterProvider({ resource: described, readers: metricReaders });
  if (meterProvider !== undefined) metrics.setGlobalMeterProvider(meterProvider);
  const tracerProvider = new TracerProvider({ resource: described, spanProcessors });
  trace.setGlobalTracerProvider(tracerProvider);
  return { shutdown: async () => void (await Promise.all([tracerProvider.shutdown(), meterProvider?.shutdown()])) };
}

/** The Prometheus side of the running telemetry: what the service's HTTP server answers `/metrics` with. */
export interface PrometheusMetrics {
  /** Answers one scrape (200, Prometheus text exposition). */
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** The exposition text of one collection (tests, diagnostics). */
  scrape(): Promise<string>;
}

export interface TelemetryHandle {
  readonly traceExport: TraceExportMode;
  /** Present when `/metrics` is served (`WRIT_METRICS`, default on). */
  readonly prometheus?: PrometheusMetrics;
  /** Exports every span ended so far (span export is asynchronous); tests call it before reading an in-memory exporter. */
  forceFlush(): Promise<void>;
  /**
   * Flushes pending spans and metrics, then unregisters the global tracer
   * provider, propagator, context manager and meter provider, so the process
   * (or the next test) can start telemetry again. Idempotent.
   */
  shutdown(): Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

const isSet = (value: string | undefined): boolean => value !== undefined && value.trim() !== '';

/** Decides where spans go from the options and the environment (pure; see `TraceExportMode`). */
export function resolveTraceExport(env: Env, hasCustomExporter: boolean): TraceExportMode {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return 'disabled';
  if (hasCustomExporter) return 'custom';
  if (isSet(env['OTEL_TRACES_EXPORTER'])) return 'env';
  if (isSet(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) || isSet(env['OTEL_EXPORTER_OTLP_ENDPOINT'])) return 'otlp';
  return 'none';
}

let running: TelemetryHandle | undefined;

/**
 * Sets up the OpenTelemetry SDK for one service: an AsyncLocalStorage context
 * manager (so the active span follows async handlers), W3C trace-context and
 * baggage propagation, the span export chosen by `resolveTraceExport`, and
 * metrics: pulled by Prometheus from the service's own HTTP port
 * (`handle.prometheus`, served as `/metrics` by `@writ/runtime`; `WRIT_METRICS=off`
 * turns it off) and pushed over OTLP when `OTEL_*` asks for it.
 * Nothing here is required by tests; call it once at boot, before the Nest app
 * is created, and `shutdown()` on exit.
 */
export function startTelemetry(options: TelemetryOptions): TelemetryHandle {
  if (options.serviceName.trim() === '') {
    throw new TelemetryError('TELEMETRY_CONFIG_INVALID', 'serviceName must be a non-empty string');
  }
  if (running !== undefined) {
    throw new TelemetryError(
      'TELEMETRY_ALREADY_STARTED',
      'telemetry is already running in this process; shut the previous handle down first',
    );
  }
  const env = process.env;
  const traceExport = resolveTraceExport(env, options.spanExporter !== undefined);
  const servePrometheus = prometheusEnabled(env);
  if (traceExport === 'disabled') {
    return { traceExport, forceFlush: async () => undefined, shutdown: async () => undefined };
  }

  let spanProcessors: SpanProcessor[] | undefined;
  if (traceExport === 'custom' && options.spanExporter !== undefined) {
    spanProcessors = [new SimpleSpanProcessor({ exporter: options.spanExporter })];
  } else if (traceExport === 'none') {
    // A provider with no exporter still mints ids: trace context keeps flowing and logs stay correlated.
    spanProcessors = [new NoopSpanProcessor()];
  } // otlp / env: leave undefined so the SDK builds exporters from OTEL_* variables.

  // Pulled on the service's own HTTP port (`/metrics`); pushed too when OTEL_* asks for it.
  const exporter = servePrometheus ? prometheusReader() : undefined;
  const metricReaders = [...(exporter === undefined ? [] : [exporter]), ...pushedMetricReaders(env)];
  const resource = defaultResource().merge(
    resourceFromAttributes({
      ...(options.serviceVersion === undefined ? {} : { 'service.version': options.serviceVersion }),
      ...options.resourceAttributes,
    }),
  );
  const sdk = spanProcessors === undefined ? nodeSdk(options.serviceName, resource, metricReaders) : ownProviders(options.serviceName, resource, metricReaders, spanProcessors);

  let stopping: Promise<void> | undefined;
  const handle: TelemetryHandle = {
    traceExport,
    ...(exporter === undefined ? {} : { prometheus: prometheusMetrics(exporter) }),
    async forceFlush() {
      const provider = trace.getTracerProvider();
      const sdkProvider = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
      await (sdkProvider as { forceFlush?: () => Promise<void> }).forceFlush?.();
    },
    shutdown() {
      stopping ??= sdk.shutdown().finally(() => {
        trace.disable();
        propagation.disable();
        metrics.disable();
        context.disable();
        if (running === handle) running = undefined;
      });
      return stopping;
    },
  };
  running = handle;
  return handle;
}

function prometheusMetrics(exporter: PrometheusExporter): PrometheusMetrics {
  // The same settings as the exporter's own serializer, so `scrape()` shows what a scrape gets.
  const serializer = new PrometheusSerializer(undefined, false, SERIES_RESOURCE_LABELS, false, true);
  return {
    handle: (request, response) => exporter.getMetricsRequestHandler(request, response),
    async scrape() {
      const { resourceMetrics } = await exporter.collect();
      return serializer.serialize(resourceMetrics);
    },
  };
}

/**
 * The Prometheus endpoint of the telemetry running in this process, if it
 * serves one: undefined when telemetry was not started (tests that boot a
 * service alone), is disabled, or `WRIT_METRICS=off`.
 */
export function runningPrometheus(): PrometheusMetrics | undefined {
  return running?.prometheus;
}
