import type { ApprovalResolution } from '@writ/contracts';
import { SIGNED_REQUESTS, claimedSignedRequest } from '@writ/runtime';
import { resolutionFailure } from './signed-request.js';

/**
 * The resolution a compact JWS claims to carry, read WITHOUT verifying it:
 * only to refuse a resolution of another approval before any key is looked up.
 * Nothing read here is trusted; verifySignedRequest checks it after.
 */
export function claimedResolution(jws: string): ApprovalResolution {
  return claimedSignedRequest(jws, SIGNED_REQUESTS.approvalResolution, resolutionFailure);
}
