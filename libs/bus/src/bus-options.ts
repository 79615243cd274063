import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@writ/telemetry';
import {
  classifierFromTable,
  type BackoffSettings,
  type ErrorActionTable,
  type ErrorClassifier,
  type RetrySettings,
} from './ack-policy.js';
import { BusError } from './bus-errors.js';
import { defaultDeadLetterSubject, durableName } from './consumer-names.js';

/**
 * Settings of one durable consumer. Set them for every handler on the server,
 * and override per handler with `@EventPattern(subject, busOptions({...}))`.
 */
export interface ConsumerOptions {
  /** Stream holding the pattern's subjects; default: looked up by subject on the server. */
  readonly stream?: string;
  /** Durable name; default `<serviceName>__<pattern token>` (see `durableName`). */
  readonly durable?: string;
  /**
   * Where a *new* durable starts: `all` (default) replays the stream from the
   * start, `new` takes only messages published after it exists. An existing
   * durable always resumes where it left off.
   */
  readonly deliverPolicy?: 'all' | 'new';
  /** Handled attempts per message, first delivery included (default 5). */
  readonly maxDeliver?: number;
  /**
   * How long the server waits for an ack before redelivering (default 30 s).
   * In-flight handlers send `working()` every half of it, so it bounds how long
   * a *crashed* process holds a message, not how long a handler may run.
   */
  readonly ackWaitMs?: number;
  /** Backoff of `retry-backoff` (default 1 s, ×2, at most 60 s). */
  readonly backoff?: Partial<BackoffSettings>;
  /** Delay of `retry-soon` (default 50 ms). */
  readonly retrySoonDelayMs?: number;
  /** Overlays `DEFAULT_ERROR_ACTIONS` (code → action). */
  readonly errorActions?: ErrorActionTable;
  /** Replaces the table entirely; wins over `errorActions`. */
  readonly classifyError?: ErrorClassifier;
  /**
   * Messages handled at once by this process (default 1: in stream order).
   * Above 1, order is no longer kept.
   */
  readonly concurrency?: number;
  /**
   * Most messages pulled and not yet handled (default, and at least:
   * `concurrency`). Above `concurrency`, messages wait in arrival order for
   * a handler slot, kept ours meanwhile (`working()`), and one pull serves
   * many of them. Keep it at `concurrency` for a work queue whose competing
   * consumers should share the work (an executor): what one instance pulled
   * ahead, another cannot take.
   */
  readonly pullBatch?: number;
  /**
   * How long one pull request waits on the server for messages (default 5 s,
   * at least 1 s). It bounds how long a graceful stop waits when idle; an
   * idle consumer sends one pull per period.
   */
  readonly pullExpiresMs?: number;
  /** Dead-letter subject; default `writ.dlq.<serviceName>.<pattern token>`. A stream must capture it. */
  readonly deadLetterSubject?: string;
  /**
   * Hand the handler the message's bytes undecoded (a `Uint8Array`) instead of
   * parsed JSON, for a handler that judges what it is given itself (default
   * false: a body that is not JSON is dead-lettered before the handler runs).
   */
  readonly rawPayload?: boolean;
}

/** Server-wide defaults for every handler; `durable` is per handler only (a durable binds one pattern). */
export interface JetStreamServerOptions extends Omit<ConsumerOptions, 'durable'> {
  /**
   * Names the durables (`<serviceName>__…`), the request/reply queue group
   * and the dead-letter subjects. Every instance of one service uses the same
   * name, so instances share each durable as competing consumers.
   */
  readonly serviceName: string;
  /**
   * Root of the default dead-letter subjects (`<prefix>.<service>.<pattern token>`);
   * default `writ.dlq`. A deployment or test with its own subject root sets it.
   */
  readonly deadLetterPrefix?: string;
  /** NATS servers; default `NATS_URL` from the environment, else `nats://127.0.0.1:4223`. Ignored with `connection`. */
  readonly servers?: string | string[];
  /** An existing connection to use; the server then neither drains nor closes it. */
  readonly connection?: NatsConnection;
  /**
   * An existing connection for the durable consumers to pull on (not drained or closed here either);
   * default: one of its own on the consumer credential (`connectConsumerBus`), else `connection`.
   */
  readonly consumerConnection?: NatsConnection;
  /**
   * Where the connections it opens itself find their servers and credentials (`WRIT_NATS_URL`,
   * `WRIT_NATS_CREDS`, the consumer credential beside it): the service's own environment, default
   * `process.env` (apps/serve runs several services in one process, each with its own).
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Defaults to `createLogger('@writ/bus')`. */
  readonly logger?: Logger;
}

/** The key under which per-handler options travel in Nest's pattern `extras`. */
export const BUS_OPTIONS_KEY = 'writBus';

