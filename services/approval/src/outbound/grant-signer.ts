import type { CapabilityGrantClaims } from '@writ/contracts';
import { signClaims, type Ed25519SigningKey } from '@writ/crypto';
import type { GrantSigner } from '../application/ports.js';

/** The `typ` of a capability grant JWS; the executor verifies with `verifyClaims({ typ })`. */
export const GRANT_JWS_TYPE = 'writ-grant+jwt';

/** Signs grant claims with the approval service's Ed25519 key (EdDSA, compact JWS). */
export class KeyGrantSigner implements GrantSigner {
  readonly kid: string;

  constructor(private readonly key: Ed25519SigningKey) {
    this.kid = key.kid;
  }

  sign(claims: CapabilityGrantClaims): Promise<string> {
    return signClaims(claims, this.key, {
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
