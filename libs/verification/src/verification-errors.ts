import { WritError } from '@writ/contracts';

/**
 * Closed set of failures raised by `@writ/verification`. The JWS codes are the
 * ones `@writ/crypto` raises for the same failures, so a caller branches the
 * same way whichever of the two verified; `VERIFY_*` are this library's own.
 */
export type VerificationErrorCode =
  | 'JWS_MALFORMED'
  | 'JWS_ALG_NOT_ALLOWED'
  | 'JWS_KID_MISSING'
  | 'JWS_KID_UNKNOWN'
  | 'JWS_SIGNATURE_INVALID'
  | 'JWS_TYPE_MISMATCH'
  /** A JWK that is not an Ed25519 key of the expected kind (public, or private with `d`). */
  | 'VERIFY_KEY_INVALID'
  /** A private key whose `d` does not belong to its `x`: it would sign what its own public key refuses. */
  | 'VERIFY_KEY_MISMATCH'
  /** A value RFC 8785 cannot represent exactly. */
  | 'VERIFY_NOT_CANONICALIZABLE'
  /** No WebCrypto with Ed25519 here (an old browser, or a page that is not a secure context). */
  | 'VERIFY_WEBCRYPTO_UNAVAILABLE'
  /** A caller passed an argument outside its documented domain. */
  | 'VERIFY_ARGUMENT_INVALID';

export class VerificationError extends WritError<VerificationErrorCode> {
  constructor(code: VerificationErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'VerificationError';
  }
}
