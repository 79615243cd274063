import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { sha256Hex } from '@writ/crypto';
import { ApprovalServiceError } from '../application/approval-errors.js';
import type { ArtifactStore, StoredArtifact } from '../application/ports.js';

export interface ArtifactBucketOptions {
  /** Bucket name (the stream is `OBJ_<bucket>`): the executor's, so every artifact of a task is in one place. */
  readonly bucket: string;
  /** Byte bound when this service creates the bucket (an existing bucket is used as it is). */
  readonly maxBytes: number;
  readonly replicas: number;
}

/** Object name of content with this SHA-256: `sha256-<hex>` (the executor's naming). */
export function objectName(sha256: string): string {
  return `sha256-${sha256}`;
}

function unavailable(what: string, cause: unknown, details: Record<string, unknown>): ApprovalServiceError {
  return new ApprovalServiceError('APPROVAL_ARTIFACT_UNAVAILABLE', `${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause, details });
}

/** The object store's digest is `SHA-256=<base64url, padded>`. */
function digestMatches(digest: string, sha256: string): boolean {
  const prefix = 'SHA-256=';
  return digest.startsWith(prefix) && digest.slice(prefix.length).replace(/=+$/, '') === Buffer.from(sha256, 'hex').toString('base64url');
}

/**
 * Approval packets as content-addressed artifacts in the NATS Object Store bucket the executor
 * keeps its artifacts in (file storage): stored once under `sha256-<hex>`, and the store's own
 * digest (checked again on every read) must be that hash.
 */
export class NatsArtifactStore implements ArtifactStore {
  private constructor(
    readonly bucket: string,
    private readonly store: ObjectStore,
  ) {}

  /** Creates the bucket if it does not exist (else uses it as configured), then opens it. */
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
      throw unavailable(`cannot create or open the artifact bucket ${options.bucket}`, cause, { bucket: options.bucket });
    }
  }

  async put(bytes: Uint8Array): Promise<StoredArtifact> {
    const sha256 = sha256Hex(bytes);
    const name = objectName(sha256);
    const stored: StoredArtifact = { sha256, uri: `nats-obj://${this.bucket}/${name}`, byte_size: bytes.byteLength };
    try {
      const existing = await this.store.info(name);
      if (existing !== null && !existing.deleted && existing.size === bytes.byteLength && digestMatches(existing.digest, sha256)) return stored;
      const info = await this.store.putBlob({ name }, bytes);
      if (!digestMatches(info.digest, sha256)) {
        throw new ApprovalServiceError('APPROVAL_ARTIFACT_UNAVAILABLE', `the object store recorded digest ${info.digest} for ${name}`, { details: { name } });
      }
      return stored;
    } catch (cause) {
      if (cause instanceof ApprovalServiceError) throw cause;
      throw unavailable(`cannot store artifact ${name}`, cause, { bucket: this.bucket, name });
    }
  }

  async get(sha256: string): Promise<Uint8Array | null> {
    try {
      return await this.store.getBlob(objectName(sha256));
    } catch (cause) {
      throw unavailable(`cannot read artifact ${objectName(sha256)}`, cause, { bucket: this.bucket });
    }
  }
}
