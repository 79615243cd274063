import type { NatsConnection } from '@nats-io/transport-node';
import { lazyArtifactStore, type NatsArtifactStore } from '@writ/runtime';
import type { SeedArtifacts } from '../application/participant-ports.js';
import { IngressError } from '../ingress-errors.js';

export interface ArtifactBucketSettings {
  readonly bucket: string;
  readonly maxBytes: number;
  readonly replicas: number;
}

/**
 * The shared content-addressed artifact bucket (the executor's), opened on
 * first use: only a Last Will with artifacts needs it, so an ingress that never
 * sees one never creates the bucket.
 */
export class LazyArtifactBucket implements SeedArtifacts {
  readonly #open: () => Promise<NatsArtifactStore>;

  constructor(nc: NatsConnection, settings: ArtifactBucketSettings) {
    this.#open = lazyArtifactStore(nc, {
      ...settings,
      failure: (message, options) => new IngressError('INGRESS_ARTIFACTS_UNAVAILABLE', message, options),
    });
  }

  async holds(sha256: string): Promise<boolean> {
    return (await (await this.#open()).get(sha256)) !== null;
  }

  async store(bytes: Uint8Array): Promise<void> {
    await (await this.#open()).put(bytes);
  }
}
