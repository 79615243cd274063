import { ApprovalResolution, CELL_RENEWAL_JWS_TYPE, PRINCIPAL_REGISTRATION_JWS_TYPE, PRINCIPAL_REVOCATION_JWS_TYPE, PrincipalRegistration, PrincipalRevocation, SERVICE_ENROLLMENT_JWS_TYPE, ServiceEnrollment, CellRenewal, CellResurrection, GrantRevocation, KeyRotation, OutcomeResolution, POLICY_APPLICATION_JWS_TYPE, PolicyProfileApplication, WritError, parseContract, safeParseContract } from '@writ/contracts';
import { BLOCKED_CLAIM_JWS_TYPE, BlockedClaimSubmission, CORRECTION_JWS_TYPE, CorrectionSubmission, DONE_CLAIM_JWS_TYPE, DoneClaimSubmission } from '@writ/contracts';
import { BELIEF_REQUEST_JWS_TYPE, BeliefRequestSubmission, INGRESS_MESSAGE_JWS_TYPE, IngressMessageSubmission, WORKING_STATE_REVISION_JWS_TYPE, WorkingStateRevisionSubmission } from '@writ/contracts';
import { signJws, verifyJws, type JwsSigner, type KeySet } from '@writ/crypto';
import type { z } from 'zod';

/**
 * One kind of signed request: what the signer signs and the verifier checks,
 * shared by the CLI (which signs) and the service (which verifies) so the two
 * cannot drift apart.
 */
export interface SignedRequestKind<S extends z.ZodType = z.ZodType, SF extends string = string, TF extends string = string> {
  /** The contract's name (in CONTRACT_INVALID and in messages). */
  readonly contract: string;
  readonly schema: S;
  /** The field naming the signer (`revoked_by`, `resolved_by`, ...). */
  readonly signerField: SF;
  /** The field carrying when it was signed (`revoked_at`, `resolved_at`, ...). */
  readonly signedAtField: TF;
  /** The protected header's `typ`, where the kind has one: a JWS of another kind then cannot pass for it. */
  readonly typ?: string;
}

function kind<S extends z.ZodType, SF extends keyof z.output<S> & string, TF extends keyof z.output<S> & string>(spec: SignedRequestKind<S, SF, TF>): SignedRequestKind<S, SF, TF> {
  return spec;
}

