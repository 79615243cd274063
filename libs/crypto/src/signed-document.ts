import { createPublicKey, verify as verifySignature, webcrypto } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { CryptoError } from './crypto-errors.js';
import type { Ed25519SigningKey } from './ed25519-keys.js';
import { hexToBytes } from './hex.js';
import { sha256Hex } from './sha256.js';

/**
 * Detached Ed25519 signatures over JSON documents that carry their own
 * `signature` block (seed 002's spawn manifests, Last Wills and Writ's
 * heartbeats and crash reports):
 *
 * - `payload_hash` = lowercase hex SHA-256 of the RFC 8785 canonical JSON of
 *   the document WITHOUT its `signature` member;
 * - `sig` = standard base64 (with padding) of the Ed25519 signature over the
 *   32 raw bytes of that digest (not over its hex spelling);
 * - `signer` = the signing key's fingerprint (`ed25519Fingerprint`).
 */

/** The `algo` of every signature block. */
export const DOCUMENT_SIGNATURE_ALGO = 'ed25519';

/** A document's signature block. */
export interface DocumentSignature {
  readonly signer: string;
  readonly algo: typeof DOCUMENT_SIGNATURE_ALGO;
  readonly payload_hash: string;
  readonly sig: string;
}

const X = /^[A-Za-z0-9_-]{43}$/;
const HASH = /^[0-9a-f]{64}$/;
const SIG = /^[A-Za-z0-9+/]{86}==$/;

/**
 * `sha256:` + lowercase hex SHA-256 of the key's RFC 7638 thumbprint input
 * `{"crv":"Ed25519","kty":"OKP","x":"<x>"}`: the same digest as the JWK
 * thumbprint (which is its base64url), spelled in hex. `x` is the base64url
 * public key of the JWK.
 */
export function ed25519Fingerprint(x: string): `sha256:${string}` {
  if (typeof x !== 'string' || !X.test(x)) throw new CryptoError('CRYPTO_KEY_INVALID', 'an Ed25519 public key "x" is 43 characters of base64url');
  return `sha256:${sha256Hex(canonicalJson({ crv: 'Ed25519', kty: 'OKP', x }))}`;
}

/** The document without its `signature` member, canonicalized (RFC 8785) and hashed: lowercase hex SHA-256. */
export function documentPayloadHash(document: object): string {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new CryptoError('CRYPTO_ARGUMENT_INVALID', 'a signed document is a JSON object');
  }
  const { signature: _signature, ...body } = document as Record<string, unknown>;
  return sha256Hex(canonicalJson(body));
}

/**
 * True when `sig` (base64) is a valid Ed25519 signature over the digest
 * `payloadHash` (hex) by the public key `x` (base64url). Never throws for
 * untrusted input: a malformed key, digest or signature is simply false.
 */
export function verifyDigestSignature(x: string, payloadHash: string, sig: string): boolean {
  if (typeof x !== 'string' || !X.test(x) || typeof payloadHash !== 'string' || !HASH.test(payloadHash) || typeof sig !== 'string' || !SIG.test(sig)) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    return verifySignature(null, hexToBytes(payloadHash), key, Buffer.from(sig, 'base64'));
  } catch {
    return false;
  }
}

/** Signs the digest `payloadHash` (hex) with `key`: base64 of the 64-byte Ed25519 signature. */
export async function signDigest(key: Pick<Ed25519SigningKey, 'privateKey'>, payloadHash: string): Promise<string> {
  if (typeof payloadHash !== 'string' || !HASH.test(payloadHash)) throw new CryptoError('CRYPTO_ARGUMENT_INVALID', 'payload_hash must be a lowercase hex SHA-256 digest');
  const signature = await webcrypto.subtle.sign('Ed25519', key.privateKey, hexToBytes(payloadHash));
  return Buffer.from(signature).toString('base64');
}

/**
 * Returns `document` with its `signature` block (any block it carried is
 * replaced): payload hash over the rest, signed by `key`, signer = the key's
 * fingerprint.
 */
export async function signDocument<T extends object>(
  document: T,
  key: Pick<Ed25519SigningKey, 'privateKey' | 'publicJwk'>,
): Promise<Omit<T, 'signature'> & { readonly signature: DocumentSignature }> {
  const { signature: _old, ...body } = document as T & { signature?: unknown };
  const payload_hash = documentPayloadHash(body);
  const sig = await signDigest(key, payload_hash);
  return { ...body, signature: { signer: ed25519Fingerprint(key.publicJwk.x), algo: DOCUMENT_SIGNATURE_ALGO, payload_hash, sig } } as Omit<T, 'signature'> & {
    readonly signature: DocumentSignature;
  };
}

/**
 * The three operations a verifier of signed documents needs, as one object
 * (the kernel's `LineageCrypto` port is this shape: the kernel stays free of
 * `node:crypto`).
 */
export const documentSignatures = Object.freeze({
  payloadHash: documentPayloadHash,
  fingerprint: (x: string): string => ed25519Fingerprint(x),
  verify: verifyDigestSignature,
});
