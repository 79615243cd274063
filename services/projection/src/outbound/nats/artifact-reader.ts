import type { NatsConnection } from '@nats-io/transport-node';
import { lazyArtifactStore, type NatsArtifactStore } from '@writ/runtime';
import type { ArtifactReader } from '../../application/context-packs.js';
import { ProjectionError } from '../../application/projection-errors.js';

/**
 * The shared artifact bucket, opened for reading on first use (never created here: the
 * executor or the orchestrator creates it with its byte bound). Not cached on failure,
 * so a bucket that appears later is found by the next read.
 */
export class NatsArtifactReader implements ArtifactReader {
  readonly #open: () => Promise<NatsArtifactStore>;

  constructor(nc: NatsConnection, bucket: string) {
    this.#open = lazyArtifactStore(nc, { bucket, failure: (message, options) => new ProjectionError('PROJECTION_CONTEXT_PACK_UNAVAILABLE', message, options) }, { create: false });
  }

  async get(sha256: string): Promise<Uint8Array | null> {
    return (await this.#open()).get(sha256);
  }
}