/** The director-signed requests of the governed path. Adding a `typ` to one is a wire change: old clients' JWS would be refused. */
export const SIGNED_REQUESTS = {
  /** `writ approve|deny` → `<root>.qry.approval.resolve`. */
  approvalResolution: kind({ contract: 'ApprovalResolution', schema: ApprovalResolution, signerField: 'resolved_by', signedAtField: 'resolved_at' }),
  /** `writ grant revoke` → `<root>.qry.approval.revoke-grant`. */
  grantRevocation: kind({ contract: 'GrantRevocation', schema: GrantRevocation, signerField: 'revoked_by', signedAtField: 'revoked_at' }),
  /** `writ keys rotate` → `<root>.qry.<service>.rotate-key`. */
  keyRotation: kind({ contract: 'KeyRotation', schema: KeyRotation, signerField: 'requested_by', signedAtField: 'requested_at' }),
  /** `writ action resolve` → `<root>.qry.executor.resolve-outcome`. */
  outcomeResolution: kind({ contract: 'OutcomeResolution', schema: OutcomeResolution, signerField: 'resolved_by', signedAtField: 'resolved_at' }),
  /** `writ cell resurrect` → `<root>.qry.executor.resurrect-cell`. */
  cellResurrection: kind({ contract: 'CellResurrection', schema: CellResurrection, signerField: 'resurrected_by', signedAtField: 'resurrected_at' }),
  /** `writ cell renew` → `<root>.qry.executor.renew-cell`. */
  cellRenewal: kind({ contract: 'CellRenewal', schema: CellRenewal, signerField: 'renewed_by', signedAtField: 'renewed_at', typ: CELL_RENEWAL_JWS_TYPE }),
  /** `writ policy apply` → `<root>.qry.policy.apply-profile`. */
  policyApplication: kind({
    contract: 'PolicyProfileApplication',
    schema: PolicyProfileApplication,
    signerField: 'applied_by',
    signedAtField: 'applied_at',
    typ: POLICY_APPLICATION_JWS_TYPE,
  }),
  /** `writ principal add` → `<root>.qry.ingress.register-principal` (signed by an operator; ingress checks the role). */
  principalRegistration: kind({
    contract: 'PrincipalRegistration',
    schema: PrincipalRegistration,
    signerField: 'registered_by',
    signedAtField: 'registered_at',
    typ: PRINCIPAL_REGISTRATION_JWS_TYPE,
  }),
  /** `writ principal revoke` → `<root>.qry.ingress.revoke-principal` (signed by an operator). */
  principalRevocation: kind({ contract: 'PrincipalRevocation', schema: PrincipalRevocation, signerField: 'revoked_by', signedAtField: 'revoked_at', typ: PRINCIPAL_REVOCATION_JWS_TYPE }),
  /** `writ init` → `<WRIT_HOME>/services/<principal>.enrollment.jws`: a service principal may register and rotate its own keys (signed by an operator). */
  serviceEnrollment: kind({ contract: 'ServiceEnrollment', schema: ServiceEnrollment, signerField: 'enrolled_by', signedAtField: 'enrolled_at', typ: SERVICE_ENROLLMENT_JWS_TYPE }),
  /** `writ task done` → `<root>.qry.orchestrator.claim-done` (signed by the task's owner; the orchestrator checks who). */
  doneClaim: kind({ contract: 'DoneClaimSubmission', schema: DoneClaimSubmission, signerField: 'claimed_by', signedAtField: 'claimed_at', typ: DONE_CLAIM_JWS_TYPE }),
  /** `writ task blocked` → `<root>.qry.orchestrator.claim-blocked`. */
  blockedClaim: kind({ contract: 'BlockedClaimSubmission', schema: BlockedClaimSubmission, signerField: 'claimed_by', signedAtField: 'claimed_at', typ: BLOCKED_CLAIM_JWS_TYPE }),
  /** `writ task correct` → `<root>.qry.orchestrator.claim-correction`. */
  correction: kind({ contract: 'CorrectionSubmission', schema: CorrectionSubmission, signerField: 'claimed_by', signedAtField: 'claimed_at', typ: CORRECTION_JWS_TYPE }),
  /** `writ working-state set` → `<root>.qry.orchestrator.revise-working-state` (the task's owner or a director; the orchestrator checks who). */
  workingStateRevision: kind({
    contract: 'WorkingStateRevisionSubmission',
    schema: WorkingStateRevisionSubmission,
    signerField: 'revised_by',
    signedAtField: 'revised_at',
    typ: WORKING_STATE_REVISION_JWS_TYPE,
  }),
  /** `writ belief assert|revoke` → `<root>.qry.orchestrator.change-belief`. */
  beliefRequest: kind({ contract: 'BeliefRequestSubmission', schema: BeliefRequestSubmission, signerField: 'requested_by', signedAtField: 'requested_at', typ: BELIEF_REQUEST_JWS_TYPE }),
  /** `writ say` → `<root>.qry.ingress.submit-message` (any registered principal, about its own conversation; ingress checks the tasks it names). */
  ingressMessage: kind({ contract: 'IngressMessageSubmission', schema: IngressMessageSubmission, signerField: 'sent_by', signedAtField: 'sent_at', typ: INGRESS_MESSAGE_JWS_TYPE }),
} as const;

/** Why a signed request was refused; each service maps these onto its own error codes. */
export type SignedRequestFailureReason = 'signature_invalid' | 'signer_not_allowed' | 'stale' | 'contract_invalid';

/**
 * Builds the service's own error for a refusal. For `contract_invalid`, `cause`
 * is the ContractError (CONTRACT_INVALID, every offending path) and `details`
 * its `{ contract, issues }`: a service that answers CONTRACT_INVALID returns `cause`.
 */
