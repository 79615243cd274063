import { ApprovalResolution, GrantRevocation, HTTP_TOKEN_DEFAULT_TTL_SECONDS, HTTP_TOKEN_JWS_TYPE, HTTP_TOKEN_MAX_TTL_SECONDS, HttpTokenClaims } from '@writ/contracts';
import { signCompactJws } from './compact-jws.js';
import { canonicalJson } from './canonical-json.js';
import { sha256Hex } from './digest.js';
import type { SigningKey } from './ed25519-keys.js';
import { VerificationError } from './verification-errors.js';

/**
 * What a principal signs with its own key over WebCrypto, in exactly the
 * format the services verify (the CLI signs the same with jose): HTTP bearer
 * tokens (`mintHttpToken` of @writ/runtime), approval resolutions and grant
 * revocations (`signRequest(SIGNED_REQUESTS.approvalResolution |
 * grantRevocation)` of @writ/runtime). Cross-
 * checked in the tests against those very verifiers.
 */

type Signer = Pick<SigningKey, 'privateKey' | 'kid'>;

export interface BearerTokenOptions {
  readonly principalId: string;
  readonly key: Signer;
  /** `writ-http:<subject root>` (`httpAudience`). */
  readonly audience: string;
  readonly now: Date;
  /** Default 300 s, at most 900 s. */
  readonly ttlSeconds?: number;
  /** A fresh unique id (`crypto.randomUUID()`). */
  readonly jti: string;
}

/** The compact JWS of an HTTP bearer token: typ writ-http+jws, sub = iss = the principal, aud the API's. */
export async function mintBearerToken(options: BearerTokenOptions): Promise<{ readonly token: string; readonly expiresAt: Date }> {
  const ttl = options.ttlSeconds ?? HTTP_TOKEN_DEFAULT_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > HTTP_TOKEN_MAX_TTL_SECONDS) {
    throw new VerificationError('VERIFY_ARGUMENT_INVALID', `a token lives 1 to ${HTTP_TOKEN_MAX_TTL_SECONDS} s, not ${ttl}`);
  }
  const iat = Math.floor(options.now.getTime() / 1000);
  const claims = HttpTokenClaims.parse({ sub: options.principalId, iss: options.principalId, aud: options.audience, iat, exp: iat + ttl, jti: options.jti });
  return { token: await signCompactJws(JSON.stringify(claims), options.key, { typ: HTTP_TOKEN_JWS_TYPE }), expiresAt: new Date((iat + ttl) * 1000) };
}

export interface ResolutionFields {
  readonly approval_id: string;
  readonly decision: 'grant' | 'deny';
  /** `sha256:<hex>` of the packet document the director was shown (`approvalPacketHash`). */
  readonly packet_hash: string;
  readonly note?: string;
}

/**
 * A director's `ApprovalResolution` as `writ approve|deny` signs it: the fields
 * plus `resolved_by` and `resolved_at`, checked against the contract, the
 * contract's output serialized as the payload, no `typ` (the kind has none).
 */
export async function signApprovalResolution(fields: ResolutionFields, by: { readonly principalId: string; readonly key: Signer; readonly now: Date }): Promise<string> {
  const payload = ApprovalResolution.parse({ ...fields, resolved_by: by.principalId, resolved_at: by.now.toISOString() });
  return signCompactJws(JSON.stringify(payload), by.key);
}

export interface RevocationFields {
  readonly grant_id: string;
  readonly task_id: string;
  readonly reason: string;
}

/**
 * A director's `GrantRevocation` as `writ grant revoke` signs it: the fields
 * plus `revoked_by` and `revoked_at`, checked against the contract, no `typ`.
 */
export async function signGrantRevocation(fields: RevocationFields, by: { readonly principalId: string; readonly key: Signer; readonly now: Date }): Promise<string> {
  const payload = GrantRevocation.parse({ ...fields, revoked_by: by.principalId, revoked_at: by.now.toISOString() });
  return signCompactJws(JSON.stringify(payload), by.key);
}

export const APPROVAL_PACKET_FORMAT = 'writ.approval-packet/1';

/**
 * `sha256:<hex>` of the RFC 8785 packet document `{ format, packet, state_witness? }`:
 * what a director signs as `packet_hash` (`approvalPacketHash` of @writ/runtime, which
 * the services compute with Node's synchronous hash; a test keeps the two equal).
 */
export async function approvalPacketHash(packet: unknown, stateWitness?: unknown): Promise<string> {
  const document = { format: APPROVAL_PACKET_FORMAT, packet, ...(stateWitness === undefined || stateWitness === null ? {} : { state_witness: stateWitness }) };
  return `sha256:${await sha256Hex(canonicalJson(document))}`;
}

const PACKET_REF = /^(?:artifact:)?sha256:([0-9a-f]{64})$/;

/** The `packet_hash` a resolution must sign, from the approval's `packet_ref` (`artifact:sha256:<hex>`, or an older `sha256:<hex>`). */
export function packetHashOfRef(ref: string): string | undefined {
  const hex = PACKET_REF.exec(ref)?.[1];
  return hex === undefined ? undefined : `sha256:${hex}`;
}
