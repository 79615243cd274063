import { hasErrorCode, safeParseCapabilityGrantClaims, type CapabilityGrantClaims } from '@writ/contracts';
import { canonicalJson, sha256Hex, verifyClaims, type KeySet } from '@writ/crypto';
import type { GrantRefusalCode } from '@writ/kernel';
import { z } from 'zod';

/** The `typ` header of a capability grant: no other signed Writ object passes for one. */
export const GRANT_TYP = 'writ-grant+jwt';

/**
 * Why the executor refuses a use of a grant, recorded as `grant.refused.code`.
 * The kernel's refusal codes (window, task, attempt, class, scope, uses, revoked)
 * plus three the executor finds before the kernel sees the claims:
 * - `GRANT_SIGNATURE_INVALID`: not an EdDSA JWS of type writ-grant+jwt by an
 *   active key of the grant issuer as the log records it (forged, tampered,
 *   unknown kid, revoked key, unknown issuer, malformed);
 * - `GRANT_CLAIMS_INVALID`: signed, but the claims are not CapabilityGrantClaims,
 *   name another issuer or audience, another grant id than the command, or
 *   differ from the claims `grant.issued` recorded;
 * - `GRANT_PARAMS_MISMATCH`: `constraints.params_sha256` is not the hash of the
 *   request's canonical params (the grant is being reused for other params);
 * - `GRANT_ISSUER_UNAUTHORIZED`: it verifies under a key of the issuer whose
 *   registration in the log does not chain to the trust anchor (no valid operator
 *   enrollment of the issuer: a key "registered" with a bus credential alone).
 */
export const ExecutorRefusalCode = z.enum([
  'GRANT_NOT_YET_VALID',
  'GRANT_EXPIRED',
  'GRANT_WRONG_TASK',
  'GRANT_WRONG_ATTEMPT',
  'GRANT_WRONG_ACTION_CLASS',
  'GRANT_OUT_OF_SCOPE',
  'GRANT_SECRET_OUT_OF_SCOPE',
  'GRANT_WALL_CLOCK_EXCEEDED',
  'GRANT_EXHAUSTED',
  'GRANT_REVOKED',
  'GRANT_SIGNATURE_INVALID',
  'GRANT_CLAIMS_INVALID',
  'GRANT_PARAMS_MISMATCH',
  'GRANT_ISSUER_UNAUTHORIZED',
]);
export type ExecutorRefusalCode = z.infer<typeof ExecutorRefusalCode>;

// Compile-time check that every kernel refusal code is one of ours.
const _kernelCodesIncluded: readonly ExecutorRefusalCode[] = [] as GrantRefusalCode[];

export interface GrantRefusal {
  readonly ok: false;
  readonly code: ExecutorRefusalCode;
  readonly message: string;
}

export type GrantVerification = { readonly ok: true; readonly claims: CapabilityGrantClaims; readonly kid: string } | GrantRefusal;

export interface VerifyGrantInput {
  readonly jws: string;
  /** The command's grant_id: the JWS must be that grant. */
  readonly grantId: string;
  readonly stepId: string;
  /** The request's params, hashed against `constraints.params_sha256`. */
  readonly params: unknown;
  /** Active keys of the issuer, from the log. */
  readonly keys: KeySet;
  readonly issuer: string;
  readonly audience: string;
  readonly now: Date;
  /** The claims `grant.issued` recorded, if the log holds it: the JWS must carry exactly these. */
  readonly recorded?: CapabilityGrantClaims;
}

/** SHA-256 of the RFC 8785 canonical params: what `constraints.params_sha256` pins. */
export function paramsSha256(params: unknown): string {
  return sha256Hex(canonicalJson(params));
}

/** Crypto failure → refusal code. Anything else is not a verdict on the grant and is rethrown. */
const CRYPTO_REFUSALS: Readonly<Record<string, ExecutorRefusalCode>> = {
  JWS_EXPIRED: 'GRANT_EXPIRED',
  JWS_NOT_YET_VALID: 'GRANT_NOT_YET_VALID',
  JWS_CLAIM_INVALID: 'GRANT_CLAIMS_INVALID',
  JWS_MALFORMED: 'GRANT_SIGNATURE_INVALID',
  JWS_ALG_NOT_ALLOWED: 'GRANT_SIGNATURE_INVALID',
  JWS_KID_MISSING: 'GRANT_SIGNATURE_INVALID',
  JWS_KID_UNKNOWN: 'GRANT_SIGNATURE_INVALID',
  JWS_SIGNATURE_INVALID: 'GRANT_SIGNATURE_INVALID',
  JWS_TYPE_MISMATCH: 'GRANT_SIGNATURE_INVALID',
  CRYPTO_KEY_INVALID: 'GRANT_SIGNATURE_INVALID',
};

function refuse(code: ExecutorRefusalCode, message: string): GrantRefusal {
  return { ok: false, code, message: message.slice(0, 4_096) };
}

/**
 * Verifies a grant the way the executor must before any side effect (DESIGN
 * invariant 3): signature by the issuer's keys from the log, `typ`, `iss`,
 * `aud`, `exp` / `nbf`, the claims' shape, that it is the grant the command
 * names, bound to the command's step, minted for these params, and the one the
 * log recorded. The use itself (task, attempt, class, scope, uses) is the
 * kernel's `checkGrantUse`, decided next.
 */
export async function verifyGrant(input: VerifyGrantInput): Promise<GrantVerification> {
  let verified;
  try {
    verified = await verifyClaims(input.jws, input.keys, { issuer: input.issuer, audience: input.audience, typ: GRANT_TYP, now: input.now });
  } catch (error) {
    const code = hasErrorCode(error) ? CRYPTO_REFUSALS[error.code] : undefined;
    if (code === undefined) throw error;
    return refuse(code, `grant ${input.grantId} fails verification (${(error as { code: string }).code}) against the keys of ${input.issuer} in the log`);
  }
  const parsed = safeParseCapabilityGrantClaims(verified.claims);
  if (!parsed.ok) {
    const paths = parsed.error.issues.map((issue) => issue.path || '(root)').slice(0, 8);
    return refuse('GRANT_CLAIMS_INVALID', `grant ${input.grantId} is signed but its claims are not a capability grant (${paths.join(', ')})`);
  }
  const claims = parsed.value;
  if (claims.jti !== input.grantId) return refuse('GRANT_CLAIMS_INVALID', `the JWS is grant ${claims.jti}, not ${input.grantId}`);
  if (claims.step_id !== input.stepId) return refuse('GRANT_WRONG_ATTEMPT', `grant ${claims.jti} is bound to step ${claims.step_id}`);
  const pinned = claims.constraints?.params_sha256;
  if (pinned !== undefined && pinned !== paramsSha256(input.params)) {
    return refuse('GRANT_PARAMS_MISMATCH', `grant ${claims.jti} was minted for other params (params_sha256 differs)`);
  }
  if (input.recorded !== undefined && canonicalJson(input.recorded) !== canonicalJson(claims)) {
    return refuse('GRANT_CLAIMS_INVALID', `grant ${claims.jti} differs from the claims grant.issued recorded`);
  }
  return { ok: true, claims, kid: verified.kid };
}
