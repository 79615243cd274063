import type { CapabilityGrantClaims } from '@writ/contracts';
import { signClaims, type Ed25519SigningKey } from '@writ/crypto';
import type { GrantSigner } from '../application/ports.js';

/** The `typ` of a capability grant JWS; the executor verifies with `verifyClaims({ typ })`. */
export const GRANT_JWS_TYPE = 'writ-grant+jwt';

/**
 * Signs grant claims with the approval service's active Ed25519 key (EdDSA,
 * compact JWS). The key is read at each signature: after a rotation the next
 * grant carries the new kid.
 */
export class KeyGrantSigner implements GrantSigner {
  constructor(private readonly activeKey: () => Ed25519SigningKey) {}

  get kid(): string {
    return this.activeKey().kid;
  }

  sign(claims: CapabilityGrantClaims): Promise<string> {
    return signClaims(claims, this.activeKey(), {
      issuer: claims.iss,
      audience: claims.aud,
      subject: claims.sub,
      jwtId: claims.jti,
      issuedAt: new Date(claims.iat * 1000),
      expiresAt: new Date(claims.exp * 1000),
      ...(claims.nbf === undefined ? {} : { notBefore: new Date(claims.nbf * 1000) }),
      typ: GRANT_JWS_TYPE,
    });
  }
}
