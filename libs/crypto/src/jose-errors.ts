import { hasErrorCode } from '@writ/contracts';
import { CryptoError, type CryptoErrorCode } from './crypto-errors.js';

/**
 * The one table from jose's failures to Writ's codes. Errors that are already
 * `CryptoError`s (raised by our own key selection inside jose's callback) pass
 * through untouched; anything jose did not classify is reported as malformed
 * input, keeping the original as `cause`.
 */
export function toCryptoError(error: unknown): CryptoError {
  if (error instanceof CryptoError) return error;
  if (hasErrorCode(error, 'ERR_JWT_EXPIRED')) {
    return new CryptoError('JWS_EXPIRED', 'token has expired', { cause: error, details: claimDetails(error) });
  }
  if (hasErrorCode(error, 'ERR_JWT_CLAIM_VALIDATION_FAILED')) {
    const { claim, reason } = claimDetails(error);
    const code: CryptoErrorCode =
      claim === 'nbf' && reason === 'check_failed' ? 'JWS_NOT_YET_VALID' : claim === 'typ' ? 'JWS_TYPE_MISMATCH' : 'JWS_CLAIM_INVALID';
    return new CryptoError(code, `claim ${String(claim)} failed validation (${String(reason)})`, { cause: error, details: { claim, reason } });
  }
  if (hasErrorCode(error, 'ERR_JOSE_ALG_NOT_ALLOWED')) {
    return new CryptoError('JWS_ALG_NOT_ALLOWED', 'only EdDSA signatures are accepted', { cause: error });
  }
  if (hasErrorCode(error, 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED')) {
    return new CryptoError('JWS_SIGNATURE_INVALID', 'signature verification failed', { cause: error });
  }
  return new CryptoError('JWS_MALFORMED', 'not a valid JWS for this verifier', { cause: error });
}

// jose's claim errors carry which claim failed and why; the claims set itself stays out of details.
function claimDetails(error: object): { claim: unknown; reason: unknown } {
  const { claim, reason } = error as { claim?: unknown; reason?: unknown };
  return { claim, reason };
}
