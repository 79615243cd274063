import { LIMITS, hasErrorCode, safeParseActionRequest, type ActionRequest, type IngressRejectionCode } from '@writ/contracts';
import { verifyJws, type JwsVerificationKeys } from '@writ/crypto';
import type { PrincipalRecord } from '@writ/runtime';
import { peekCompactJws } from './compact-jws.js';
import type { ParticipantSigner, ParticipantSigners, PrincipalDirectory } from './ports.js';

/** What is checked: the request exactly as it was recorded in `ingress.received`. */
export interface VerificationInput {
  readonly raw: string;
  /** Size of the message as received, in bytes (the recorded `raw` is elided when it is too large). */
  readonly rawBytes: number;
  /** The principal the request is attributed to: the subject token (NATS) or the claimed proposer (HTTP). */
  readonly principalId: string;
  /** The time ingress recorded the request; freshness is judged against it, so a redelivery judges the same way. */
  readonly receivedAt: Date;
  readonly freshnessSeconds: number;
  readonly maxBytes: number;
}

/** Who signed: a registered principal with one of its keys, or a participant with its child key. */
export type RequestSigner =
  | { readonly kind: 'principal'; readonly principal: PrincipalRecord }
  | { readonly kind: 'participant'; readonly participant: ParticipantSigner };

export type Verification =
  | { readonly ok: true; readonly request: ActionRequest; readonly signer: RequestSigner; readonly kid: string }
  | {
      readonly ok: false;
      readonly code: IngressRejectionCode;
      readonly message: string;
      readonly actionRequestId?: string;
      /**
       * The signature verified under a key of the principal the request is
       * attributed to before it was refused (stale, invalid request, proposer
       * mismatch, inactive participant): the principal really sent it, so it
       * holds its idempotency key. False when authentication itself failed.
       */
      readonly authenticated: boolean;
    };

/**
 * The kids a participant's child key goes by: its RFC 7638 JWK thumbprint
 * (base64url, the `kid` `writ principal keygen` gives a key without `--kid`)
 * and its seed 002 fingerprint `sha256:<hex>` (the same digest in hex).
 */
export function participantKids(fingerprint: string): readonly string[] {
  const hex = fingerprint.startsWith('sha256:') ? fingerprint.slice('sha256:'.length) : '';
  return /^[0-9a-f]{64}$/.test(hex) ? [fingerprint, Buffer.from(hex, 'hex').toString('base64url')] : [fingerprint];
}

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const textDecoder = new TextDecoder('utf-8', { fatal: true });

function reject(code: IngressRejectionCode, message: string, actionRequestId?: string): Verification {
  const bounded = message.length > LIMITS.text ? `${message.slice(0, LIMITS.text - 1)}…` : message;
  return actionRequestId !== undefined && ID.test(actionRequestId)
    ? { ok: false, code, message: bounded, actionRequestId, authenticated: false }
    : { ok: false, code, message: bounded, authenticated: false };
}

/** A refusal after the signature verified: the request is authentically the principal's (see `authenticated`). */
function refuseAuthenticated(code: IngressRejectionCode, message: string, actionRequestId?: string): Verification {
  const refusal = reject(code, message, actionRequestId);
  return refusal.ok ? refusal : { ...refusal, authenticated: true };
}

type SignerKeys =
  | { readonly ok: true; readonly signer: RequestSigner; readonly id: string; readonly keys: JwsVerificationKeys }
  | { readonly ok: false; readonly verification: Verification };

/**
 * The principal the request is attributed to, and the keys its signature
 * must verify under. A registered principal comes first (its active keys);
 * otherwise a participant spawned under that id (its child key, whatever its
 * status: an inactive one is refused after its signature verified, so the
 * refusal is about it and not about a forger).
 */
async function signerKeys(principalId: string, kid: string, principals: PrincipalDirectory, participants: ParticipantSigners | undefined): Promise<SignerKeys> {
  const refuse = (code: IngressRejectionCode, message: string): SignerKeys => ({ ok: false, verification: reject(code, message) });
  if (!ID.test(principalId)) return refuse('INGRESS_PRINCIPAL_UNKNOWN', `principal ${JSON.stringify(principalId)} is not registered`);
  const principal = await principals.lookup(principalId);
  if (principal !== undefined) {
    if (!principal.keys.has(kid)) {
      const why = principal.revoked_kids.has(kid) ? 'was revoked' : 'is not one of its keys';
      return refuse('INGRESS_KEY_UNKNOWN', `key ${JSON.stringify(kid)} of principal ${principal.principal_id} ${why}`);
    }
    return { ok: true, signer: { kind: 'principal', principal }, id: principal.principal_id, keys: await principals.verificationKeys(principal) };
  }
  const participant = participants === undefined ? undefined : await participants.lookup(principalId);
  if (participant === undefined || participants === undefined) return refuse('INGRESS_PRINCIPAL_UNKNOWN', `principal ${JSON.stringify(principalId)} is not registered`);
  if (!participantKids(participant.child_key.fingerprint).includes(kid)) {
    return refuse('INGRESS_KEY_UNKNOWN', `key ${JSON.stringify(kid)} is not the child key of participant ${participant.seed_id} (its kid is the key's JWK thumbprint or ${participant.child_key.fingerprint})`);
  }
  return { ok: true, signer: { kind: 'participant', participant }, id: participant.seed_id, keys: await participants.verificationKey(participant, kid) };
}

