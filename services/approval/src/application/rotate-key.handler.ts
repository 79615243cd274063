import { hasErrorCode, type RotateKey, type RotateKeyReply } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { SIGNED_REQUESTS, verifySignedRequest } from '@writ/runtime';
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

const REPLY_CODES = new Set(['APPROVAL_SIGNATURE_INVALID', 'APPROVAL_SIGNER_NOT_ALLOWED', 'APPROVAL_SIGNED_REQUEST_STALE', 'APPROVAL_SIGNED_REQUEST_MISMATCH', 'CONTRACT_INVALID']);

/**
 * `<root>.qry.approval.rotate-key` (request/reply): a director's signed
 * KeyRotation for this service rotates its signing key. The new kid is derived
 * from the signed request, so a repeated request (within its freshness window)
 * rotates once and answers `already_rotated`. The keyring appends
 * `principal.key_added` before the new key signs; the replaced key stays valid
 * until `retire_after` (grant TTL + skew), then it is revoked (`rotated`).
 */
export class RotateKeyHandler {
  constructor(private readonly deps: RotateKeyDeps) {}

  async rotate(request: RotateKey): Promise<RotateKeyReply> {
    try {
      const { payload: rotation, signer } = await verifySignedRequest(
        request.rotation_jws,
        { ...SIGNED_REQUESTS.keyRotation, signers: 'director', freshnessSeconds: this.deps.freshnessSeconds },
        { principals: this.deps.principals, clock: this.deps.clock, failure: signedRequestFailure },
      );
      if (rotation.service !== this.deps.service) {
        throw new ApprovalServiceError('APPROVAL_SIGNED_REQUEST_MISMATCH', `the signed rotation is for the ${rotation.service} service, not ${this.deps.service}`, {
          details: { service: this.deps.service, signed_service: rotation.service },
        });
      }
      const kid = `${this.deps.keys.principalId.slice(0, 100)}-${sha256Hex(request.rotation_jws).slice(0, 16)}`;
      const result = await this.deps.keys.rotate({ kid, requestedBy: signer });
      return { principal_id: this.deps.keys.principalId, ...result };
    } catch (error) {
      if (hasErrorCode(error) && REPLY_CODES.has(error.code)) throw error;
      throw new ApprovalServiceError('APPROVAL_UNAVAILABLE', 'the signing key could not be rotated now; retry', { cause: error });
    }
  }
}
