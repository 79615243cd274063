import type { PublicEd25519Jwk } from '@writ/contracts';
import type { PrincipalRegistry, RotatingServiceKey } from '@writ/runtime';
import type { JwksSource, KeyRotator } from '../application/ports.js';

/**
 * The approval service's rotating signing key (`@writ/runtime`
 * RotatingServiceKey) as the application sees it: rotation with the grant
 * lifetime as the replaced key's validity, and the JWKS built from the log.
 */
export class ServiceKeyringAdapter implements KeyRotator, JwksSource {
  constructor(
    private readonly keys: RotatingServiceKey,
    private readonly registry: PrincipalRegistry,
    /** WRIT_GRANT_TTL_SECONDS + WRIT_APPROVAL_KEY_RETIRE_SKEW_SECONDS: the last grant the old key signed expires before it retires. */
    private readonly replacedKeyValidSeconds: number,
  ) {}

  get principalId(): string {
    return this.keys.principalId;
  }

  rotate(input: { readonly kid: string; readonly requestedBy: string }) {
    return this.keys.rotate({ kid: input.kid, validForSeconds: this.replacedKeyValidSeconds, requestedBy: input.requestedBy });
  }

  /**
   * Every key of the service principal the log has not revoked: the active key
   * and the keys still retiring. Read from the principal's stream at each call
   * (not the follower), so a retired key is gone from the next answer. Retired
   * keys stay in the log for verifiers of what they signed; only this set drops them.
   */
  async jwks(): Promise<{ readonly keys: readonly PublicEd25519Jwk[] }> {
    const record = await this.registry.current(this.principalId);
    return { keys: [...(record?.keys.values() ?? [])].map((key) => ({ ...key, alg: 'EdDSA' as const, use: 'sig' as const })) };
  }
}
