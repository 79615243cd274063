import { CompactSign, base64url, compactVerify, type CompactJWSHeaderParameters, type CryptoKey } from 'jose';
import { CryptoError } from './crypto-errors.js';
import { JWS_ALGORITHM, type Ed25519PublicKey } from './ed25519-keys.js';
import { toCryptoError } from './jose-errors.js';
import { KeySet } from './jwks.js';

/**
 * Who signs: a private Ed25519 key and the `kid` placed in the protected header.
 * Every Writ key has a `kid` (an `Ed25519SigningKey` is a `JwsSigner`); it is
 * optional here only so that keyless published vectors (RFC 8037 A.4) can be
 * reproduced. A kid-less JWS never verifies against a `KeySet`.
 */
export interface JwsSigner {
  readonly privateKey: CryptoKey;
  readonly kid?: string;
}

/**
 * What a verifier trusts: a key set (the key is selected by the header's `kid`)
 * or a single public key (whose `kid` must match the header's when both exist).
 */
export type JwsVerificationKeys = KeySet | Ed25519PublicKey;

export interface JwsProtectedHeader {
  readonly alg: typeof JWS_ALGORITHM;
  readonly kid?: string;
  readonly typ?: string;
  readonly [parameter: string]: unknown;
}

export interface JwsSignOptions {
  /** `typ` header parameter, so that one kind of signed object cannot pass for another. */
  readonly typ?: string;
}

export interface JwsVerifyOptions {
  /** When given, the protected header's `typ` must equal it (`JWS_TYPE_MISMATCH`). */
  readonly typ?: string;
}

export interface VerifiedJws {
  readonly payload: Uint8Array;
  readonly protectedHeader: JwsProtectedHeader;
  /** The `kid` of the key that verified the signature. */
  readonly kid: string;
}

/** Signs `payload` (bytes, or a string taken as UTF-8) as an EdDSA JWS in compact serialization. */
export async function signJws(payload: Uint8Array | string, signer: JwsSigner, options: JwsSignOptions = {}): Promise<string> {
  const bytes = payloadBytes(payload);
  try {
    return await new CompactSign(bytes).setProtectedHeader(protectedHeaderFor(signer, options)).sign(signer.privateKey);
  } catch (cause) {
    throw new CryptoError('CRYPTO_KEY_INVALID', 'signing needs a private Ed25519 key', { cause, details: { kid: signer.kid } });
  }
}

/**
 * Signs `payload` as a compact JWS with detached content (RFC 7515 appendix F):
 * `<header>..<signature>`. The document travels on its own (for a receipt, its
 * RFC 8785 canonical JSON) and the signature next to it.
 */
export async function signDetachedJws(payload: Uint8Array | string, signer: JwsSigner, options: JwsSignOptions = {}): Promise<string> {
  const [header, , signature] = (await signJws(payload, signer, options)).split('.');
  return `${header ?? ''}..${signature ?? ''}`;
}

/**
 * Verifies a compact JWS and returns its payload. `alg` is pinned to EdDSA
 * (`none`, HMAC and every other algorithm fail with `JWS_ALG_NOT_ALLOWED`), the
 * key is chosen by `kid` from the caller's trust material, and no key is ever
 * taken from the token itself (no `jwk` / `jku` / `x5u` header is honoured).
 */
export async function verifyJws(jws: string, keys: JwsVerificationKeys, options: JwsVerifyOptions = {}): Promise<VerifiedJws> {
  if (typeof jws !== 'string') throw new CryptoError('JWS_MALFORMED', 'a compact JWS is a string');
  requireVerificationKeys(keys);
  let kid: string | undefined;
  try {
    const result = await compactVerify(jws, async (header) => {
      const key = selectKey(header, keys);
      kid = key.kid;
      return key.publicKey;
    }, { algorithms: [JWS_ALGORITHM] });
    const protectedHeader = result.protectedHeader as JwsProtectedHeader;
    checkType(protectedHeader, options.typ);
    return { payload: result.payload, protectedHeader, kid: kid as string };
  } catch (error) {
    throw toCryptoError(error);
  }
}

/** Verifies a detached-content JWS (`<header>..<signature>`) over `payload`. */
export async function verifyDetachedJws(
  jws: string,
  payload: Uint8Array | string,
  keys: JwsVerificationKeys,
  options: JwsVerifyOptions = {},
): Promise<VerifiedJws> {
  const parts = typeof jws === 'string' ? jws.split('.') : [];
  if (parts.length !== 3 || parts[1] !== '') {
    throw new CryptoError('JWS_MALFORMED', 'a detached JWS has the form <header>..<signature>');
  }
  return verifyJws(`${parts[0] ?? ''}.${base64url.encode(payloadBytes(payload))}.${parts[2] ?? ''}`, keys, options);
}

function payloadBytes(payload: Uint8Array | string): Uint8Array {
  if (typeof payload === 'string') return new TextEncoder().encode(payload);
  if (payload instanceof Uint8Array) return payload;
  throw new CryptoError('CRYPTO_ARGUMENT_INVALID', 'a JWS payload is bytes or a string (serialize documents with canonicalJson first)');
}

export function protectedHeaderFor(signer: JwsSigner, options: JwsSignOptions): CompactJWSHeaderParameters {
  return {
    alg: JWS_ALGORITHM,
    ...(signer.kid === undefined ? {} : { kid: signer.kid }),
    ...(options.typ === undefined ? {} : { typ: options.typ }),
  };
}

export function selectKey(header: { kid?: unknown }, keys: JwsVerificationKeys): Ed25519PublicKey {
  const kid = header.kid;
  if (keys instanceof KeySet) {
    if (kid === undefined) throw new CryptoError('JWS_KID_MISSING', 'the protected header names no kid');
    const key = typeof kid === 'string' ? keys.get(kid) : undefined;
    if (key === undefined) throw new CryptoError('JWS_KID_UNKNOWN', 'no trusted key has this kid', { details: { kid } });
    return key;
  }
  if (kid !== undefined && kid !== keys.kid) {
    throw new CryptoError('JWS_KID_UNKNOWN', 'the protected header names a different key', { details: { kid, expected: keys.kid } });
  }
  return keys;
}

export function requireVerificationKeys(keys: JwsVerificationKeys): void {
  if (!(keys instanceof KeySet) && typeof (keys as Partial<Ed25519PublicKey> | undefined)?.kid !== 'string') {
    throw new CryptoError('CRYPTO_ARGUMENT_INVALID', 'verification needs a KeySet or an Ed25519PublicKey');
  }
}

function checkType(header: JwsProtectedHeader, expected: string | undefined): void {
  if (expected !== undefined && header.typ !== expected) {
    throw new CryptoError('JWS_TYPE_MISMATCH', `expected typ ${expected}`, { details: { typ: header.typ, expected } });
  }
}
