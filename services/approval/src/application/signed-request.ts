import type { SignedRequestFailure, SignedRequestFailureReason } from '@writ/runtime';
import { ApprovalServiceError, type ApprovalServiceCode } from './approval-errors.js';

type Codes = Readonly<Record<Exclude<SignedRequestFailureReason, 'contract_invalid'>, ApprovalServiceCode>>;

/** A refusal of `@writ/runtime`'s verifySignedRequest as this service's error; a payload off its contract stays CONTRACT_INVALID. */
function failureWith(codes: Codes): SignedRequestFailure {
  return (reason, message, details, cause) => {
    if (reason === 'contract_invalid') return cause instanceof Error ? cause : new ApprovalServiceError(codes.signature_invalid, message, { details });
    return new ApprovalServiceError(codes[reason], message, { cause, details });
  };
}

/** revoke-grant, rotate-key: APPROVAL_SIGNATURE_INVALID, APPROVAL_SIGNER_NOT_ALLOWED, APPROVAL_SIGNED_REQUEST_STALE. */
export const signedRequestFailure = failureWith({
  signature_invalid: 'APPROVAL_SIGNATURE_INVALID',
  signer_not_allowed: 'APPROVAL_SIGNER_NOT_ALLOWED',
  stale: 'APPROVAL_SIGNED_REQUEST_STALE',
});

/** Approval resolutions: an unknown resolver is APPROVAL_RESOLVER_NOT_ALLOWED, as the kernel answers a resolver it refuses. */
export const resolutionFailure = failureWith({
  signature_invalid: 'APPROVAL_SIGNATURE_INVALID',
  signer_not_allowed: 'APPROVAL_RESOLVER_NOT_ALLOWED',
  stale: 'APPROVAL_SIGNED_REQUEST_STALE',
});
