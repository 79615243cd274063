import type { ArtifactStoreFailure } from '@writ/runtime';
import { ApprovalServiceError } from '../application/approval-errors.js';

/** Approval packets go to the executor's artifact bucket (`@writ/runtime`'s NatsArtifactStore); its failures carry the approval service's code. */
export const artifactStoreFailure: ArtifactStoreFailure = (message, options) => new ApprovalServiceError('APPROVAL_ARTIFACT_UNAVAILABLE', message, options);