export type SignedRequestFailure = (reason: SignedRequestFailureReason, message: string, details: Record<string, unknown>, cause?: unknown) => Error;

/** A principal as the verifier needs it (`PrincipalRecord` of the PrincipalRegistry fits). */
export interface SignedRequestPrincipal {
  readonly principal_id: string;
  readonly roles: readonly string[];
  readonly principal_type?: string;
}

/** Principals and their active keys as the log describes them: `PrincipalRegistry` fits. */
export interface SignedRequestPrincipals<P extends SignedRequestPrincipal = SignedRequestPrincipal> {
  lookup(principalId: string): Promise<P | undefined>;
  /** The principal's active keys (a revoked key is not among them). */
  verificationKeys(principalId: string): Promise<KeySet>;
}

export interface SignedRequestRules<S extends z.ZodType = z.ZodType> extends SignedRequestKind<S> {
  /**
   * `director` (the role, and never an agent) for every request a service
   * acts on by itself; `operator` (the role, never an agent) for administration; `any` only where a decider downstream rules on the
   * signer with its own codes (approval resolutions: the kernel's approval decider).
   */
  readonly signers: 'director' | 'operator' | 'any';
  /** ±seconds around the service clock the signing time must lie in; `null`: not checked (only where another expiry bounds a replay). */
  readonly freshnessSeconds: number | null;
}

export interface SignedRequestDeps<P extends SignedRequestPrincipal = SignedRequestPrincipal> {
  readonly principals: SignedRequestPrincipals<P>;
  readonly clock: () => Date;
  readonly failure: SignedRequestFailure;
}

export interface VerifiedSignedRequest<T, P extends SignedRequestPrincipal> {
  readonly payload: T;
  /** The signer's principal id (= the payload's signer field). */
  readonly signer: string;
  /** The signer as the log describes it now. */
  readonly principal: P;
}

/**
 * What a compact JWS claims to carry, read WITHOUT verifying it: only to learn
 * whose keys must verify it (and, for a caller, to refuse a request for another
 * object early). Nothing read here is trusted. Not a compact JWS with a JSON
 * payload → `signature_invalid`; not the contract → `contract_invalid`.
 */
export function claimedSignedRequest<S extends z.ZodType>(jws: string, request: Pick<SignedRequestKind<S>, 'contract' | 'schema'>, failure: SignedRequestFailure): z.output<S> {
  const parts = typeof jws === 'string' ? jws.split('.') : [];
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part)) || parts[1] === '') {
    throw failure('signature_invalid', `the ${request.contract} is not a compact JWS with an attached payload`, { reason: 'malformed' });
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8'));
  } catch (cause) {
    throw failure('signature_invalid', `the ${request.contract} payload is not JSON`, { reason: 'malformed' }, cause);
  }
  return parsePayload(request, payload, failure);
}

/**
 * A director-signed request, verified the one way every service does it:
 *
 * 1. the payload is read unverified only to learn who claims to have signed it;
 * 2. that principal must be in the log (else `signer_not_allowed`, `unknown_principal`);
 * 3. the JWS must verify with one of its active keys, with the kind's `typ` if it has one
 *    (else `signature_invalid`: forged, tampered, revoked key, wrong typ);
 * 4. with `signers: 'director'` (or `'operator'`), the principal must hold that role and not
 *    be an agent (else `signer_not_allowed`, `not_director` / `not_operator` / `agent`);
 * 5. its signing time must lie within ±`freshnessSeconds` of the clock, both ways
 *    (else `stale`): a captured request cannot be replayed later.
 *
 * Rules beyond these (not the proposer, the request names this object) stay with the caller.
 */