/** Why a participant whose signature verified may not act now, if it may not (judged at the time of receipt). */
function inactive(participant: ParticipantSigner, receivedAt: Date): string | undefined {
  if (participant.status !== 'active') return `participant ${participant.seed_id} is ${participant.status}; only an active participant acts`;
  if (!(receivedAt.getTime() < Date.parse(participant.expires_at))) return `participant ${participant.seed_id} expired at ${participant.expires_at}`;
  return undefined;
}

/**
 * Authenticates and validates one signed ActionRequest, in the order of
 * docs/governed-path.md step 1: size, JWS form, principal (a registered one,
 * else a participant: `participants`), key, signature (EdDSA only), a
 * participant's standing (INGRESS_PARTICIPANT_INACTIVE unless active and
 * inside its TTL), ActionRequest contract, proposer = principal, freshness.
 * Never throws for untrusted input: every refusal is a coded result. The
 * claimed action_request_id is reported only once the signature verified,
 * so a forged request cannot mark someone else's action as rejected; and a
 * refusal says whether the signature had verified (`authenticated`), since
 * only an authenticated request may hold an idempotency key.
 */
export async function verifyActionRequest(input: VerificationInput, principals: PrincipalDirectory, participants?: ParticipantSigners): Promise<Verification> {
  if (input.rawBytes > input.maxBytes) {
    return reject('INGRESS_TOO_LARGE', `the signed request is ${input.rawBytes} bytes; at most ${input.maxBytes} are accepted`);
  }
  const peek = peekCompactJws(input.raw);
  if (!peek.wellFormed) return reject('INGRESS_REQUEST_INVALID', 'the body is not a compact JWS (<header>.<payload>.<signature>, base64url)');
  if (peek.alg !== 'EdDSA') return reject('INGRESS_SIGNATURE_INVALID', `the JWS algorithm must be EdDSA, not ${JSON.stringify(peek.alg ?? null)}`);
  if (peek.kid === undefined) return reject('INGRESS_KEY_UNKNOWN', 'the JWS header names no kid');

  const resolved = await signerKeys(input.principalId, peek.kid, principals, participants);
  if (!resolved.ok) return resolved.verification;
  const { signer, id: signerId } = resolved;

  let payload: Uint8Array;
  try {
    payload = (await verifyJws(input.raw, resolved.keys)).payload;
  } catch (error) {
    if (hasErrorCode(error, 'JWS_KID_UNKNOWN', 'JWS_KID_MISSING')) return reject('INGRESS_KEY_UNKNOWN', `key ${peek.kid} is not an active key of ${signerId}`);
    if (hasErrorCode(error, 'JWS_MALFORMED')) return reject('INGRESS_REQUEST_INVALID', 'the JWS is malformed');
    return reject('INGRESS_SIGNATURE_INVALID', `the signature does not verify under key ${peek.kid} of ${signerId}`);
  }

  const claimedId = peek.actionRequestId;
  if (signer.kind === 'participant') {
    const why = inactive(signer.participant, input.receivedAt);
    if (why !== undefined) return refuseAuthenticated('INGRESS_PARTICIPANT_INACTIVE', why, claimedId);
  }
  let json: unknown;
  try {
    json = JSON.parse(textDecoder.decode(payload));
  } catch {
    return refuseAuthenticated('INGRESS_REQUEST_INVALID', 'the JWS payload is not UTF-8 JSON');
  }
  const parsed = safeParseActionRequest(json);
  if (!parsed.ok) {
    const paths = parsed.error.issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ');
    return refuseAuthenticated('INGRESS_REQUEST_INVALID', `the ActionRequest is invalid: ${paths}`, claimedId);
  }
  const request = parsed.value;
  if (request.proposed_by !== signerId) {
    return refuseAuthenticated(
      'INGRESS_PRINCIPAL_MISMATCH',
      `proposed_by ${request.proposed_by} is not the principal ${signerId} the request came from`,
      request.action_request_id,
    );
  }
  const skewMs = Math.abs(Date.parse(request.proposed_at) - input.receivedAt.getTime());
  if (!(skewMs <= input.freshnessSeconds * 1_000)) {
    return refuseAuthenticated(
      'INGRESS_STALE',
      `proposed_at ${request.proposed_at} is more than ${input.freshnessSeconds} s from the time of receipt ${input.receivedAt.toISOString()}`,
      request.action_request_id,
    );
  }
  return { ok: true, request, signer, kid: peek.kid };
}
