import { afterEach, describe, expect, it } from 'vitest';
import { startTelemetry, type TelemetryHandle } from '../start-telemetry.js';
import { METRIC_CATALOGUE, METRICS, seriesNames } from './metric-catalogue.js';
import { prometheusEnabled, pushedMetricReaders } from './metric-readers.js';
import { writMetrics } from './writ-metrics.js';

describe('the metric catalogue', () => {
  it('names every metric once, Prometheus-style, with a writ_ prefix and its unit or _total in the name', () => {
    const names = METRIC_CATALOGUE.map((metric) => metric.name);
    expect(new Set(names).size).toBe(names.length);
    for (const metric of METRIC_CATALOGUE) {
      expect(metric.name, metric.name).toMatch(/^writ_[a-z][a-z0-9_]*$/);
      if (metric.kind === 'counter') expect(metric.name, metric.name).toMatch(/_total$/);
      if (metric.unit === 's') expect(metric.name, metric.name).toMatch(/_seconds$/);
      for (const label of metric.labels) expect(label, metric.name).toMatch(/^[a-z][a-z0-9_]*$/);
      // Ids and secrets never label a series (docs/security.md).
      for (const label of metric.labels) expect(label, metric.name).not.toMatch(/(^|_)(id|task|attempt|grant_id|principal|secret|token|password)($|_)/);
    }
  });

  it('gives a histogram its _bucket, _sum and _count series', () => {
    expect(seriesNames(METRICS.policyDecisionDuration)).toEqual([
      'writ_policy_decision_duration_seconds_bucket',
      'writ_policy_decision_duration_seconds_sum',
      'writ_policy_decision_duration_seconds_count',
    ]);
  });
});

describe('WRIT_METRICS', () => {
  it.each([
    [undefined, true],
    ['', true],
    ['on', true],
    ['TRUE', true],
    ['off', false],
    ['0', false],
  ])('given %j, then /metrics is served: %s', (value, want) => {
    expect(prometheusEnabled({ WRIT_METRICS: value })).toBe(want);
  });

  it('given a value that is neither on nor off, then the start fails with TELEMETRY_CONFIG_INVALID', () => {
    expect(() => prometheusEnabled({ WRIT_METRICS: 'maybe' })).toThrow(expect.objectContaining({ code: 'TELEMETRY_CONFIG_INVALID' }));
  });
});

describe('pushed metric readers', () => {
  it('given no OTEL_* metrics setting, then nothing is pushed', () => {
    expect(pushedMetricReaders({})).toEqual([]);
  });

  it('given an OTLP endpoint, then one OTLP reader is pushed (the default exporter)', async () => {
    const readers = pushedMetricReaders({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    expect(readers).toHaveLength(1);
    await Promise.all(readers.map((reader) => reader.shutdown()));
  });

  it('given OTEL_METRICS_EXPORTER=prometheus or none, then nothing is pushed (prometheus is the service port)', () => {
    expect(pushedMetricReaders({ OTEL_METRICS_EXPORTER: 'prometheus' })).toEqual([]);
    expect(pushedMetricReaders({ OTEL_METRICS_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual([]);
  });
});

describe('Prometheus exposition of the running telemetry', () => {
  let handle: TelemetryHandle | undefined;
  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
    delete process.env['WRIT_METRICS'];
  });

  it('given instruments made from the catalogue, when scraped, then the catalogue names appear with service_name and the recorded values', async () => {
    handle = startTelemetry({ serviceName: 'metrics-test' });
    const metrics = writMetrics();
    const dead = metrics.counter(METRICS.deadLetters, { initial: [{ stream: 'WRIT_COMMANDS', durable: 'policy', reason: 'CONTRACT_INVALID' }] });
    const latency = metrics.histogram(METRICS.policyDecisionDuration);
    const stop = metrics.observe([METRICS.serviceReady], (observe) => observe(METRICS.serviceReady, 1, { service: 'policy' }));
    dead.add(2, { stream: 'WRIT_COMMANDS', durable: 'policy', reason: 'BUS_RETRIES_EXHAUSTED' });
    latency.record(0.02, { action_class: 'read_local', outcome: 'allow' });

    const text = await handle.prometheus!.scrape();
    stop();

    expect(text).toContain('# TYPE writ_dead_letters_total counter');
    expect(text).toMatch(/^writ_dead_letters_total\{[^}]*reason="CONTRACT_INVALID"[^}]*service_name="metrics-test"[^}]*\} 0$/m);
    expect(text).toMatch(/^writ_dead_letters_total\{[^}]*reason="BUS_RETRIES_EXHAUSTED"[^}]*\} 2$/m);
    expect(text).toMatch(/^writ_policy_decision_duration_seconds_bucket\{[^}]*le="0.025"[^}]*\} 1$/m);
    expect(text).toMatch(/^writ_service_ready\{service="policy",service_name="metrics-test"\} 1$/m);
    expect(text).not.toContain('otel_scope_name');
  });

  it('given WRIT_METRICS=off, then the running telemetry serves no /metrics', () => {
    process.env['WRIT_METRICS'] = 'off';
    handle = startTelemetry({ serviceName: 'metrics-off' });
    expect(handle.prometheus).toBeUndefined();
  });
});
