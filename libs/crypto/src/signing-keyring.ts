import { CryptoError } from './crypto-errors.js';
import { generateEd25519Key, toEd25519PublicKey, type Ed25519PublicKey, type Ed25519SigningKey } from './ed25519-keys.js';
import { KeySet, type JsonWebKeySet } from './jwks.js';

/**
 * An issuer's keys over time: one active signing key and the public halves of
 * retired ones. Retired keys stay in the published JWKS so that everything they
 * signed (receipts, grants still in flight) keeps verifying, until the operator
 * removes them. Immutable: `rotate` and `removeRetired` return a new keyring, so
 * a keyring value can be shared without locks and swapped atomically.
 */
export class SigningKeyring {
  readonly active: Ed25519SigningKey;
  readonly retired: readonly Ed25519PublicKey[];

  private constructor(active: Ed25519SigningKey, retired: readonly Ed25519PublicKey[]) {
    // Building the key set up front refuses duplicate kids before the keyring exists.
    KeySet.of([active, ...retired]);
    this.active = active;
    this.retired = Object.freeze(retired.map(toEd25519PublicKey));
  }

  /** A keyring around an existing key (and any still-published retired keys). */
  static of(active: Ed25519SigningKey, retired: readonly Ed25519PublicKey[] = []): SigningKeyring {
    return new SigningKeyring(active, retired);
  }

  /** A keyring with a freshly generated active key. */
  static async generate(): Promise<SigningKeyring> {
    return new SigningKeyring(await generateEd25519Key(), []);
  }

  get activeKid(): string {
    return this.active.kid;
  }

  /**
   * Makes `next` (or a freshly generated key) the active key and retires the
   * current one, whose public key stays published. A `next` whose kid is already
   * in the keyring fails with `CRYPTO_KID_DUPLICATE`.
   */
  async rotate(next?: Ed25519SigningKey): Promise<SigningKeyring> {
    const key = next ?? (await generateEd25519Key());
    return new SigningKeyring(key, [...this.retired, toEd25519PublicKey(this.active)]);
  }

  /**
   * Stops publishing a retired key: signatures it made no longer verify against
   * this keyring's key set. The active key cannot be removed (`CRYPTO_KEY_ACTIVE`);
   * an unknown kid fails with `CRYPTO_KID_UNKNOWN`.
   */
  removeRetired(kid: string): SigningKeyring {
    if (kid === this.active.kid) {
      throw new CryptoError('CRYPTO_KEY_ACTIVE', `key ${kid} is the active signing key; rotate before removing it`, { details: { kid } });
    }
    if (!this.retired.some((key) => key.kid === kid)) {
      throw new CryptoError('CRYPTO_KID_UNKNOWN', `no retired key ${kid} in this keyring`, { details: { kid } });
    }
    return new SigningKeyring(
      this.active,
      this.retired.filter((key) => key.kid !== kid),
    );
  }

  /** Verification keys: the active key and every retired key still published. */
  keySet(): KeySet {
    return KeySet.of([this.active, ...this.retired]);
  }

  /** The publishable JWKS of `keySet()`. */
  toJwks(): JsonWebKeySet {
    return this.keySet().toJwks();
  }
}
