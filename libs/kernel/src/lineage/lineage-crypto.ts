/**
 * What the kernel needs from cryptography to verify signed seed documents,
 * passed in by the adapter (`documentSignatures` of @writ/crypto has exactly
 * this shape), so the kernel itself imports no `node:crypto` and stays
 * deterministic. Verification touches no network and no clock: trust
 * material and `now` arrive in the command.
 */
export interface LineageCrypto {
  /** Lowercase hex SHA-256 of the RFC 8785 canonical JSON of `document` without its `signature` member. */
  readonly payloadHash: (document: object) => string;
  /** `sha256:<hex>` fingerprint of an Ed25519 public key given as its JWK `x` (base64url). */
  readonly fingerprint: (x: string) => string;
  /** True when `sig` (base64) is an Ed25519 signature by `x` over the digest `payloadHash` (hex). Never throws. */
  readonly verify: (x: string, payloadHash: string, sig: string) => boolean;
}

/** The payload hash of an untrusted document, or null when it cannot be computed (not canonicalizable). */
export function tryPayloadHash(crypto: LineageCrypto, document: unknown): string | null {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return null;
  try {
    return crypto.payloadHash(document);
  } catch {
    return null;
  }
}

/** The fingerprint of an untrusted public key, or null when it is not one. */
export function tryFingerprint(crypto: LineageCrypto, x: unknown): string | null {
  if (typeof x !== 'string') return null;
  try {
    return crypto.fingerprint(x);
  } catch {
    return null;
  }
}
