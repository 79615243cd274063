import { CryptoError } from './crypto-errors.js';
import { importEd25519PublicJwk, toEd25519PublicKey, type Ed25519PublicJwk, type Ed25519PublicKey } from './ed25519-keys.js';

/** JWK Set document (RFC 7517 section 5) holding public keys only. */
export interface JsonWebKeySet {
  readonly keys: readonly Ed25519PublicJwk[];
}

/**
 * An immutable set of Ed25519 verification keys indexed by `kid`. This is the
 * trust material a verifier is handed; it never holds private keys, so it can
 * be published as-is (`toJwks()`, `JSON.stringify`).
 */
export class KeySet {
  readonly #keys: ReadonlyMap<string, Ed25519PublicKey>;

  private constructor(keys: ReadonlyMap<string, Ed25519PublicKey>) {
    this.#keys = keys;
  }

  /**
   * A key set of already-imported keys; signing keys contribute only their
   * public half. Two keys with the same `kid` fail with `CRYPTO_KID_DUPLICATE`.
   */
  static of(keys: Iterable<Ed25519PublicKey>): KeySet {
    const byKid = new Map<string, Ed25519PublicKey>();
    for (const key of keys) {
      if (byKid.has(key.kid)) {
        throw new CryptoError('CRYPTO_KID_DUPLICATE', `kid ${key.kid} appears twice in one key set`, { details: { kid: key.kid } });
      }
      byKid.set(key.kid, toEd25519PublicKey(key));
    }
    return new KeySet(byKid);
  }

  /**
   * Parses and imports a JWK Set document (e.g. `JSON.parse` of a published
   * `{ "keys": [...] }`). Every key must be a public Ed25519 key
   * (`CRYPTO_KEY_INVALID` otherwise) with a distinct `kid`.
   */
  static async fromJwks(jwks: unknown): Promise<KeySet> {
    const keys = (jwks as { keys?: unknown } | null | undefined)?.keys;
    if (typeof jwks !== 'object' || !Array.isArray(keys)) {
      throw new CryptoError('CRYPTO_KEY_INVALID', 'a JWK Set is an object with a "keys" array');
    }
    return KeySet.of(await Promise.all(keys.map((jwk) => importEd25519PublicJwk(jwk))));
  }

  get size(): number {
    return this.#keys.size;
  }

  has(kid: string): boolean {
    return this.#keys.has(kid);
  }

  get(kid: string): Ed25519PublicKey | undefined {
    return this.#keys.get(kid);
  }

  kids(): string[] {
    return [...this.#keys.keys()];
  }

  /** The publishable `{ keys: [...] }` document, in insertion order. */
  toJwks(): JsonWebKeySet {
    return { keys: [...this.#keys.values()].map((key) => key.publicJwk) };
  }

  toJSON(): JsonWebKeySet {
    return this.toJwks();
  }
}
