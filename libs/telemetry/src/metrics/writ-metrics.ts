import { metrics, type Attributes, type Meter, type Observable } from '@opentelemetry/api';
import type { MetricDefinition } from './metric-catalogue.js';

/** The one meter every Writ instrument is made on. */
export const WRIT_METER = '@writ/telemetry';

export type MetricLabels<L extends string> = Readonly<Record<L, string>>;

export interface WritCounter<L extends string> {
  add(value: number, labels: MetricLabels<L>): void;
}

export interface WritHistogram<L extends string> {
  record(value: number, labels: MetricLabels<L>): void;
}

/** Hands one value per series to the collection in progress. */
export type MetricObserver = <L extends string>(definition: MetricDefinition<'gauge' | 'counter', L>, value: number, labels: MetricLabels<L>) => void;

export interface CounterOptions<L extends string> {
  /**
   * Series shown at 0 before anything happened, so a rule like `increase(x[5m]) > 0` sees the
   * first one rather than a series that appears with its first sample.
   */
  readonly initial?: readonly MetricLabels<L>[];
}

/**
 * Instruments made from catalogue definitions (`METRICS`), on the meter the
 * running telemetry registered. Make them when the adapter is built, after
 * `startTelemetry`: the OTel metrics API has no proxy, so an instrument made
 * before the SDK started records nothing, ever. Without a started SDK every
 * instrument is a no-op (tests that do not start telemetry).
 */
export class WritMetrics {
  constructor(private readonly meter: Meter = metrics.getMeter(WRIT_METER)) {}

  counter<L extends string>(definition: MetricDefinition<'counter', L>, options: CounterOptions<L> = {}): WritCounter<L> {
    const counter = this.meter.createCounter(definition.name, { description: definition.help, unit: definition.unit });
    for (const labels of options.initial ?? []) counter.add(0, labels as Attributes);
    return { add: (value, labels) => counter.add(value, labels as Attributes) };
  }

  histogram<L extends string>(definition: MetricDefinition<'histogram', L>): WritHistogram<L> {
    const histogram = this.meter.createHistogram(definition.name, {
      description: definition.help,
      unit: definition.unit,
      ...(definition.buckets === undefined ? {} : { advice: { explicitBucketBoundaries: [...definition.buckets] } }),
    });
    return { record: (value, labels) => histogram.record(value, labels as Attributes) };
  }

  /**
   * Gauges (and counters whose count is kept elsewhere) read at each
   * collection, i.e. on each scrape: `callback` observes each series. A
   * callback that throws loses this collection's values of its metrics (no
   * value rather than a wrong one); the others are unaffected. Returns the
   * stop.
   */
  observe(definitions: readonly MetricDefinition<'gauge' | 'counter'>[], callback: (observe: MetricObserver) => void | Promise<void>): () => void {
    const instruments = new Map<string, Observable>();
    for (const definition of definitions) {
      const options = { description: definition.help, unit: definition.unit };
      instruments.set(definition.name, definition.kind === 'gauge' ? this.meter.createObservableGauge(definition.name, options) : this.meter.createObservableCounter(definition.name, options));
    }
    const observables = [...instruments.values()];
    const batch = async (result: { observe(observable: Observable, value: number, attributes?: Attributes): void }) => {
      await callback((definition, value, labels) => {
        const instrument = instruments.get(definition.name);
        if (instrument !== undefined) result.observe(instrument, value, labels as Attributes);
      });
    };
    this.meter.addBatchObservableCallback(batch, observables);
    return () => this.meter.removeBatchObservableCallback(batch, observables);
  }
}

/** The instruments of the running telemetry (no-ops when none runs). */
export function writMetrics(meter?: Meter): WritMetrics {
  return new WritMetrics(meter);
}
