import { z } from 'zod';
import { EVENTS_STREAM } from '@writ/contracts';
import {
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { EventStoreError, fromNatsError, jetStreamApiCode } from './eventstore-errors.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/**
 * Event store configuration: every durability and limit setting is explicit
 * here, validated at start-up, never left to server defaults.
 *
 * What is deliberately NOT configurable, because an event log must never lose
 * an event silently:
 * - `discard: new` — at `maxBytes` / `maxMsgs` the stream refuses new writes
 *   (`EVENTSTORE_STREAM_FULL`) instead of dropping the oldest events;
 * - `max_age: 0` — no age-based expiry (it removes events whatever `discard`
 *   says); archival is a separate, explicit operation;
 * - `max_msgs_per_subject: -1` — a per-subject limit would drop a task's oldest events;
 * - `deny_delete` and `deny_purge` — the log is append-only through the API too,
 *   which also keeps a subject's last sequence monotonic (the append guard relies on it);
 * - `allow_rollup_hdrs: false` — a `Nats-Rollup` header would purge a subject.
 */
export const EventStoreConfig = z.object({
  /** JetStream stream name. */
  stream: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"')
    .default(EVENTS_STREAM),
  /** Subject prefix; the stream binds `<prefix>.>` and events go to `<prefix>.<entity>.<id>`. */
  subjectPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards')
    .default('writ.evt'),
  /** `file` in every deploy; `memory` only for throwaway tests. */
  storage: z.enum(['file', 'memory']).default('file'),
  /** 1 on a single server (development, CI); 3 in cluster deploys. */
  replicas: z.int().min(1).max(5).default(1),
  /**
   * How long JetStream remembers a `Nats-Msg-Id` for dedupe. Beyond it (and
   * across leader changes) a re-sent append is not recognised: callers stay
   * idempotent by their own keys.
   */
  duplicateWindowMs: z.int().min(1_000).default(2 * 60_000),
  /**
   * Byte bound of the whole log; reaching it refuses writes (discard `new`).
   * The server reserves it against its JetStream storage when the stream is
   * created, so it must fit the server's `max_file_store`.
   */
  maxBytes: z.int().min(1).default(10 * GiB),
  /** Message-count bound of the whole log; -1 is unbounded (the byte bound still holds). */
  maxMsgs: z.int().min(-1).refine((n) => n !== 0, 'must be -1 or positive').default(-1),
  /** Largest stored event in bytes (envelope JSON); the server's max_payload is 1 MiB by default. */
  maxMsgSize: z.int().min(256).default(1 * MiB),
  /** Per-aggregate heads remembered to spare a read before an append. */
  headCacheSize: z.int().min(0).default(10_000),
  /**
   * Verified events kept in memory so that reading an aggregate again fetches
   * only what was appended since (one message get when nothing or one event
   * was); least recently read aggregates evicted first. 0 turns it off.
   */
  readCacheEvents: z.int().min(0).default(50_000),
  /** Timeout of each request to the server (publish ack, message get). */
  requestTimeoutMs: z.int().min(100).default(5_000),
});
export type EventStoreConfig = z.output<typeof EventStoreConfig>;
export type EventStoreConfigInput = z.input<typeof EventStoreConfig>;

export function parseEventStoreConfig(input: EventStoreConfigInput = {}): EventStoreConfig {
  const result = EventStoreConfig.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
  throw new EventStoreError(
    'EVENTSTORE_CONFIG_INVALID',
    `event store config is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { issues },
    result.error,
  );
}

/** The limits the store sets on the stream; all can be changed in place. */
type ManagedLimits = Pick<
  StreamConfig,
  | 'max_bytes'
  | 'max_msgs'
  | 'max_msg_size'
  | 'max_age'
  | 'max_msgs_per_subject'
  | 'duplicate_window'
  | 'discard'
  | 'deny_delete'
  | 'deny_purge'
  | 'allow_rollup_hdrs'
  | 'num_replicas'
>;

function managedLimits(config: EventStoreConfig): ManagedLimits {
  return {
    max_bytes: config.maxBytes,
    max_msgs: config.maxMsgs,
    max_msg_size: config.maxMsgSize,
    max_age: 0,
    max_msgs_per_subject: -1,
    duplicate_window: config.duplicateWindowMs * 1_000_000,
    discard: DiscardPolicy.New,
    deny_delete: true,
    deny_purge: true,
    allow_rollup_hdrs: false,
    num_replicas: config.replicas,
  };
}

export function streamSubjects(config: EventStoreConfig): string[] {
  return [`${config.subjectPrefix}.>`];
}

/** The full stream configuration the store creates. */
export function desiredStreamConfig(config: EventStoreConfig): Partial<StreamConfig> & { name: string } {
  return {
    name: config.stream,
    subjects: streamSubjects(config),
    retention: RetentionPolicy.Limits,
    storage: config.storage === 'file' ? StorageType.File : StorageType.Memory,
    max_consumers: -1,
    ...managedLimits(config),
  };
}

/**
 * Settings that cannot be changed in place (or whose change would turn the
 * stream into something else): a mismatch fails start-up instead of writing
 * events somewhere they do not belong.
 */
function immutableMismatches(actual: StreamConfig, config: EventStoreConfig): string[] {
  const desired = desiredStreamConfig(config);
  const fields: string[] = [];
  if (actual.storage !== desired.storage) fields.push('storage');
  const subjects = [...(actual.subjects ?? [])].sort();
  if (subjects.length !== 1 || subjects[0] !== desired.subjects?.[0]) fields.push('subjects');
  if (actual.retention !== RetentionPolicy.Limits) fields.push('retention');
  if (actual.mirror) fields.push('mirror');
  if (actual.sources && actual.sources.length > 0) fields.push('sources');
  if (actual.sealed) fields.push('sealed');
  return fields;
}

function limitMismatches(actual: StreamConfig, config: EventStoreConfig): (keyof ManagedLimits)[] {
  const wanted = managedLimits(config);
  return (Object.keys(wanted) as (keyof ManagedLimits)[]).filter((key) => actual[key] !== wanted[key]);
}

export type EnsureStreamOutcome = {
  readonly action: 'created' | 'updated' | 'unchanged';
  readonly stream: string;
  /** Managed limits that were changed in place (empty unless `updated`). */
  readonly updatedFields: readonly string[];
  /** Capacities the stream runs above this process's configuration, kept (never lowered by a client): field → the stream's value. */
  readonly kept: Readonly<Record<string, unknown>>;
};

/** JetStream API codes for configuration the server refuses. */
const JS_STREAM_NAME_IN_USE = 10058;
const JS_SUBJECTS_OVERLAP = 10065;
const JS_REPLICAS_NOT_SUPPORTED = 10074;
const JS_INVALID_CONFIG = 10052;
const JS_STREAM_NOT_FOUND = 10059;
const JS_INSUFFICIENT_RESOURCES = 10023;
const JS_STORAGE_RESOURCES_EXCEEDED = 10047;
const REFUSED_CONFIG_CODES = new Set([JS_SUBJECTS_OVERLAP, JS_REPLICAS_NOT_SUPPORTED, JS_INVALID_CONFIG, JS_INSUFFICIENT_RESOURCES, JS_STORAGE_RESOURCES_EXCEEDED]);

export interface EnsureStreamOptions {
  /**
   * The operator's `writ streams ensure`: bring the limits to the configured ones
   * in place, lower ones included. A process opening the log (default) never lowers
   * a capacity the stream runs with (replicas, bytes, messages, message size): a
   * service left at 1 replica on a 3-node cluster would drop the log to one copy.
   * It keeps the stream's value and reports it (`kept`); raising a limit or
   * restoring a fixed protection (discard new, deny delete/purge) is still applied.
   */
  readonly reconfigure?: boolean;
}

/** Capacities a client never lowers (-1: unlimited). */
const CAPACITIES: ReadonlySet<keyof ManagedLimits> = new Set(['num_replicas', 'max_bytes', 'max_msgs', 'max_msg_size']);
const capacity = (value: unknown) => (typeof value === 'number' && value >= 0 ? value : Number.POSITIVE_INFINITY);

/**
 * Creates the event stream, or brings an existing one to the configured limits
 * in place (see `EnsureStreamOptions` for what a process never lowers);
 * idempotent, so every service runs it at start-up. Fails with
 * `EVENTSTORE_STREAM_CONFIG_MISMATCH` when the stream exists in a shape that
 * cannot be updated (storage, subjects, retention, mirror/sources, sealed), or
 * when the server does not honour a setting (e.g. 3 replicas on a single server).
 */
export async function ensureEventStream(jsm: JetStreamManager, config: EventStoreConfig, options: EnsureStreamOptions = {}): Promise<EnsureStreamOutcome> {
  const existing = await streamInfo(jsm, config.stream);
  let action: EnsureStreamOutcome['action'];
  let updatedFields: (keyof ManagedLimits)[] = [];
  let kept: (keyof ManagedLimits)[] = [];
  if (existing === null) {
    try {
      await jsm.streams.add(desiredStreamConfig(config));
    } catch (error) {
      // Another process may have created it between our info and add: reconcile with theirs.
      if (jetStreamApiCode(error) === JS_STREAM_NAME_IN_USE) return ensureEventStream(jsm, config, options);
      throw refused(error, config, []);
    }
    action = 'created';
  } else {
    const immutable = immutableMismatches(existing.config, config);
    if (immutable.length > 0) {
      throw new EventStoreError(
        'EVENTSTORE_STREAM_CONFIG_MISMATCH',
        `stream ${config.stream} exists with ${immutable.join(', ')} that cannot be changed in place; migrate it explicitly`,
        { stream: config.stream, fields: immutable },
      );
    }
    const mismatched = limitMismatches(existing.config, config);
    const wanted = managedLimits(config);
    kept = options.reconfigure === true ? [] : mismatched.filter((field) => CAPACITIES.has(field) && capacity(wanted[field]) < capacity(existing.config[field]));
    updatedFields = mismatched.filter((field) => !kept.includes(field));
    if (updatedFields.length > 0) {
      const limits: Record<string, unknown> = { ...wanted };
      for (const field of kept) limits[field] = existing.config[field];
      try {
        await jsm.streams.update(config.stream, limits as Partial<StreamConfig>);
      } catch (error) {
        throw refused(error, config, updatedFields);
      }
    }
    action = updatedFields.length > 0 ? 'updated' : 'unchanged';
  }
  // The server can accept a setting it then does not run (2.9 stores
  // num_replicas 3 on a single server and keeps one copy): check what it runs.
  assertHonoured(action === 'unchanged' && existing !== null ? existing : await requireStreamInfo(jsm, config.stream), config, kept);
  const keptValues = Object.fromEntries(kept.map((field) => [field, existing?.config[field]]));
  return { action, stream: config.stream, updatedFields, kept: keptValues };
}

function assertHonoured(stored: StreamInfo, config: EventStoreConfig, kept: readonly string[]): void {
  const fields: string[] = [...immutableMismatches(stored.config, config), ...limitMismatches(stored.config, config).filter((field) => !kept.includes(field))];
  const copies = 1 + (stored.cluster?.replicas?.length ?? 0);
  if (copies < config.replicas && !fields.includes('num_replicas')) fields.push('num_replicas');
  if (fields.length > 0) {
    throw new EventStoreError(
      'EVENTSTORE_STREAM_CONFIG_MISMATCH',
      `the server does not run stream ${config.stream} with the configured ${fields.join(', ')}`,
      { stream: config.stream, fields },
    );
  }
}

async function requireStreamInfo(jsm: JetStreamManager, stream: string): Promise<StreamInfo> {
  const info = await streamInfo(jsm, stream);
  if (info === null) {
    throw new EventStoreError('EVENTSTORE_UNAVAILABLE', `stream ${stream} vanished during start-up`, { operation: 'ensure stream' });
  }
  return info;
}

async function streamInfo(jsm: JetStreamManager, stream: string): Promise<StreamInfo | null> {
  try {
    return await jsm.streams.info(stream);
  } catch (error) {
    if (jetStreamApiCode(error) === JS_STREAM_NOT_FOUND) return null;
    throw fromNatsError(error, { operation: `stream info ${stream}` });
  }
}

function refused(error: unknown, config: EventStoreConfig, fields: readonly string[]): EventStoreError {
  const code = jetStreamApiCode(error);
  if (code !== null && REFUSED_CONFIG_CODES.has(code)) {
    const named =
      code === JS_SUBJECTS_OVERLAP
        ? ['subjects']
        : code === JS_REPLICAS_NOT_SUPPORTED
          ? ['num_replicas']
          : code === JS_STORAGE_RESOURCES_EXCEEDED || code === JS_INSUFFICIENT_RESOURCES
            ? ['max_bytes']
            : fields;
    return new EventStoreError(
      'EVENTSTORE_STREAM_CONFIG_MISMATCH',
      `the server refused the configuration of stream ${config.stream}: ${(error as Error).message}`,
      { stream: config.stream, fields: named },
      error,
    );
  }
  return fromNatsError(error, { operation: `ensure stream ${config.stream}` });
}
