import { z } from 'zod';
import { Id, Timestamp } from '../ids.js';
import { PrincipalType } from '../principal-type.js';
import { Text, Title } from '../text.js';

/**
 * Roles a principal may hold: the Lazarus cell roles (seed 000 section 3), where
 * `director` resolves approvals, and `operator`, who administers Writ
 * (registers principals and their keys; docs/security.md).
 */
export const PrincipalRole = z.enum(['director', 'executor', 'observer', 'guest', 'substitute', 'operator']);
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
  /**
   * The operator-signed PrincipalRegistration (compact JWS) this event was appended
   * on, so any reader can check the registration's authority back to the trust
   * anchor. Absent on a service's registration of its own key (its subject is
   * writable by that service's bus credential only) and on events older than it.
   */
  authorization: z.string().min(1).max(16 * 1024).optional(),
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
  /** The operator-signed PrincipalRegistration that added the key (see PrincipalRegistered.authorization). */
  authorization: z.string().min(1).max(16 * 1024).optional(),
});
export type PrincipalKeyAdded = z.infer<typeof PrincipalKeyAdded>;

/** `principal.key_revoked`: signatures by this key are refused from now on. */
export const PrincipalKeyRevoked = z.strictObject({
  kid: z.string().min(1).max(128),
  reason: Text,
  revoked_by: Id,
  at: Timestamp,
  /** The operator-signed PrincipalRevocation it was appended on (absent on a service's own key retirement). */
  authorization: z.string().min(1).max(16 * 1024).optional(),
});
export type PrincipalKeyRevoked = z.infer<typeof PrincipalKeyRevoked>;

/** The JWS `typ` of a signed PrincipalRegistration: one kind of signed object cannot pass for another. */
export const PRINCIPAL_REGISTRATION_JWS_TYPE = 'writ-principal-registration+jws';

/**
 * What an operator signs to register a principal or add keys to one
 * (`writ principal add` → `writ.qry.ingress.register-principal`). Ingress
 * appends `principal.registered` / `principal.key_added` only when
 * `registered_by` holds the role `operator` (or is the deployment's trust
 * anchor) and the JWS verifies under one of its keys; the JWS travels in the
 * event as `authorization`.
 */
export const PrincipalRegistration = z.strictObject({
  principal_id: Id,
  principal_type: PrincipalType,
  display_name: Title,
  roles: z.array(PrincipalRole).min(1).max(5),
  keys: z.array(PublicEd25519Jwk).min(1).max(16),
  registered_by: Id,
  registered_at: Timestamp,
});
export type PrincipalRegistration = z.infer<typeof PrincipalRegistration>;

/** `writ.qry.ingress.register-principal` (request/reply): the signed PrincipalRegistration. */
export const RegisterPrincipal = z.strictObject({ jws: z.string().min(1).max(16 * 1024) });
export type RegisterPrincipal = z.infer<typeof RegisterPrincipal>;

/** The reply: what was appended (`unchanged`: the log already says so; a replay appends nothing). */
export const PrincipalRegistrationOutcome = z.strictObject({
  principal_id: Id,
  outcome: z.enum(['registered', 'key_added', 'unchanged']),
  kids_added: z.array(z.string()).max(16),
});
export type PrincipalRegistrationOutcome = z.infer<typeof PrincipalRegistrationOutcome>;

/**
 * The deployment's trust anchor (`<WRIT_HOME>/trust-anchor.json`, written by
 * `writ init`): the first operator and its public keys. Registrations signed by
 * one of these keys are authorized without anything in the log; every other
 * authority is derived from them through operator-signed registrations.
 */
export const TrustAnchor = z.strictObject({
  principal_id: Id,
  keys: z.array(PublicEd25519Jwk).min(1).max(16),
});
export type TrustAnchor = z.infer<typeof TrustAnchor>;

/** The JWS `typ` of a signed PrincipalRevocation. */
export const PRINCIPAL_REVOCATION_JWS_TYPE = 'writ-principal-revocation+jws';

/**
 * What an operator signs to revoke a principal's keys (`writ principal revoke` →
 * `writ.qry.ingress.revoke-principal`): the named kids, or every active key when
 * `kids` is absent. Ingress appends one `principal.key_revoked` per key, with the
 * JWS as its authorization; the CLI then cuts the principal's bus credential.
 */
export const PrincipalRevocation = z.strictObject({
  principal_id: Id,
  kids: z.array(z.string().min(1).max(128)).min(1).max(16).optional(),
  reason: Text,
  revoked_by: Id,
  revoked_at: Timestamp,
});
export type PrincipalRevocation = z.infer<typeof PrincipalRevocation>;

/** `writ.qry.ingress.revoke-principal` (request/reply): the signed PrincipalRevocation. */
export const RevokePrincipal = z.strictObject({ jws: z.string().min(1).max(16 * 1024) });
export type RevokePrincipal = z.infer<typeof RevokePrincipal>;

/** The reply: the kids revoked now (empty: they already were; a replay appends nothing). */
export const PrincipalRevocationOutcome = z.strictObject({ principal_id: Id, kids_revoked: z.array(z.string()).max(16) });
export type PrincipalRevocationOutcome = z.infer<typeof PrincipalRevocationOutcome>;

/** The JWS `typ` of a signed ServiceEnrollment. */
export const SERVICE_ENROLLMENT_JWS_TYPE = 'writ-service-enrollment+jws';

/**
 * What an operator signs (`writ init`, once per service principal) to authorize a Writ
 * service principal to register and rotate its own signing keys: the service attaches
 * the JWS as `authorization` to the `principal.registered` / `principal.key_added` it
 * appends on its own principal subject (which only its bus credential may write). Not a
 * secret: it authorizes nothing but keys appended on that principal's subject, with at
 * most `roles`. Readers accept such a key only when the enrollment names that principal
 * and its signer was an operator, back to the trust anchor, when it signed.
 */
export const ServiceEnrollment = z.strictObject({
  principal_id: Id,
  /** The roles the service principal may register with (services hold none today). */
  roles: z.array(PrincipalRole).max(5),
  enrolled_by: Id,
  enrolled_at: Timestamp,
});
export type ServiceEnrollment = z.infer<typeof ServiceEnrollment>;
