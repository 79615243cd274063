import { LIMITS, hasErrorCode, safeParseActionRequest, type ActionRequest, type IngressRejectionCode } from '@writ/contracts';
import { verifyJws } from '@writ/crypto';
import type { PrincipalRecord } from '@writ/runtime';
import { peekCompactJws } from './compact-jws.js';
import type { PrincipalDirectory } from './ports.js';

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

export type Verification =
  | { readonly ok: true; readonly request: ActionRequest; readonly principal: PrincipalRecord; readonly kid: string }
  | { readonly ok: false; readonly code: IngressRejectionCode; readonly message: string; readonly actionRequestId?: string };

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const textDecoder = new TextDecoder('utf-8', { fatal: true });

function reject(code: IngressRejectionCode, message: string, actionRequestId?: string): Verification {
  const bounded = message.length > LIMITS.text ? `${message.slice(0, LIMITS.text - 1)}…` : message;
  return actionRequestId !== undefined && ID.test(actionRequestId)
    ? { ok: false, code, message: bounded, actionRequestId }
    : { ok: false, code, message: bounded };
}

/**
 * Authenticates and validates one signed ActionRequest, in the order of
 * docs/governed-path.md step 1: size, JWS form, principal, key, signature
 * (EdDSA only), ActionRequest contract, proposer = principal, freshness.
 * Never throws for untrusted input: every refusal is a coded result. The
 * claimed action_request_id is reported only once the signature verified,
 * so a forged request cannot mark someone else's action as rejected.
 */
export async function verifyActionRequest(input: VerificationInput, principals: PrincipalDirectory): Promise<Verification> {
  if (input.rawBytes > input.maxBytes) {
    return reject('INGRESS_TOO_LARGE', `the signed request is ${input.rawBytes} bytes; at most ${input.maxBytes} are accepted`);
  }
  const peek = peekCompactJws(input.raw);
  if (!peek.wellFormed) return reject('INGRESS_REQUEST_INVALID', 'the body is not a compact JWS (<header>.<payload>.<signature>, base64url)');
  if (peek.alg !== 'EdDSA') return reject('INGRESS_SIGNATURE_INVALID', `the JWS algorithm must be EdDSA, not ${JSON.stringify(peek.alg ?? null)}`);
  if (peek.kid === undefined) return reject('INGRESS_KEY_UNKNOWN', 'the JWS header names no kid');

  const principal = ID.test(input.principalId) ? await principals.lookup(input.principalId) : undefined;
  if (principal === undefined) return reject('INGRESS_PRINCIPAL_UNKNOWN', `principal ${JSON.stringify(input.principalId)} is not registered`);
  if (!principal.keys.has(peek.kid)) {
    const why = principal.revoked_kids.has(peek.kid) ? 'was revoked' : 'is not one of its keys';
    return reject('INGRESS_KEY_UNKNOWN', `key ${JSON.stringify(peek.kid)} of principal ${principal.principal_id} ${why}`);
  }

  let payload: Uint8Array;
  try {
    payload = (await verifyJws(input.raw, await principals.verificationKeys(principal))).payload;
  } catch (error) {
    if (hasErrorCode(error, 'JWS_KID_UNKNOWN', 'JWS_KID_MISSING')) return reject('INGRESS_KEY_UNKNOWN', `key ${peek.kid} is not an active key of ${principal.principal_id}`);
    if (hasErrorCode(error, 'JWS_MALFORMED')) return reject('INGRESS_REQUEST_INVALID', 'the JWS is malformed');
    return reject('INGRESS_SIGNATURE_INVALID', `the signature does not verify under key ${peek.kid} of ${principal.principal_id}`);
  }

  const claimedId = peek.actionRequestId;
  let json: unknown;
  try {
    json = JSON.parse(textDecoder.decode(payload));
  } catch {
    return reject('INGRESS_REQUEST_INVALID', 'the JWS payload is not UTF-8 JSON');
  }
  const parsed = safeParseActionRequest(json);
  if (!parsed.ok) {
    const paths = parsed.error.issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ');
    return reject('INGRESS_REQUEST_INVALID', `the ActionRequest is invalid: ${paths}`, claimedId);
  }
  const request = parsed.value;
  if (request.proposed_by !== principal.principal_id) {
    return reject(
      'INGRESS_PRINCIPAL_MISMATCH',
      `proposed_by ${request.proposed_by} is not the principal ${principal.principal_id} the request came from`,
      request.action_request_id,
    );
  }
  const skewMs = Math.abs(Date.parse(request.proposed_at) - input.receivedAt.getTime());
  if (!(skewMs <= input.freshnessSeconds * 1_000)) {
    return reject(
      'INGRESS_STALE',
      `proposed_at ${request.proposed_at} is more than ${input.freshnessSeconds} s from the time of receipt ${input.receivedAt.toISOString()}`,
      request.action_request_id,
    );
  }
  return { ok: true, request, principal, kid: peek.kid };
}
