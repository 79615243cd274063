import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { sha256Hex } from '@writ/crypto';

/** Content stored in the artifact bucket. */
export interface StoredArtifact {
  readonly sha256: string;
  /** `nats-obj://<bucket>/sha256-<hex>`. */
  readonly uri: string;
  readonly byte_size: number;
}

/**
 * How a service reports an artifact store failure: its own error code
 * (`EXECUTOR_ARTIFACT_STORE_FAILED`, `APPROVAL_ARTIFACT_UNAVAILABLE`), so a
 * caller's guards keep checking the code of the context it knows.
 */
export type ArtifactStoreFailure = (message: string, options: { readonly cause?: unknown; readonly details: Record<string, unknown> }) => Error;

export interface ArtifactBucketOptions {
  /** Bucket name (the stream is `OBJ_<bucket>`); every service of a deployment shares one, so a task's artifacts are in one place. */
  readonly bucket: string;
  /** Byte bound when the bucket is created (the server reserves it; an existing bucket is used as it is). */
  readonly maxBytes: number;
  readonly replicas: number;
  readonly failure: ArtifactStoreFailure;
}

/** Object name of content with this SHA-256: `sha256-<hex>`. */
export function artifactObjectName(sha256: string): string {
  return `sha256-${sha256}`;
}

/** `nats-obj://<bucket>/sha256-<hex>`: the artifact `uri` of content in a bucket. */
export function artifactUri(bucket: string, sha256: string): string {
  return `nats-obj://${bucket}/${artifactObjectName(sha256)}`;
}

/** The object store's digest is `SHA-256=<base64url, padded>`. */
function digestMatches(digest: string, sha256: string): boolean {
  const prefix = 'SHA-256=';
  if (!digest.startsWith(prefix)) return false;
  return digest.slice(prefix.length).replace(/=+$/, '') === Buffer.from(sha256, 'hex').toString('base64url');
}

const reason = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));

/** Marks an error this store already reported, so `put` does not wrap it twice. */
const reported = new WeakSet<object>();

/**
 * Content-addressed artifacts in a NATS Object Store bucket (file storage):
 * each content is stored once under `sha256-<hex>`, and the store's own
 * digest (which it checks again on every read) must be that same hash.
 */
export class NatsArtifactStore {
  readonly bucket: string;
  readonly #store: ObjectStore;
  readonly #failure: ArtifactStoreFailure;

  private constructor(bucket: string, store: ObjectStore, failure: ArtifactStoreFailure) {
    this.bucket = bucket;
    this.#store = store;
    this.#failure = failure;
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
      return new NatsArtifactStore(options.bucket, store, options.failure);
    } catch (cause) {
      throw options.failure(`cannot create or open the artifact bucket ${options.bucket}: ${reason(cause)}`, { cause, details: { bucket: options.bucket } });
    }
  }

  /**
   * Opens the bucket without creating it: for a reader (the projection serving stored
   * content), which has no business reserving the bucket's bytes; fails when it does not exist yet.
   */
  static async openExisting(nc: NatsConnection, options: Pick<ArtifactBucketOptions, 'bucket' | 'failure'>): Promise<NatsArtifactStore> {
    try {
      return new NatsArtifactStore(options.bucket, await new Objm(nc).open(options.bucket), options.failure);
    } catch (cause) {
      throw options.failure(`cannot open the artifact bucket ${options.bucket}: ${reason(cause)}`, { cause, details: { bucket: options.bucket } });
    }
  }

  #fail(message: string, details: Record<string, unknown>, cause?: unknown): Error {
    const error = this.#failure(message, { cause, details });
    reported.add(error);
    return error;
  }

  /** Stores `bytes` under their SHA-256 (once: the same content is stored once). */
  async put(bytes: Uint8Array): Promise<StoredArtifact> {
    const sha256 = sha256Hex(bytes);
    const name = artifactObjectName(sha256);
    const stored: StoredArtifact = { sha256, uri: artifactUri(this.bucket, sha256), byte_size: bytes.byteLength };
    try {
      const existing = await this.#store.info(name);
      if (existing !== null && !existing.deleted && existing.size === bytes.byteLength && digestMatches(existing.digest, sha256)) return stored;
      const info = await this.#store.putBlob({ name }, bytes);
      if (!digestMatches(info.digest, sha256)) throw this.#fail(`the object store recorded digest ${info.digest} for ${name}`, { name });
      return stored;
    } catch (cause) {
      if (typeof cause === 'object' && cause !== null && reported.has(cause)) throw cause;
      throw this.#fail(`cannot store artifact ${name}: ${reason(cause)}`, { bucket: this.bucket, name }, cause);
    }
  }

  /** The content stored under `sha256`, or null if there is none (the store checks its digest while reading). */
  async get(sha256: string): Promise<Uint8Array | null> {
    try {
      return await this.#store.getBlob(artifactObjectName(sha256));
    } catch (cause) {
      throw this.#fail(`cannot read artifact ${artifactObjectName(sha256)}: ${reason(cause)}`, { bucket: this.bucket }, cause);
    }
  }
}

/**
 * The bucket opened on first use, and again on the next use after a failed open: a service
 * that needs it only now and then (a Last Will with artifacts, a context pack) never fails to
 * start, or stays failed, because the bucket was unavailable once. A writer creates it if need
 * be (`open`); a reader (`{ create: false }`) only opens it, so a bucket that appears later is
 * found by the next read and a reader never reserves its bytes.
 */
export function lazyArtifactStore(nc: NatsConnection, options: ArtifactBucketOptions): () => Promise<NatsArtifactStore>;
export function lazyArtifactStore(nc: NatsConnection, options: Pick<ArtifactBucketOptions, 'bucket' | 'failure'>, mode: { readonly create: false }): () => Promise<NatsArtifactStore>;
export function lazyArtifactStore(nc: NatsConnection, options: ArtifactBucketOptions | Pick<ArtifactBucketOptions, 'bucket' | 'failure'>, mode?: { readonly create: false }): () => Promise<NatsArtifactStore> {
  let opened: Promise<NatsArtifactStore> | undefined;
  const open = () => (mode?.create === false ? NatsArtifactStore.openExisting(nc, options) : NatsArtifactStore.open(nc, options as ArtifactBucketOptions));
  return () => {
    opened ??= open().catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };
}
