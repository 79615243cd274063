import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { PolicyProfileRecord } from '@writ/contracts';
import { canonicalJson } from '@writ/crypto';
import type { Logger } from '@writ/telemetry';
import type { ProfileCatalog } from '../application/profile-catalog.js';
import type { ProfileBucket, StoredProfileEntry } from '../application/ports.js';

export interface ProfileBucketOptions {
  /** `WRIT_POLICY_BUCKET` (the stream is `KV_<bucket>`). */
  readonly bucket: string;
  /** Revisions kept per key (at least 16). */
  readonly history: number;
  /** `WRIT_STREAM_REPLICAS`. */
  readonly replicas: number;
  readonly maxBytes: number;
}

const encoder = new TextEncoder();

function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

function parseValue(entry: { value: Uint8Array; json<T>(): T }): { value?: unknown; error?: unknown } {
  try {
    return { value: entry.json<unknown>() };
  } catch (error) {
    return { error };
  }
}

/**
 * The profile bucket on NATS KV: key = profile id, value = the RFC 8785
 * canonical JSON of its PolicyProfileRecord. Created on first start (file
 * storage, `history` revisions per key, replicas from the config); writes are
 * guarded by the revision read, so they never overwrite what they did not see.
 */
export class KvProfileBucket implements ProfileBucket {
  private constructor(readonly kv: KV, readonly name: string) {}

  static async open(nc: NatsConnection, options: ProfileBucketOptions): Promise<KvProfileBucket> {
    const kv = await new Kvm(nc).create(options.bucket, {
      history: options.history,
      replicas: options.replicas,
      max_bytes: options.maxBytes,
      description: 'Writ policy profiles: the current record of each profile (the event log holds every version)',
    });
    return new KvProfileBucket(kv, options.bucket);
  }

  async get(profileId: string): Promise<StoredProfileEntry | null> {
    const entry = await this.kv.get(profileId);
    if (entry === null || entry.operation !== 'PUT') return null;
    const parsed = parseValue(entry);
    return { revision: entry.revision, value: parsed.error === undefined ? parsed.value : undefined };
  }

  async write(profileId: string, record: PolicyProfileRecord, revision: number | null): Promise<boolean> {
    const data = encoder.encode(canonicalJson(record));
    try {
      if (revision === null) await this.kv.create(profileId, data);
      else await this.kv.update(profileId, data, revision);
      return true;
    } catch (error) {
      if (isWrongLastSequence(error)) return false;
      throw error;
    }
  }

  /**
   * Follows the bucket into `catalog` (hot reload): every current value first,
   * then each change as it happens. `ready` resolves once the values present
   * when the watch began are loaded. A record the catalog refuses (invalid,
   * not signed by a director, a replay) is logged at error level with its code
   * and ignored: the version in force stays.
   */
  async watch(catalog: ProfileCatalog, logger: Logger): Promise<ProfileWatch> {
    const initiallyEmpty = (await this.kv.status()).values === 0;
    const iterator = await this.kv.watch();
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    let isReady = false;
    const setReady = () => {
      isReady = true;
      markReady();
    };
    if (initiallyEmpty) setReady();
    let ended = false;
    let stopping = false;
    const loop = (async () => {
      try {
        for await (const entry of iterator) {
          await applyEntry(catalog, entry, logger);
          if (!isReady && (entry.isUpdate || entry.delta === 0)) setReady();
        }
      } catch (error) {
        logger.error({ err: error, bucket: this.name }, 'policy profile watch failed: profiles are no longer hot-reloaded');
      } finally {
        ended = true;
        if (!stopping) logger.error({ bucket: this.name }, 'policy profile watch ended: profiles are no longer hot-reloaded (readiness fails)');
      }
    })();
    return {
      ready,
      get loaded() {
        return isReady;
      },
      get healthy() {
        return !ended;
      },
      stop: async () => {
        stopping = true;
        iterator.stop();
        await loop;
      },
    };
  }
}

/** A running watch of the bucket. */
export interface ProfileWatch {
  /** Resolves once the values present at the start are loaded. */
  readonly ready: Promise<void>;
  readonly loaded: boolean;
  /** The watch is still following the bucket. */
  readonly healthy: boolean;
  stop(): Promise<void>;
}

async function applyEntry(catalog: ProfileCatalog, entry: KvWatchEntry, logger: Logger): Promise<void> {
  const parsed = entry.operation === 'PUT' ? parseValue(entry) : {};
  const change = await catalog.accept(entry.key, { operation: entry.operation, ...parsed });
  const where = { profile_id: entry.key, revision: entry.revision };
  switch (change.status) {
    case 'loaded':
      logger.info({ ...where, version: change.version, previous_version: change.previous_version }, 'policy profile loaded');
      break;
    case 'unchanged':
      break;
    case 'rejected':
      // Loud on purpose: someone wrote the bucket (or the log) around the apply request, or it is damaged. The version in force stays.
      logger.error({ ...where, code: change.code, err: change.error, kept_version: change.kept_version }, `${change.code}: policy profile record refused; the version in force stays`);
      break;
    case 'deleted':
      logger.warn({ ...where, operation: entry.operation, kept_version: change.kept_version }, 'policy profile removed from the bucket around the log; the loaded version stays in use until a restart reconciles');
      break;
  }
}
