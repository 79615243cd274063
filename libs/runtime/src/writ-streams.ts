import { DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { COMMANDS_STREAM, COMMANDS_SUBJECTS, DLQ_STREAM, DLQ_SUBJECTS, INGRESS_STREAM, INGRESS_SUBJECTS } from '@writ/contracts';
import { RuntimeError } from './runtime-errors.js';

const DAY_NS = 24 * 60 * 60 * 1e9;
const MINUTE_NS = 60 * 1e9;
/**
 * The ingress stream's duplicate window: the least JetStream accepts (100 ms).
 * Its dedupe is keyed by `Nats-Msg-Id` alone across the whole stream, not per
 * subject, so on the ingress stream one principal could make JetStream drop
 * another's message by publishing its msg id first. Ingress dedupes by its own
 * records (principal, key and bytes), and agents name their key in
 * `Writ-Idempotency-Key`, which JetStream ignores.
 */
export const INGRESS_DUPLICATE_WINDOW_NS = 100 * 1e6;
const GiB = 1024 ** 3;

/**
 * The bus streams beside the event log (docs/governed-path.md). They hold work,
 * not truth: limits retention with an age bound, and `discard: new` so a full
 * stream refuses publishes (the publisher sees an error) instead of dropping
 * unprocessed work.
 */
export interface WritStreamsOptions {
  readonly replicas?: number;
  /** Stream names and subjects for tests that must not share the real ones. */
  readonly names?: { ingress: string; commands: string; dlq: string };
  readonly subjects?: { ingress: string; commands: string; dlq: string };
  readonly maxBytes?: number;
}

export function writStreamConfigs(options: WritStreamsOptions = {}): StreamConfig[] {
  const names = options.names ?? { ingress: INGRESS_STREAM, commands: COMMANDS_STREAM, dlq: DLQ_STREAM };
  const subjects = options.subjects ?? { ingress: INGRESS_SUBJECTS, commands: COMMANDS_SUBJECTS, dlq: DLQ_SUBJECTS };
  const common = {
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    num_replicas: options.replicas ?? 1,
    max_msgs: -1,
    max_bytes: options.maxBytes ?? GiB,
    max_msg_size: 1024 * 1024,
    duplicate_window: 2 * MINUTE_NS,
  };
  return [
    { ...common, name: names.ingress, subjects: [subjects.ingress], max_age: 7 * DAY_NS, duplicate_window: INGRESS_DUPLICATE_WINDOW_NS },
    { ...common, name: names.commands, subjects: [subjects.commands], max_age: DAY_NS },
    { ...common, name: names.dlq, subjects: [subjects.dlq], max_age: 30 * DAY_NS },
  ] as StreamConfig[];
}

/**
 * Creates the bus streams, or brings their limits up to date; idempotent. A
 * stream already as configured is left alone (no update call): a service's
 * bus credential may not reconfigure streams, only the operator's may, so a
 * limit that differs fails the start with RUNTIME_STREAM_MISMATCH naming it.
 */
export async function ensureWritStreams(jsm: JetStreamManager, options: WritStreamsOptions = {}): Promise<void> {
  for (const desired of writStreamConfigs(options)) {
    const existing = await jsm.streams.info(desired.name).catch(() => null);
    if (existing === null) {
      await jsm.streams.add(desired);
      continue;
    }
    const subjects = existing.config.subjects ?? [];
    if (subjects.join(',') !== desired.subjects.join(',') || existing.config.storage !== desired.storage) {
      throw new RuntimeError(
        'RUNTIME_STREAM_MISMATCH',
        `stream ${desired.name} exists with subjects ${subjects.join(',')} and ${existing.config.storage} storage; Writ needs ${desired.subjects.join(',')} on file storage — move or delete it`,
        { details: { stream: desired.name } },
      );
    }
    const limits = { max_age: desired.max_age, max_bytes: desired.max_bytes, discard: desired.discard, duplicate_window: desired.duplicate_window };
    const differing = (Object.keys(limits) as (keyof typeof limits)[]).filter((field) => existing.config[field] !== limits[field]);
    if (differing.length === 0) continue;
    try {
      await jsm.streams.update(desired.name, { ...existing.config, ...limits });
    } catch (cause) {
      throw new RuntimeError(
        'RUNTIME_STREAM_MISMATCH',
        `stream ${desired.name} exists with other ${differing.join(', ')} than configured and could not be updated (${(cause as Error).message}); streams are reconfigured with the operator's credential only: align the settings, or update the stream as the operator`,
        { cause, details: { stream: desired.name, fields: differing } },
      );
    }
  }
}
