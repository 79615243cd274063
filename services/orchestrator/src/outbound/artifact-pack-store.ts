import type { NatsConnection } from '@nats-io/transport-node';
import { lazyArtifactStore, type NatsArtifactStore } from '@writ/runtime';
import type { ContextPackStore, StoredPack } from '../application/ports.js';
import { OrchestratorError } from '../application/orchestrator.errors.js';

export interface ArtifactBucketSettings {
  readonly bucket: string;
  readonly maxBytes: number;
  readonly replicas: number;
}

/**
 * The shared content-addressed artifact bucket (the executor's), where each attempt's
 * context pack is stored under `sha256-<hex>`; opened on first use, so a bucket outage
 * at start-up never keeps the orchestrator from governing (only the packs wait).
 */
export class ArtifactPackStore implements ContextPackStore {
  readonly #open: () => Promise<NatsArtifactStore>;

  constructor(nc: NatsConnection, settings: ArtifactBucketSettings) {
    this.#open = lazyArtifactStore(nc, {
      ...settings,
      failure: (message, options) => new OrchestratorError('ORCHESTRATOR_CONTEXT_PACK_STORE_FAILED', message, options),
    });
  }

  async put(bytes: Uint8Array): Promise<StoredPack> {
    const stored = await (await this.#open()).put(bytes);
    return { sha256: stored.sha256, uri: stored.uri, byte_size: stored.byte_size };
  }
}
