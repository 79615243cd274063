import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey } from 'jose';
import { CryptoError } from './crypto-errors.js';

/** The only JWS algorithm Writ signs or accepts (RFC 8037). */
export const JWS_ALGORITHM = 'EdDSA';

/** Public Ed25519 key as a JWK (RFC 8037), always carrying the members Writ relies on. */
export interface Ed25519PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg: typeof JWS_ALGORITHM;
  readonly use: 'sig';
}

/** Private Ed25519 JWK; only produced by `exportEd25519PrivateJwk`, on explicit request. */
export interface Ed25519PrivateJwk extends Ed25519PublicJwk {
  readonly d: string;
}

/** A verification key: its id, the imported key, and the JWK published for it. */
export interface Ed25519PublicKey {
  readonly kid: string;
  readonly publicKey: CryptoKey;
  readonly publicJwk: Ed25519PublicJwk;
}

/**
 * A signing key. `privateKey` is a WebCrypto key that cannot be exported unless
 * it was created or imported with `extractable: true`, so passing a signing key
 * around (or logging it: a CryptoKey serializes to `{}`) does not leak its secret.
 */
export interface Ed25519SigningKey extends Ed25519PublicKey {
  readonly privateKey: CryptoKey;
}

export interface Ed25519KeyOptions {
  /** Key id for the JWK and JWS headers; defaults to the RFC 7638 SHA-256 thumbprint. */
  readonly kid?: string;
  /** Allow `exportEd25519PrivateJwk` on this key. Defaults to false. */
  readonly extractable?: boolean;
}

const ED25519_BYTES = 32;

/** Generates a fresh Ed25519 key pair. */
export async function generateEd25519Key(options: Ed25519KeyOptions = {}): Promise<Ed25519SigningKey> {
  const kid = requireKidOption(options.kid);
  const { privateKey, publicKey } = await generateKeyPair('Ed25519', { extractable: options.extractable ?? false });
  const { x } = await exportJWK(publicKey);
  if (typeof x !== 'string') throw new CryptoError('CRYPTO_KEY_INVALID', 'generated public key exported without "x"');
  const publicJwk = await completePublicJwk(x, kid);
  return Object.freeze({ kid: publicJwk.kid, privateKey, publicKey, publicJwk });
}

/**
 * Imports a public Ed25519 JWK. `kid`, `alg` and `use` may be absent (then the
 * thumbprint, `EdDSA` and `sig` are filled in) but if present must agree. A JWK
 * carrying private material (`d`) is refused: where a public key is expected, a
 * private one means something is about to be published that must not be.
 */
export async function importEd25519PublicJwk(jwk: unknown): Promise<Ed25519PublicKey> {
  const fields = readEd25519Jwk(jwk);
  if ('d' in fields.record) {
    throw new CryptoError('CRYPTO_KEY_INVALID', 'a public JWK must not carry private key material ("d")', { details: { kid: fields.kid } });
  }
  const publicJwk = await completePublicJwk(fields.x, fields.kid);
  const publicKey = await importOrFail({ kty: 'OKP', crv: 'Ed25519', x: fields.x }, true, publicJwk.kid);
  return Object.freeze({ kid: publicJwk.kid, publicKey, publicJwk });
}

/**
 * Imports a private Ed25519 JWK as a signing key. The runtime checks that `x`
 * is the public half of `d`.
 */
export async function importEd25519PrivateJwk(jwk: unknown, options: Pick<Ed25519KeyOptions, 'extractable'> = {}): Promise<Ed25519SigningKey> {
  const fields = readEd25519Jwk(jwk);
  const d = fields.record['d'];
  if (!isKeyBytes(d)) throw new CryptoError('CRYPTO_KEY_INVALID', 'a private Ed25519 JWK needs "d": 32 bytes, base64url');
  const publicJwk = await completePublicJwk(fields.x, fields.kid);
  const privateKey = await importOrFail({ kty: 'OKP', crv: 'Ed25519', x: fields.x, d }, options.extractable ?? false, publicJwk.kid);
  const publicKey = await importOrFail({ kty: 'OKP', crv: 'Ed25519', x: fields.x }, true, publicJwk.kid);
  return Object.freeze({ kid: publicJwk.kid, privateKey, publicKey, publicJwk });
}

