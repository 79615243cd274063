import type { RotateKey, RotateKeyReply } from '@writ/contracts';
import { rotateKeyOnRequest, type ServiceKeyRotator, type SignedRequestFailure, type SignedRequestPrincipals } from '@writ/runtime';
import type { Clock } from './ports.js';
import { ReceiptServiceError } from './receipt-errors.js';

export interface RotateKeyDeps {
  /** The principals in the log (`@writ/runtime`'s PrincipalRegistry): who signed the rotation, with which keys and roles. */
  readonly principals: SignedRequestPrincipals;
  readonly clock: Clock;
  /** `WRIT_RECEIPT_FRESHNESS_SECONDS`. */
  readonly freshnessSeconds: number;
  /** The service's rotating key, the replaced key's validity (`WRIT_RECEIPT_KEY_RETIRE_SECONDS`) bound in. */
  readonly keys: ServiceKeyRotator;
  /** The service name a rotation must be signed for (`receipt`). */
  readonly service: string;
}

/** A refusal of the signed rotation as this service's error; a payload off its contract stays CONTRACT_INVALID. */
const failure: SignedRequestFailure = (reason, message, details, cause) => {
  if (reason === 'contract_invalid') return cause instanceof Error ? cause : new ReceiptServiceError('RECEIPT_REQUEST_SIGNATURE_INVALID', message, { details });
  const code = ({ signature_invalid: 'RECEIPT_REQUEST_SIGNATURE_INVALID', signer_not_allowed: 'RECEIPT_SIGNER_NOT_ALLOWED', stale: 'RECEIPT_SIGNED_REQUEST_STALE' } as const)[reason];
  return new ReceiptServiceError(code, message, { cause, details });
};

/**
 * `<root>.qry.receipt.rotate-key` (request/reply): a director's signed
 * KeyRotation for `receipt` rotates the key that signs receipts and tree
 * heads (`@writ/runtime`'s rotateKeyOnRequest, as the approval service does).
 * `principal.key_added` (with `replaces`) is in the log before the new key
 * signs; the replaced key stays valid until `retire_after`
 * (`WRIT_RECEIPT_KEY_RETIRE_SECONDS` later), then it is revoked (`rotated`);
 * what it signed before stays verifiable against the key history.
 * Refusals: RECEIPT_REQUEST_SIGNATURE_INVALID, RECEIPT_SIGNER_NOT_ALLOWED,
 * RECEIPT_SIGNED_REQUEST_STALE, RECEIPT_SIGNED_REQUEST_MISMATCH,
 * CONTRACT_INVALID; anything else is RECEIPT_UNAVAILABLE.
 */
export class RotateKeyHandler {
  constructor(private readonly deps: RotateKeyDeps) {}

  rotate(request: RotateKey): Promise<RotateKeyReply> {
    return rotateKeyOnRequest(request, {
      ...this.deps,
      failure,
      mismatch: (message, details) => new ReceiptServiceError('RECEIPT_SIGNED_REQUEST_MISMATCH', message, { details }),
      unavailable: (cause) => new ReceiptServiceError('RECEIPT_UNAVAILABLE', 'the signing key could not be rotated now; retry', { cause }),
    });
  }
}
