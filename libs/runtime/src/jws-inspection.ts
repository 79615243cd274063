import type { PublicEd25519Jwk } from '@writ/contracts';
import { KeySet, importEd25519PublicJwk, type Ed25519PublicKey } from '@writ/crypto';

/**
 * The claims of a compact JWS, read WITHOUT verifying them: only to learn who
 * claims to have signed it, so that the right keys can then verify it.
 * Undefined for anything that is not three base64url parts with a JSON payload.
 */
export function unverifiedJwsClaims(jws: string): unknown {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part)) || parts[1] === '') return undefined;
  try {
    return JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The keys that import as Ed25519 public keys; one that cannot be imported verifies nothing. */
export async function keySetOfJwks(jwks: readonly PublicEd25519Jwk[]): Promise<KeySet> {
  const imported: Ed25519PublicKey[] = [];
  for (const jwk of jwks) {
    try {
      imported.push(await importEd25519PublicJwk(jwk));
    } catch {
      // A key that cannot be imported verifies nothing.
    }
  }
  return KeySet.of(imported);
}
