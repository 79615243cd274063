import { base64urlDecode, utf8 } from './bytes.js';
import { VerificationError } from './verification-errors.js';
import { ED25519, subtle, type WebCryptoKey } from './webcrypto.js';

/** A public Ed25519 JWK as Writ publishes them (`GET /v1/keys`, principal rows). */
export interface PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly [member: string]: unknown;
}

/** A verification key: its id and the imported WebCrypto key. */
export interface VerificationKey {
  readonly kid: string;
  readonly publicKey: WebCryptoKey;
  readonly publicJwk: PublicJwk;
}

/**
 * A signing key: the private WebCrypto key and the kid placed in the JWS
 * header. Imported non-extractable by default: code holding it can sign, and
 * nothing (no script, no devtools call) can read the key's bytes back out.
 */
export interface SigningKey extends VerificationKey {
  readonly privateKey: WebCryptoKey;
}

const MAX_KID_LENGTH = 256;

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new VerificationError('VERIFY_KEY_INVALID', `${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

function member(jwk: Record<string, unknown>, name: string, what: string): string {
  const value = jwk[name];
  if (typeof value !== 'string' || value === '') throw new VerificationError('VERIFY_KEY_INVALID', `${what} has no "${name}"`);
  return value;
}

function ed25519Members(value: unknown, what: string): { jwk: Record<string, unknown>; x: string; kid: string } {
  const jwk = record(value, what);
  if (jwk['kty'] !== 'OKP' || jwk['crv'] !== 'Ed25519') throw new VerificationError('VERIFY_KEY_INVALID', `${what} is not an Ed25519 key (kty OKP, crv Ed25519)`);
  const x = member(jwk, 'x', what);
  const kid = member(jwk, 'kid', what);
  if (kid.length > MAX_KID_LENGTH) throw new VerificationError('VERIFY_KEY_INVALID', `${what} has a kid longer than ${MAX_KID_LENGTH} characters`);
  if (base64urlDecode(x).length !== 32) throw new VerificationError('VERIFY_KEY_INVALID', `${what}: x is not 32 bytes`);
  return { jwk, x, kid };
}

export async function importPublicJwk(value: unknown): Promise<VerificationKey> {
  const { jwk, x, kid } = ed25519Members(value, 'the public JWK');
  if ('d' in jwk) throw new VerificationError('VERIFY_KEY_INVALID', 'a public JWK must not carry private key material ("d")');
  let publicKey: WebCryptoKey;
  try {
    publicKey = await subtle().importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x }, ED25519, true, ['verify']);
  } catch (cause) {
    throw new VerificationError('VERIFY_KEY_INVALID', `the public JWK ${kid} is not a usable Ed25519 key`, { cause });
  }
  return { kid, publicKey, publicJwk: { kty: 'OKP', crv: 'Ed25519', x, kid } };
}

/**
 * A private Ed25519 JWK (`writ principal keygen` writes them: kty, crv, x, d,
 * kid) imported as a signing key. Non-extractable unless asked: the console
 * keeps only the CryptoKey and drops the JWK text. A `d` that does not match
 * `x` is refused here (one probe signature), rather than at the server as an
 * unexplained HTTP_AUTH_SIGNATURE_INVALID.
 */
export async function importPrivateJwk(value: unknown, options: { readonly extractable?: boolean } = {}): Promise<SigningKey> {
  const { jwk, x, kid } = ed25519Members(value, 'the private JWK');
  const d = member(jwk, 'd', 'the private JWK (the file holds a public key only?)');
  let privateKey: WebCryptoKey;
  try {
    privateKey = await subtle().importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x, d }, ED25519, options.extractable ?? false, ['sign']);
  } catch (cause) {
    throw new VerificationError('VERIFY_KEY_INVALID', `the private JWK ${kid} is not a usable Ed25519 key`, { cause });
  }
  const verification = await importPublicJwk({ kty: 'OKP', crv: 'Ed25519', x, kid });
  const probe = utf8(`writ.key-probe:${kid}`);
  const signature = await subtle().sign(ED25519, privateKey, probe);
  if (!(await subtle().verify(ED25519, verification.publicKey, signature, probe))) {
    throw new VerificationError('VERIFY_KEY_MISMATCH', `the private JWK ${kid}: d is not the private half of x`);
  }
  return { ...verification, privateKey };
}

/** Trusted verification keys by kid (`GET /v1/keys`, a JWKS file). */
export class PublicKeySet {
  readonly #keys: ReadonlyMap<string, VerificationKey>;

  private constructor(keys: ReadonlyMap<string, VerificationKey>) {
    this.#keys = keys;
  }

  static of(keys: Iterable<VerificationKey>): PublicKeySet {
    const byKid = new Map<string, VerificationKey>();
    for (const key of keys) {
      if (byKid.has(key.kid)) throw new VerificationError('VERIFY_KEY_INVALID', `kid ${key.kid} appears twice in one key set`);
      byKid.set(key.kid, key);
    }
    return new PublicKeySet(byKid);
  }

  /** A `{ keys: [...] }` document: every key a public Ed25519 JWK with its own kid. */
  static async fromJwks(jwks: unknown): Promise<PublicKeySet> {
    const keys = (jwks as { keys?: unknown } | null | undefined)?.keys;
    if (typeof jwks !== 'object' || jwks === null || !Array.isArray(keys)) throw new VerificationError('VERIFY_KEY_INVALID', 'a JWKS is an object with a "keys" array');
    return PublicKeySet.of(await Promise.all(keys.map((key) => importPublicJwk(key))));
  }

  get(kid: string): VerificationKey | undefined {
    return this.#keys.get(kid);
  }

  kids(): string[] {
    return [...this.#keys.keys()];
  }
}