/** Per-handler overrides: `@EventPattern('writ.cmd.executor.run', busOptions({ concurrency: 4 }))`. */
export function busOptions(options: ConsumerOptions): Record<string, unknown> {
  return { [BUS_OPTIONS_KEY]: options };
}

export function readHandlerOptions(extras: Record<string, unknown> | undefined): ConsumerOptions {
  const value = extras?.[BUS_OPTIONS_KEY];
  return typeof value === 'object' && value !== null ? (value as ConsumerOptions) : {};
}

/**
 * The server holds `maxDeliver` + this many deliveries: the extra ones are
 * reserved for dead-lettering a message whose last handled attempt crashed
 * the process (or whose letter could not be stored), so such a message is
 * dead-lettered, not silently dropped by the server's own limit.
 */
export const DEAD_LETTER_DELIVERIES = 3;

export const DEFAULTS = {
  // Ten: with the backoff below a message outlives about 4 minutes of its infrastructure being unavailable (a
  // NATS leader election after a partition took 40–60 s; five deliveries dead-lettered 22 run commands).
  maxDeliver: 10,
  ackWaitMs: 30_000,
  backoff: { initialMs: 1_000, maxMs: 60_000, multiplier: 2 },
  retrySoonDelayMs: 50,
  concurrency: 1,
  pullExpiresMs: 5_000,
  deliverPolicy: 'all',
} as const;

export interface ConsumerSettings {
  readonly pattern: string;
  readonly service: string;
  readonly stream: string | undefined;
  readonly durable: string;
  readonly deliverPolicy: 'all' | 'new';
  readonly ackWaitMs: number;
  readonly retry: RetrySettings;
  readonly concurrency: number;
  readonly pullBatch: number;
  readonly pullExpiresMs: number;
  readonly deadLetterSubject: string;
  readonly rawPayload: boolean;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new BusError('BUS_CONFIG_INVALID', `${name} must be a positive integer, got ${value}`);
  }
  return value;
}

function atLeast(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new BusError('BUS_CONFIG_INVALID', `${name} must be an integer of at least ${min}, got ${value}`);
  }
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new BusError('BUS_CONFIG_INVALID', `${name} must be a non-negative number, got ${value}`);
  }
  return value;
}

/** Server-wide options overlaid with one handler's; validated. */
export function resolveConsumerSettings(
  pattern: string,
  server: JetStreamServerOptions,
  handler: ConsumerOptions,
): ConsumerSettings {
  const { serviceName: _service, servers: _servers, connection: _connection, consumerConnection: _consumers, logger: _logger, deadLetterPrefix: _dlqPrefix, ...serverDefaults } = server;
  const merged: ConsumerOptions = { ...serverDefaults, ...handler };
  const backoff: BackoffSettings = { ...DEFAULTS.backoff, ...server.backoff, ...handler.backoff };
  const concurrency = positiveInt('concurrency', merged.concurrency ?? DEFAULTS.concurrency);
  const classify =
    handler.classifyError ??
    (handler.errorActions !== undefined ? classifierFromTable({ ...server.errorActions, ...handler.errorActions }) : undefined) ??
    server.classifyError ??
    classifierFromTable(server.errorActions);
  nonNegative('backoff.initialMs', backoff.initialMs);
  nonNegative('backoff.maxMs', backoff.maxMs);
  if (!(backoff.multiplier >= 1)) throw new BusError('BUS_CONFIG_INVALID', `backoff.multiplier must be >= 1, got ${backoff.multiplier}`);
  return {
    pattern,
    service: server.serviceName,
    stream: merged.stream,
    durable: merged.durable ?? durableName(server.serviceName, pattern),
    deliverPolicy: merged.deliverPolicy ?? DEFAULTS.deliverPolicy,
    ackWaitMs: positiveInt('ackWaitMs', merged.ackWaitMs ?? DEFAULTS.ackWaitMs),
    retry: {
      maxDeliver: positiveInt('maxDeliver', merged.maxDeliver ?? DEFAULTS.maxDeliver),
      backoff,
      retrySoonDelayMs: nonNegative('retrySoonDelayMs', merged.retrySoonDelayMs ?? DEFAULTS.retrySoonDelayMs),
      classify,
    },
    concurrency,
    pullBatch: positiveInt('pullBatch', merged.pullBatch ?? concurrency),
    pullExpiresMs: atLeast('pullExpiresMs', merged.pullExpiresMs ?? DEFAULTS.pullExpiresMs, 1_000),
    deadLetterSubject: merged.deadLetterSubject ?? defaultDeadLetterSubject(server.serviceName, pattern, server.deadLetterPrefix),
    rawPayload: merged.rawPayload ?? false,
  };
}
