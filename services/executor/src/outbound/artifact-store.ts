import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { sha256Hex } from '@writ/crypto';
import { ExecutorError } from '../application/executor-errors.js';
import type { ArtifactStore, StoredObject } from '../application/ports.js';

export interface ArtifactBucketOptions {
  /** Bucket name (the stream is `OBJ_<bucket>`). */
  readonly bucket: string;
  /** Byte bound of the bucket (reserved by the server). */
  readonly maxBytes: number;
  readonly replicas: number;
}

/** Object name of content with this SHA-256: `sha256-<hex>`. */
export function objectName(sha256: string): string {
  return `sha256-${sha256}`;
}

/** `nats-obj://<bucket>/sha256-<hex>`: the artifact `uri` of content in a bucket. */
export function artifactUri(bucket: string, sha256: string): string {
  return `nats-obj://${bucket}/${objectName(sha256)}`;
}

function storeFailed(what: string, cause: unknown, details: Record<string, unknown>): ExecutorError {
  return new ExecutorError('EXECUTOR_ARTIFACT_STORE_FAILED', `${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause, details });
}

/**
 * Content-addressed artifacts in a NATS Object Store bucket (file storage):
 * each content is stored once under `sha256-<hex>`, and the store's own digest
 * (which it checks again on every read) must be that same hash.
 */
export class NatsArtifactStore implements ArtifactStore {
  readonly bucket: string;
  readonly #store: ObjectStore;

  private constructor(bucket: string, store: ObjectStore) {
    this.bucket = bucket;
    this.#store = store;
  }

  /** Creates the bucket if it does not exist, then opens it. */
  static async open(nc: NatsConnection, options: ArtifactBucketOptions): Promise<NatsArtifactStore> {
    try {
      const store = await new Objm(nc).create(options.bucket, {
        storage: StorageType.File,
        replicas: options.replicas,
        max_bytes: options.maxBytes,
        description: 'Writ artifacts, content-addressed: object name sha256-<hex>',
      });
      return new NatsArtifactStore(options.bucket, store);
    } catch (cause) {
      throw storeFailed(`cannot create or open the artifact bucket ${options.bucket}`, cause, { bucket: options.bucket });
    }
  }

  async put(bytes: Uint8Array): Promise<StoredObject> {
    const sha256 = sha256Hex(bytes);
    const name = objectName(sha256);
    const stored: StoredObject = { sha256, uri: artifactUri(this.bucket, sha256), byte_size: bytes.byteLength };
    try {
      const existing = await this.#store.info(name);
      if (existing !== null && !existing.deleted && existing.size === bytes.byteLength && digestMatches(existing.digest, sha256)) return stored;
      const info = await this.#store.putBlob({ name }, bytes);
      if (!digestMatches(info.digest, sha256)) {
        throw new ExecutorError('EXECUTOR_ARTIFACT_STORE_FAILED', `the object store recorded digest ${info.digest} for ${name}`, { details: { name } });
      }
      return stored;
    } catch (cause) {
      if (cause instanceof ExecutorError) throw cause;
      throw storeFailed(`cannot store artifact ${name}`, cause, { bucket: this.bucket, name });
    }
  }

  /** The content stored under `sha256`, or null if there is none (the store checks its digest while reading). */
  async get(sha256: string): Promise<Uint8Array | null> {
    try {
      return await this.#store.getBlob(objectName(sha256));
    } catch (cause) {
      throw storeFailed(`cannot read artifact ${objectName(sha256)}`, cause, { bucket: this.bucket });
    }
  }
}

/** The object store's digest is `SHA-256=<base64url, padded>`. */
function digestMatches(digest: string, sha256: string): boolean {
  const prefix = 'SHA-256=';
  if (!digest.startsWith(prefix)) return false;
  return digest.slice(prefix.length).replace(/=+$/, '') === Buffer.from(sha256, 'hex').toString('base64url');
}
