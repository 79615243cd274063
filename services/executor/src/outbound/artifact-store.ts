import type { ArtifactStoreFailure } from '@writ/runtime';
import { ExecutorError } from '../application/executor-errors.js';

/** The shared artifact bucket (`@writ/runtime`'s NatsArtifactStore) reports its failures with the executor's code. */
export const artifactStoreFailure: ArtifactStoreFailure = (message, options) => new ExecutorError('EXECUTOR_ARTIFACT_STORE_FAILED', message, options);
