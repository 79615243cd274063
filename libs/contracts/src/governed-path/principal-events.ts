import { z } from 'zod';
import { Id, Timestamp } from '../ids.js';
import { PrincipalType } from '../principal-type.js';
import { Text, Title } from '../text.js';

/** Roles a principal may hold (Lazarus cell roles, seed 000 section 3); `director` resolves approvals. */
export const PrincipalRole = z.enum(['director', 'executor', 'observer', 'guest', 'substitute']);
export type PrincipalRole = z.infer<typeof PrincipalRole>;

/**
 * A public Ed25519 JWK as Writ stores it. Strict: a JWK carrying the private
 * part `d` (or anything else unexpected) is refused, so private key material
 * can never be registered into the log by mistake.
 */
export const PublicEd25519Jwk = z.strictObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the base64url Ed25519 public key (43 characters)'),
  kid: z.string().min(1).max(128).regex(/^[A-Za-z0-9._:-]+$/, 'must be 1-128 characters of A-Z, a-z, 0-9, ".", "_", ":" or "-"'),
  alg: z.literal('EdDSA').optional(),
  use: z.literal('sig').optional(),
});
export type PublicEd25519Jwk = z.infer<typeof PublicEd25519Jwk>;

/** `principal.registered` on `writ.evt.principal.<principal_id>`. */
export const PrincipalRegistered = z.strictObject({
  principal_id: Id,
  principal_type: PrincipalType,
  display_name: Title,
  roles: z.array(PrincipalRole).max(5),
  keys: z.array(PublicEd25519Jwk).min(1).max(16),
  registered_by: Id,
  at: Timestamp,
});
export type PrincipalRegistered = z.infer<typeof PrincipalRegistered>;

/**
 * `principal.key_added`: key rotation adds the new key before the old one is revoked.
 * `replaces` (a service key rotation) names the key it succeeds and when that one is
 * retired (`principal.key_revoked`, reason `rotated`): until then both verify.
 */
export const PrincipalKeyAdded = z.strictObject({
  key: PublicEd25519Jwk,
  added_by: Id,
  at: Timestamp,
  replaces: z.strictObject({ kid: z.string().min(1).max(128), retire_after: Timestamp }).optional(),
});
export type PrincipalKeyAdded = z.infer<typeof PrincipalKeyAdded>;

/** `principal.key_revoked`: signatures by this key are refused from now on. */
export const PrincipalKeyRevoked = z.strictObject({ kid: z.string().min(1).max(128), reason: Text, revoked_by: Id, at: Timestamp });
export type PrincipalKeyRevoked = z.infer<typeof PrincipalKeyRevoked>;
