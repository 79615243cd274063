import { diag } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { ConsoleMetricExporter, PeriodicExportingMetricReader, type MetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { loadWhenNeeded } from '../lazy-module.js';
import { TelemetryError } from '../telemetry-errors.js';

type Env = Readonly<Record<string, string | undefined>>;

const isSet = (value: string | undefined): boolean => value !== undefined && value.trim() !== '';

const SWITCH_ON = new Set(['on', 'true', '1', 'yes']);
const SWITCH_OFF = new Set(['off', 'false', '0', 'no']);

/**
 * `WRIT_METRICS`: whether the process serves Prometheus `/metrics` on its HTTP
 * port (default on). A value that is neither on nor off fails the start
 * rather than silently picking one.
 */
export function prometheusEnabled(env: Env): boolean {
  const raw = env['WRIT_METRICS'];
  if (!isSet(raw)) return true;
  const value = raw!.trim().toLowerCase();
  if (SWITCH_ON.has(value)) return true;
  if (SWITCH_OFF.has(value)) return false;
  throw new TelemetryError('TELEMETRY_CONFIG_INVALID', 'WRIT_METRICS must be on or off', { details: { variable: 'WRIT_METRICS', value: raw } });
}

/**
 * The Prometheus reader whose scrape the service's own HTTP server answers
 * (never a server of its own: seven services on one host would fight over
 * one port). Every series carries `service_name`; the instrumentation scope
 * is left out (one meter, and the names are the catalogue's).
 */
export function prometheusReader(): PrometheusExporter {
  return new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true, withResourceConstantLabels: SERIES_RESOURCE_LABELS });
}

/** The resource attributes every series carries as labels (`service.name` → `service_name`). */
export const SERIES_RESOURCE_LABELS = /^service\.name$/;

/** Whether the environment asks for pushed metrics (an OTLP endpoint or an explicit `OTEL_METRICS_EXPORTER`). */
export function pushedMetricsFromEnv(env: Env): boolean {
  return isSet(env['OTEL_METRICS_EXPORTER']) || isSet(env['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT']) || isSet(env['OTEL_EXPORTER_OTLP_ENDPOINT']);
}

function otlpExporter(env: Env): PushMetricExporter {
  const protocol = (env['OTEL_EXPORTER_OTLP_METRICS_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'])?.trim() || 'http/protobuf';
  // Loaded only when metrics are pushed (gRPC alone is megabytes of resident memory).
  type Exporters = { OTLPMetricExporter: new () => PushMetricExporter };
  if (protocol === 'grpc') return new (loadWhenNeeded<Exporters>('@opentelemetry/exporter-metrics-otlp-grpc').OTLPMetricExporter)();
  if (protocol === 'http/json') return new (loadWhenNeeded<Exporters>('@opentelemetry/exporter-metrics-otlp-http').OTLPMetricExporter)();
  if (protocol !== 'http/protobuf') diag.warn(`Unsupported OTLP metrics protocol: "${protocol}". Using http/protobuf.`);
  return new (loadWhenNeeded<Exporters>('@opentelemetry/exporter-metrics-otlp-proto').OTLPMetricExporter)();
}

function interval(env: Env, name: string, fallback: number): number {
  const value = Number(env[name]);
  return isSet(env[name]) && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function periodic(env: Env, exporter: PushMetricExporter): MetricReader {
  const exportIntervalMillis = interval(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000);
  const exportTimeoutMillis = Math.min(interval(env, 'OTEL_METRIC_EXPORT_TIMEOUT', 30_000), exportIntervalMillis);
  return new PeriodicExportingMetricReader({ exporter, exportIntervalMillis, exportTimeoutMillis });
}

/**
 * The pushing readers `OTEL_*` asks for, as the SDK would build them
 * (`OTEL_METRICS_EXPORTER`: otlp by default, console, none). The SDK builds
 * them only when it is given no reader at all, and Writ always gives it the
 * Prometheus one, so they are built here. `prometheus` in the list means the
 * service's own `/metrics` (no second server on 9464).
 */
export function pushedMetricReaders(env: Env): MetricReader[] {
  if (!pushedMetricsFromEnv(env)) return [];
  const listed = (env['OTEL_METRICS_EXPORTER'] ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  const names = new Set(listed.length === 0 ? ['otlp'] : listed);
  if (names.has('none')) return [];
  const readers: MetricReader[] = [];
  for (const name of names) {
    if (name === 'otlp') readers.push(periodic(env, otlpExporter(env)));
    else if (name === 'console') readers.push(periodic(env, new ConsoleMetricExporter()));
    else if (name !== 'prometheus') diag.warn(`Unsupported OTEL_METRICS_EXPORTER value: "${name}". Supported values are: otlp, console, prometheus, none.`);
  }
  return readers;
}