export async function verifySignedRequest<S extends z.ZodType, P extends SignedRequestPrincipal>(
  jws: string,
  rules: SignedRequestRules<S>,
  deps: SignedRequestDeps<P>,
): Promise<VerifiedSignedRequest<z.output<S>, P>> {
  const { failure } = deps;
  const claimed = claimedSignedRequest(jws, rules, failure) as Record<string, unknown>;
  const claimedSigner = String(claimed[rules.signerField]);
  const principal = await deps.principals.lookup(claimedSigner);
  if (principal === undefined) {
    throw failure('signer_not_allowed', `${claimedSigner} is not a registered principal`, { principal_id: claimedSigner, reason: 'unknown_principal' });
  }
  const signer = principal.principal_id;
  let verified: Uint8Array;
  try {
    const keys = await deps.principals.verificationKeys(signer);
    verified = (await verifyJws(jws, keys, rules.typ === undefined ? {} : { typ: rules.typ })).payload;
  } catch (cause) {
    const typ = rules.typ === undefined ? '' : ` (typ ${rules.typ})`;
    throw failure('signature_invalid', `the ${rules.contract} is not signed by an active key of ${signer}${typ}`, {
      principal_id: signer,
      reason: cause instanceof WritError ? cause.code : 'unverifiable',
    }, cause);
  }
  const payload = parsePayload(rules, JSON.parse(new TextDecoder().decode(verified)), failure);
  const fields = payload as Record<string, unknown>;
  if (fields[rules.signerField] !== signer) {
    throw failure('signature_invalid', `the verified ${rules.contract} names another signer than ${signer}`, { principal_id: signer, reason: 'signer_changed' });
  }
  if (rules.signers !== 'any' && (!principal.roles.includes(rules.signers) || principal.principal_type === 'agent')) {
    const reason = principal.principal_type === 'agent' ? 'agent' : `not_${rules.signers}`;
    throw failure('signer_not_allowed', `${signer} may not sign a ${rules.contract}: only a${rules.signers === 'operator' ? 'n' : ''} ${rules.signers} (never an agent) may`, {
      principal_id: signer,
      roles: principal.roles,
      reason,
    });
  }
  if (rules.freshnessSeconds !== null) {
    const now = deps.clock();
    const signedAt = Date.parse(String(fields[rules.signedAtField]));
    const skewMs = Math.abs(now.getTime() - signedAt);
    if (!Number.isFinite(signedAt) || skewMs > rules.freshnessSeconds * 1000) {
      throw failure(
        'stale',
        `the ${rules.contract} was signed ${Number.isFinite(skewMs) ? Math.round(skewMs / 1000) : '?'} s away from now (at most ${rules.freshnessSeconds} s): sign it again, and check the signer's clock`,
        { principal_id: signer, [rules.signedAtField]: fields[rules.signedAtField], now: now.toISOString() },
      );
    }
  }
  return { payload, signer, principal };
}

/**
 * Signs a request of `request`'s kind as `signer` at `now`: the payload is `fields` plus
 * the signer and signed-at fields, checked against the contract before it is signed.
 */
export async function signRequest<S extends z.ZodType, SF extends string, TF extends string>(
  request: SignedRequestKind<S, SF, TF>,
  fields: Omit<z.input<S>, SF | TF>,
  by: { readonly principalId: string; readonly key: JwsSigner; readonly now: Date },
): Promise<{ readonly payload: z.output<S>; readonly jws: string }> {
  const payload = parseContract(request.contract, request.schema, {
    ...(fields as Record<string, unknown>),
    [request.signerField]: by.principalId,
    [request.signedAtField]: by.now.toISOString(),
  });
  const jws = await signJws(JSON.stringify(payload), by.key, request.typ === undefined ? {} : { typ: request.typ });
  return { payload, jws };
}

function parsePayload<S extends z.ZodType>(request: Pick<SignedRequestKind<S>, 'contract' | 'schema'>, payload: unknown, failure: SignedRequestFailure): z.output<S> {
  const parsed = safeParseContract(request.contract, request.schema, payload);
  if (!parsed.ok) {
    throw failure('contract_invalid', parsed.error.message, { contract: request.contract, issues: parsed.error.issues }, parsed.error);
  }
  return parsed.value;
}