/**
 * The private JWK of a signing key, for callers that must persist it (a secret
 * store, a KMS import). Fails with `CRYPTO_KEY_NOT_EXTRACTABLE` unless the key was
 * created or imported with `extractable: true`.
 */
export async function exportEd25519PrivateJwk(key: Ed25519SigningKey): Promise<Ed25519PrivateJwk> {
  if (!key.privateKey.extractable) {
    throw new CryptoError('CRYPTO_KEY_NOT_EXTRACTABLE', `private key ${key.kid} was created without extractable: true`, { details: { kid: key.kid } });
  }
  const exported = await exportJWK(key.privateKey);
  if (typeof exported.d !== 'string') throw new CryptoError('CRYPTO_KEY_INVALID', `key ${key.kid} is not a private key`, { details: { kid: key.kid } });
  return { ...key.publicJwk, d: exported.d };
}

/** Public part of a key, without the imported CryptoKey of a signing key's private half. */
export function toEd25519PublicKey(key: Ed25519PublicKey): Ed25519PublicKey {
  return Object.freeze({ kid: key.kid, publicKey: key.publicKey, publicJwk: key.publicJwk });
}

interface Ed25519JwkFields {
  readonly record: Readonly<Record<string, unknown>>;
  readonly x: string;
  readonly kid: string | undefined;
}

function readEd25519Jwk(jwk: unknown): Ed25519JwkFields {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new CryptoError('CRYPTO_KEY_INVALID', 'a JWK must be a JSON object');
  }
  const record = jwk as Record<string, unknown>;
  const { kty, crv, x, kid, alg, use } = record;
  if (kty !== 'OKP' || crv !== 'Ed25519') {
    throw new CryptoError('CRYPTO_KEY_INVALID', 'only OKP / Ed25519 keys are accepted', { details: { kty, crv } });
  }
  if (!isKeyBytes(x)) throw new CryptoError('CRYPTO_KEY_INVALID', 'an Ed25519 JWK needs "x": 32 bytes, base64url');
  if (kid !== undefined && (typeof kid !== 'string' || kid.length === 0)) {
    throw new CryptoError('CRYPTO_KEY_INVALID', '"kid" must be a non-empty string');
  }
  if (alg !== undefined && alg !== JWS_ALGORITHM) {
    throw new CryptoError('CRYPTO_KEY_INVALID', `"alg" must be ${JWS_ALGORITHM}`, { details: { alg } });
  }
  if (use !== undefined && use !== 'sig') throw new CryptoError('CRYPTO_KEY_INVALID', '"use" must be sig', { details: { use } });
  return { record, x, kid };
}

// Canonical base64url of exactly 32 bytes: decoding is lenient, so re-encode and compare.
function isKeyBytes(value: unknown): value is string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(value)) return false;
  const bytes = base64url.decode(value);
  return bytes.length === ED25519_BYTES && base64url.encode(bytes) === value;
}

function requireKidOption(kid: string | undefined): string | undefined {
  if (kid !== undefined && (typeof kid !== 'string' || kid.length === 0)) {
    throw new CryptoError('CRYPTO_ARGUMENT_INVALID', 'kid must be a non-empty string');
  }
  return kid;
}

async function completePublicJwk(x: string, kid: string | undefined): Promise<Ed25519PublicJwk> {
  const thumbprintKid = kid ?? (await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x }, 'sha256'));
  return Object.freeze({ kty: 'OKP', crv: 'Ed25519', x, kid: thumbprintKid, alg: JWS_ALGORITHM, use: 'sig' });
}

interface OkpJwkMembers {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly d?: string;
}

async function importOrFail(jwk: OkpJwkMembers, extractable: boolean, kid: string): Promise<CryptoKey> {
  try {
    return await importJWK(jwk, JWS_ALGORITHM, { extractable });
  } catch (cause) {
    throw new CryptoError('CRYPTO_KEY_INVALID', `JWK ${kid} could not be imported as an Ed25519 key`, { cause, details: { kid } });
  }
}
