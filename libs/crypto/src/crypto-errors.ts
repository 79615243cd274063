import { WritError } from '@writ/contracts';

/**
 * Closed set of failures raised by `@writ/crypto`. Callers branch on these codes;
 * verification failures (`JWS_*`, and `false` from the Merkle verifiers) are
 * expected outcomes of checking untrusted input, `CRYPTO_ARGUMENT_INVALID` is a
 * caller bug.
 */
export type CryptoErrorCode =
  /** A value RFC 8785 cannot represent exactly (NaN, ±Infinity, bigint, lone surrogate, cycle, top-level undefined). */
  | 'CRYPTO_NOT_CANONICALIZABLE'
  /** A caller passed an option or argument outside its documented domain. */
  | 'CRYPTO_ARGUMENT_INVALID'
  /** Text that should be lowercase or uppercase hex bytes is not. */
  | 'CRYPTO_HEX_INVALID'
  /** A JWK or CryptoKey is not a well-formed Ed25519 key of the expected kind (public vs private). */
  | 'CRYPTO_KEY_INVALID'
  /** Private key material was requested from a key created without `extractable: true`. */
  | 'CRYPTO_KEY_NOT_EXTRACTABLE'
  /** Two keys claim the same `kid` in one key set or keyring. */
  | 'CRYPTO_KID_DUPLICATE'
  /** A keyring operation named a `kid` the keyring does not hold. */
  | 'CRYPTO_KID_UNKNOWN'
  /** The active signing key cannot be removed; rotate first. */
  | 'CRYPTO_KEY_ACTIVE'
  /** Not a JWS compact serialization (or its payload is not a JWT claims set where one is required). */
  | 'JWS_MALFORMED'
  /** The protected header names an algorithm other than `EdDSA` (including `none`). */
  | 'JWS_ALG_NOT_ALLOWED'
  /** The protected header carries no `kid`, so no key can be selected from a key set. */
  | 'JWS_KID_MISSING'
  /** The protected header's `kid` is not in the verifier's key set. */
  | 'JWS_KID_UNKNOWN'
  /** The signature does not verify under the selected key. */
  | 'JWS_SIGNATURE_INVALID'
  /** The protected header's `typ` is not the one the verifier expects. */
  | 'JWS_TYPE_MISMATCH'
  /** `exp` is in the past beyond the clock-skew tolerance. */
  | 'JWS_EXPIRED'
  /** `nbf` is in the future beyond the clock-skew tolerance. */
  | 'JWS_NOT_YET_VALID'
  /** A claim is missing or differs from what the verifier expects (`iss`, `aud`, `sub`, `exp` required...). */
  | 'JWS_CLAIM_INVALID'
  /** A Merkle leaf index or tree size lies outside the tree. */
  | 'MERKLE_INDEX_OUT_OF_RANGE';

export class CryptoError extends WritError<CryptoErrorCode> {}
