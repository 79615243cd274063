import type { RotateKey, RotateKeyReply } from '@writ/contracts';
import { rotateKeyOnRequest } from '@writ/runtime';
import { ApprovalServiceError } from './approval-errors.js';
import type { Clock, KeyRotator, PrincipalDirectory } from './ports.js';
import { signedRequestFailure } from './signed-request.js';

export interface RotateKeyDeps {
  readonly principals: PrincipalDirectory;
  readonly clock: Clock;
  readonly freshnessSeconds: number;
  readonly keys: KeyRotator;
  /** The service name a rotation must be signed for (`approval`). */
  readonly service: string;
}

/**
 * `<root>.qry.approval.rotate-key` (request/reply): a director's signed
 * KeyRotation for this service rotates its signing key (`@writ/runtime`'s
 * rotateKeyOnRequest, shared with the receipt service). The keyring appends
 * `principal.key_added` before the new key signs; the replaced key stays valid
 * until `retire_after` (grant TTL + skew), then it is revoked (`rotated`).
 * Refusals: APPROVAL_SIGNATURE_INVALID, APPROVAL_SIGNER_NOT_ALLOWED,
 * APPROVAL_SIGNED_REQUEST_STALE, APPROVAL_SIGNED_REQUEST_MISMATCH,
 * CONTRACT_INVALID; anything else is APPROVAL_UNAVAILABLE.
 */
export class RotateKeyHandler {
  constructor(private readonly deps: RotateKeyDeps) {}

  rotate(request: RotateKey): Promise<RotateKeyReply> {
    return rotateKeyOnRequest(request, {
      ...this.deps,
      failure: signedRequestFailure,
      mismatch: (message, details) => new ApprovalServiceError('APPROVAL_SIGNED_REQUEST_MISMATCH', message, { details }),
      unavailable: (cause) => new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the signing key could not be rotated now; retry', { cause }),
    });
  }
}
