import { parseContract, WritError } from '@writ/contracts';
import { verifyJws } from '@writ/crypto';
import type { z } from 'zod';
import { ApprovalServiceError } from './approval-errors.js';
import type { Clock, PrincipalDirectory } from './ports.js';

export interface SignedRequestRules<S extends z.ZodType> {
  /** The contract's name in CONTRACT_INVALID. */
  readonly contract: string;
  readonly schema: S;
  /** The field naming the signer (`revoked_by`, `requested_by`). */
  readonly signerField: keyof z.output<S> & string;
  /** The field carrying when it was signed (`revoked_at`, `requested_at`). */
  readonly signedAtField: keyof z.output<S> & string;
}

export interface SignedRequestDeps {
  readonly principals: PrincipalDirectory;
  readonly clock: Clock;
  readonly freshnessSeconds: number;
}

/**
 * A director's signed request (a grant revocation, a key rotation), verified
 * the way `writ approve` resolutions are, plus freshness:
 *
 * 1. the compact JWS's payload is read unverified only to learn who claims to
 *    have signed it;
 * 2. it must verify with an active key of that principal in the log
 *    (APPROVAL_SIGNATURE_INVALID: forged, tampered, unknown or revoked key);
 * 3. the signer must hold the role `director` and not be an agent
 *    (APPROVAL_SIGNER_NOT_ALLOWED);
 * 4. its signing time must be within ±`freshnessSeconds` of the service clock
 *    (APPROVAL_SIGNED_REQUEST_STALE): an old signed request cannot be replayed.
 */
export async function verifySignedRequest<S extends z.ZodType>(
  jws: string,
  rules: SignedRequestRules<S>,
  deps: SignedRequestDeps,
): Promise<{ readonly payload: z.output<S>; readonly signer: string }> {
  const claimed = parseContract(rules.contract, rules.schema, decodePayload(jws)) as Record<string, unknown>;
  const claimedSigner = String(claimed[rules.signerField]);
  const signer = await deps.principals.lookup(claimedSigner);
  if (signer === undefined) {
    throw new ApprovalServiceError('APPROVAL_SIGNER_NOT_ALLOWED', `${claimedSigner} is not a registered principal`, {
      details: { principal_id: claimedSigner, reason: 'unknown_principal' },
    });
  }
  let verified: Uint8Array;
  try {
    verified = (await verifyJws(jws, await deps.principals.verificationKeys(signer.principal_id))).payload;
  } catch (cause) {
    throw new ApprovalServiceError('APPROVAL_SIGNATURE_INVALID', `the ${rules.contract} is not signed by an active key of ${signer.principal_id}`, {
      cause,
      details: { principal_id: signer.principal_id, reason: cause instanceof WritError ? cause.code : 'unverifiable' },
    });
  }
  const payload = parseContract(rules.contract, rules.schema, JSON.parse(new TextDecoder().decode(verified)));
  if (!signer.roles.includes('director') || signer.principal_type === 'agent') {
    const reason = signer.principal_type === 'agent' ? 'agent' : 'not_director';
    throw new ApprovalServiceError('APPROVAL_SIGNER_NOT_ALLOWED', `${signer.principal_id} may not sign a ${rules.contract}: only a director (never an agent) may`, {
      details: { principal_id: signer.principal_id, reason },
    });
  }
  const signedAt = Date.parse(String((payload as Record<string, unknown>)[rules.signedAtField]));
  const skewMs = Math.abs(deps.clock().getTime() - signedAt);
  if (!Number.isFinite(signedAt) || skewMs > deps.freshnessSeconds * 1000) {
    throw new ApprovalServiceError(
      'APPROVAL_SIGNED_REQUEST_STALE',
      `the ${rules.contract} was signed ${Math.round(skewMs / 1000)} s away from now (at most ${deps.freshnessSeconds} s): sign it again, and check the signer's clock`,
      { details: { principal_id: signer.principal_id, [rules.signedAtField]: (payload as Record<string, unknown>)[rules.signedAtField] } },
    );
  }
  return { payload, signer: signer.principal_id };
}

/** The payload of a compact JWS, read WITHOUT verifying it; not a compact JWS with a JSON payload → APPROVAL_SIGNATURE_INVALID. */
function decodePayload(jws: string): unknown {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part)) || parts[1] === '') {
    throw new ApprovalServiceError('APPROVAL_SIGNATURE_INVALID', 'the signed request is not a compact JWS with an attached payload');
  }
  try {
    return JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8'));
  } catch (cause) {
    throw new ApprovalServiceError('APPROVAL_SIGNATURE_INVALID', 'the signed payload is not JSON', { cause });
  }
}
