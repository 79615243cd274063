import type { JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '@writ/telemetry';
import type { ReadinessCheck } from './readiness.js';
import { WakeableSleep } from './wakeable-sleep.js';

/** A durable consumer to watch. */
export interface ConsumerRef {
  readonly stream: string;
  readonly durable: string;
}

/** What the server says about a consumer at one moment (`consumers.info`). */
export interface ConsumerSample {
  /** Messages not delivered yet. */
  readonly pending: number;
  /** Messages delivered and not acknowledged yet. */
  readonly ackPending: number;
  /** The stream sequence below which every message is acknowledged (or terminated). */
  readonly ackFloor: number;
}

/** The last time a consumer was seen making progress. */
export interface ConsumerProgress {
  readonly ackFloor: number;
  readonly sinceMs: number;
}

export interface StallAssessment {
  readonly progress: ConsumerProgress;
  readonly stalled: boolean;
  /** How long it has had work without progress (0 when it progressed or has nothing to do). */
  readonly stuckMs: number;
}

/**
 * Whether a consumer is stalled: it has work (messages pending or unacknowledged)
 * and its ack floor has not moved for `stallAfterMs`. Redeliveries that keep
 * failing hold the floor where it is, and so does a handler that never returns;
 * a slow but working consumer moves it, and an idle one has no work. Pure.
 */
export function assessConsumer(previous: ConsumerProgress | undefined, sample: ConsumerSample, nowMs: number, stallAfterMs: number): StallAssessment {
  const work = sample.pending + sample.ackPending;
  if (previous === undefined || work === 0 || sample.ackFloor !== previous.ackFloor) {
    return { progress: { ackFloor: sample.ackFloor, sinceMs: nowMs }, stalled: false, stuckMs: 0 };
  }
  const stuckMs = Math.max(0, nowMs - previous.sinceMs);
  return { progress: previous, stalled: stuckMs >= stallAfterMs, stuckMs };
}

export interface ConsumerStallWatchOptions {
  /** No progress with work waiting for this long is a stall. */
  readonly stallAfterMs: number;
  /** How often the consumers are sampled. */
  readonly checkMs: number;
  /** The consumers to watch (asked at every round: they are bound after the watch starts). */
  readonly consumers: () => readonly ConsumerRef[];
  readonly logger: Logger;
  readonly now?: () => number;
}

/** One stalled consumer, as readiness shows it. */
export interface StalledConsumer {
  readonly durable: string;
  readonly stream: string;
  readonly pending: number;
  readonly stuckMs: number;
}

/** One consumer as last sampled (what the consumer metrics show). */
export interface ConsumerReading {
  readonly stream: string;
  readonly durable: string;
  readonly pending: number;
  readonly ackPending: number;
  /** Messages delivered more than once and not acknowledged yet (`num_redelivered`). */
  readonly redelivered: number;
  /** How long it has had work without progress (0 when it progressed or has nothing to do). */
  readonly stuckMs: number;
}

/**
 * Samples the process's durable consumers on the server every `checkMs` and
 * keeps which are stalled (`assessConsumer`), for readiness to tell (a
 * consumer that stalls for good must not leave `/readyz` saying ready). The
 * sampling loop is awaited by `stop()`.
 */
export class ConsumerStallWatch {
  readonly #progress = new Map<string, ConsumerProgress>();
  #stalled: readonly StalledConsumer[] = [];
  readonly #readings = new Map<string, ConsumerReading>();
  readonly #sleep = new WakeableSleep();
  #loop: Promise<void> | undefined;
  #stopping = false;

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly options: ConsumerStallWatchOptions,
  ) {}

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#sleep.wake();
    await this.#loop;
  }

  /** The consumers stalled at the last sample. */
  get stalled(): readonly StalledConsumer[] {
    return this.#stalled;
  }

  /** Every watched consumer as last sampled (one that could not be read keeps its previous reading). */
  readings(): readonly ConsumerReading[] {
    return [...this.#readings.values()];
  }

  /** Passes when no watched consumer is stalled; shows each stalled one. */
  check(): ReadinessCheck {
    return () => ({
      ok: this.#stalled.length === 0,
      value: this.#stalled.map((consumer) => `${consumer.durable}: ${consumer.pending} message(s) waiting, no progress for ${Math.round(consumer.stuckMs / 1000)} s`),
    });
  }

  /** One round: every watched consumer sampled and assessed (a consumer that cannot be read is left as it was). */
  async sample(): Promise<void> {
    const now = this.options.now ?? Date.now;
    const stalled: StalledConsumer[] = [];
    const seen = new Set<string>();
    for (const ref of this.options.consumers()) {
      const key = `${ref.stream}/${ref.durable}`;
      seen.add(key);
      let info;
      try {
        info = await this.jsm.consumers.info(ref.stream, ref.durable);
      } catch (error) {
        this.options.logger.debug({ err: error, consumer: ref.durable }, 'consumer info unavailable; its stall state is kept');
        const previous = this.#stalled.find((consumer) => consumer.durable === ref.durable && consumer.stream === ref.stream);
        if (previous !== undefined) stalled.push(previous);
        continue;
      }
      const sample: ConsumerSample = { pending: info.num_pending, ackPending: info.num_ack_pending, ackFloor: info.ack_floor.stream_seq };
      const wasStalled = this.#stalled.some((consumer) => consumer.durable === ref.durable && consumer.stream === ref.stream);
      const assessment = assessConsumer(this.#progress.get(key), sample, now(), this.options.stallAfterMs);
      this.#progress.set(key, assessment.progress);
      this.#readings.set(key, { stream: ref.stream, durable: ref.durable, pending: sample.pending, ackPending: sample.ackPending, redelivered: info.num_redelivered, stuckMs: assessment.stuckMs });
      if (assessment.stalled) {
        stalled.push({ durable: ref.durable, stream: ref.stream, pending: sample.pending + sample.ackPending, stuckMs: assessment.stuckMs });
        if (!wasStalled) this.options.logger.error({ consumer: ref.durable, stream: ref.stream, pending: sample.pending, ack_pending: sample.ackPending, ack_floor: sample.ackFloor }, 'consumer stalled: work is waiting and nothing was acknowledged');
      } else if (wasStalled) {
        this.options.logger.info({ consumer: ref.durable, stream: ref.stream }, 'consumer moves again');
      }
    }
    for (const key of this.#progress.keys()) if (!seen.has(key)) this.#progress.delete(key);
    for (const key of this.#readings.keys()) if (!seen.has(key)) this.#readings.delete(key);
    this.#stalled = stalled;
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      try {
        await this.sample();
      } catch (error) {
        this.options.logger.warn({ err: error }, 'consumer stall check failed; retrying');
      }
      if (this.#stopping) break;
      await this.#sleep.sleep(this.options.checkMs);
    }
  }
}
