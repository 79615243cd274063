import { Objm, type ObjectInfo, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { hasErrorCode } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { artifactObjectName, artifactUri, type NatsArtifactStore } from '@writ/runtime';
import type { ArchivePurgeOutcome, CheckpointStore, StoredObject } from '../application/ports.js';
import { artifactStoreFailure } from './artifact-store.js';

/** Object metadata key of the owner note. */
export const OWNER_KEY = 'writ-owner';

function digestMatches(info: ObjectInfo, sha256: string): boolean {
  return info.digest.replace(/^SHA-256=/, '').replace(/=+$/, '') === Buffer.from(sha256, 'hex').toString('base64url');
}

const reason = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));

/**
 * Cell checkpoints and archive manifests in the shared artifact bucket (the same objects,
 * names `sha256-<hex>` and URIs as every artifact), with one addition: an owner note. When a
 * cell's put creates an object, the object's metadata records `writ-owner: cell:<cell_id>`;
 * content already in the bucket (stored first by a task, a service or another cell) is left
 * as it is, so its note stays someone else's or absent. After the archive retention the
 * cell's purge deletes only objects whose note is its own (`deleteOwned`): the
 * content-addressed bucket keeps no reference counts, and this is what tells an object the
 * cell brought into the store from one it merely shares.
 */
export class NatsCheckpointStore implements CheckpointStore {
  readonly #nc: NatsConnection;
  readonly #artifacts: NatsArtifactStore;
  #bucket: Promise<ObjectStore> | undefined;

  /** `artifacts`: the executor's artifact store on the same bucket (reads go through it). */
  constructor(nc: NatsConnection, artifacts: NatsArtifactStore) {
    this.#nc = nc;
    this.#artifacts = artifacts;
  }

  #store(): Promise<ObjectStore> {
    this.#bucket ??= new Objm(this.#nc).open(this.#artifacts.bucket).catch((cause: unknown) => {
      this.#bucket = undefined;
      throw artifactStoreFailure(`cannot open the artifact bucket ${this.#artifacts.bucket}: ${reason(cause)}`, { cause, details: { bucket: this.#artifacts.bucket } });
    });
    return this.#bucket;
  }

  async put(bytes: Uint8Array, owner?: string): Promise<StoredObject> {
    if (owner === undefined) return this.#artifacts.put(bytes);
    const sha256 = sha256Hex(bytes);
    const name = artifactObjectName(sha256);
    const stored: StoredObject = { sha256, uri: artifactUri(this.#artifacts.bucket, sha256), byte_size: bytes.byteLength };
    const store = await this.#store();
    try {
      const existing = await store.info(name);
      if (existing !== null && !existing.deleted && existing.size === bytes.byteLength && digestMatches(existing, sha256)) return stored;
      const info = await store.putBlob({ name, metadata: { [OWNER_KEY]: owner } }, bytes);
      if (!digestMatches(info, sha256)) {
        throw artifactStoreFailure(`the object store recorded digest ${info.digest} for ${name}`, { details: { bucket: this.#artifacts.bucket, name } });
      }
      return stored;
    } catch (cause) {
      if (hasErrorCode(cause, 'EXECUTOR_ARTIFACT_STORE_FAILED')) throw cause;
      throw artifactStoreFailure(`cannot store ${name}: ${reason(cause)}`, { cause, details: { bucket: this.#artifacts.bucket, name } });
    }
  }

  get(sha256: string): Promise<Uint8Array | null> {
    return this.#artifacts.get(sha256);
  }

  async deleteOwned(sha256: string, owner: string): Promise<ArchivePurgeOutcome> {
    const name = artifactObjectName(sha256);
    const store = await this.#store();
    try {
      const info = await store.info(name);
      if (info === null || info.deleted) return 'absent';
      if (info.metadata?.[OWNER_KEY] !== owner) return 'kept';
      await store.delete(name);
      return 'deleted';
    } catch (cause) {
      throw artifactStoreFailure(`cannot delete ${name}: ${reason(cause)}`, { cause, details: { bucket: this.#artifacts.bucket, name } });
    }
  }
}
