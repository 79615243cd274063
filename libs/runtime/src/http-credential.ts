import { randomUUID } from 'node:crypto';
import {
  HTTP_TOKEN_CLOCK_SKEW_SECONDS,
  HTTP_TOKEN_DEFAULT_TTL_SECONDS,
  HTTP_TOKEN_JWS_TYPE,
  HTTP_TOKEN_MAX_TTL_SECONDS,
  HttpTokenClaims,
  WritError,
  hasErrorCode,
  type HttpAuthErrorCode,
} from '@writ/contracts';
import { signJws, verifyJws, type JwsSigner } from '@writ/crypto';
import type { TrustAnchor } from '@writ/contracts';
import { TrustAnchoredPrincipals } from './principal-admin.js';
import type { PrincipalRecord, PrincipalRegistry } from './principal-registry.js';
import type { SignedRequestPrincipal, SignedRequestPrincipals } from './signed-request.js';

/** A bearer token refused: always HTTP 401, `{ code, message }`. */
export class HttpAuthError extends WritError<HttpAuthErrorCode> {}

/** Who a verified bearer token speaks for. */
export interface HttpCaller<P extends SignedRequestPrincipal = SignedRequestPrincipal> {
  readonly principalId: string;
  /** The key that signed the token. */
  readonly kid: string;
  /** The principal as the log describes it now. */
  readonly principal: P;
  /** When the token expires. */
  readonly expiresAt: Date;
}

export interface HttpTokenVerification<P extends SignedRequestPrincipal = SignedRequestPrincipal> {
  /** Principals and their ACTIVE keys, from the log (`PrincipalRegistry` fits): a revoked key verifies nothing. */
  readonly principals: SignedRequestPrincipals<P>;
  /** This deployment's HTTP audience (`httpAudience(<subject root>)`). */
  readonly audience: string;
  readonly clock: () => Date;
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Verifies the `Authorization` header of an HTTP request, in this order, each
 * refusal an `HttpAuthError` with its code:
 * 1. `Bearer <compact JWS>` (else MISSING / MALFORMED);
 * 2. header `alg` EdDSA (ALG_NOT_ALLOWED), `typ` `writ-http+jws` (TYPE_INVALID), a `kid`;
 * 3. claims are `HttpTokenClaims` with `iss` = `sub` (MALFORMED), `aud` names this deployment's API (AUDIENCE_INVALID);
 * 4. `sub` is a registered principal (PRINCIPAL_UNKNOWN) with an ACTIVE key of that `kid` (KEY_UNKNOWN);
 * 5. the signature verifies under that key (SIGNATURE_INVALID);
 * 6. `exp - iat` ≤ 15 min (LIFETIME_TOO_LONG), `iat` not in the future (NOT_YET_VALID), `exp` not passed (EXPIRED),
 *    each with 30 s of skew.
 * Nothing of the token is trusted before step 5; the key always comes from the log, never the token.
 */
export async function verifyHttpBearer<P extends SignedRequestPrincipal>(authorization: string | undefined, deps: HttpTokenVerification<P>): Promise<HttpCaller<P>> {
  if (authorization === undefined || authorization.trim() === '') {
    throw new HttpAuthError('HTTP_AUTH_MISSING', 'this API needs a credential: a bearer token in the Authorization header (mint one with `writ http token`)');
  }
  const match = BEARER.exec(authorization);
  if (match === null) throw new HttpAuthError('HTTP_AUTH_MISSING', 'the Authorization header must carry a bearer token (mint one with `writ http token`)');
  const token = match[1] as string;
  if (!COMPACT.test(token)) throw new HttpAuthError('HTTP_AUTH_MALFORMED', 'the bearer token is not a compact JWS');
  const [headerPart, payloadPart] = token.split('.') as [string, string, string];
  const header = decodeJson(headerPart, 'header');
  const alg = header['alg'];
  if (alg !== 'EdDSA') throw new HttpAuthError('HTTP_AUTH_ALG_NOT_ALLOWED', `the bearer token's alg must be EdDSA, not ${JSON.stringify(alg ?? null)}`);
  if (header['typ'] !== HTTP_TOKEN_JWS_TYPE) {
    throw new HttpAuthError('HTTP_AUTH_TYPE_INVALID', `the bearer token's typ must be ${HTTP_TOKEN_JWS_TYPE}: a JWS made for anything else is not an HTTP credential`);
  }
  const kid = header['kid'];
  if (typeof kid !== 'string' || kid === '') throw new HttpAuthError('HTTP_AUTH_MALFORMED', 'the bearer token names no kid');
  const parsed = HttpTokenClaims.safeParse(decodeJson(payloadPart, 'claims'));
  if (!parsed.success) throw new HttpAuthError('HTTP_AUTH_MALFORMED', "the bearer token's claims need sub, iss, aud, iat and exp");
  const claims = parsed.data;
  if (claims.iss !== claims.sub) throw new HttpAuthError('HTTP_AUTH_MALFORMED', 'the bearer token must be issued (signed) by its own subject: iss = sub');
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
  if (!audiences.includes(deps.audience)) {
    throw new HttpAuthError('HTTP_AUTH_AUDIENCE_INVALID', `the bearer token is not for this API (its audience must be ${deps.audience})`);
  }
  const principal = await deps.principals.lookup(claims.sub);
  if (principal === undefined) throw new HttpAuthError('HTTP_AUTH_PRINCIPAL_UNKNOWN', `${claims.sub} is not a registered principal`);
  const keys = await deps.principals.verificationKeys(principal.principal_id);
  if (keys.get(kid) === undefined) throw new HttpAuthError('HTTP_AUTH_KEY_UNKNOWN', `${claims.sub} has no active key ${kid} (never registered, or revoked)`);
  try {
    await verifyJws(token, keys, { typ: HTTP_TOKEN_JWS_TYPE });
  } catch (cause) {
    throw new HttpAuthError('HTTP_AUTH_SIGNATURE_INVALID', `the bearer token does not verify under ${claims.sub}'s key ${kid}`, { cause, details: { reason: hasErrorCode(cause) ? cause.code : 'unverifiable' } });
  }
  const now = Math.floor(deps.clock().getTime() / 1000);
  if (claims.exp - claims.iat > HTTP_TOKEN_MAX_TTL_SECONDS) {
    throw new HttpAuthError('HTTP_AUTH_LIFETIME_TOO_LONG', `the bearer token lives ${claims.exp - claims.iat} s; at most ${HTTP_TOKEN_MAX_TTL_SECONDS} s`);
  }
  if (claims.iat > now + HTTP_TOKEN_CLOCK_SKEW_SECONDS) {
    throw new HttpAuthError('HTTP_AUTH_NOT_YET_VALID', 'the bearer token was issued in the future: check the signer\'s clock');
  }
  if (claims.exp <= now - HTTP_TOKEN_CLOCK_SKEW_SECONDS) throw new HttpAuthError('HTTP_AUTH_EXPIRED', 'the bearer token has expired: mint a new one (`writ http token`)');
  return { principalId: principal.principal_id, kid, principal, expiresAt: new Date(claims.exp * 1000) };
}

export interface MintHttpTokenOptions {
  readonly principalId: string;
  /** One of the principal's registered keys (`kid` set). */
  readonly key: JwsSigner;
  readonly audience: string;
  readonly now: Date;
  /** Lifetime in seconds: default 300, at most 900. */
  readonly ttlSeconds?: number;
}

/** Signs a bearer token for Writ's HTTP API: `Authorization: Bearer <this>`. */
export async function mintHttpToken(options: MintHttpTokenOptions): Promise<string> {
  const ttl = options.ttlSeconds ?? HTTP_TOKEN_DEFAULT_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > HTTP_TOKEN_MAX_TTL_SECONDS) {
    throw new HttpAuthError('HTTP_AUTH_LIFETIME_TOO_LONG', `a token lives 1 to ${HTTP_TOKEN_MAX_TTL_SECONDS} s, not ${ttl}`);
  }
  if (options.key.kid === undefined) throw new HttpAuthError('HTTP_AUTH_MALFORMED', 'the signing key needs a kid (a registered key id)');
  const iat = Math.floor(options.now.getTime() / 1000);
  const claims: HttpTokenClaims = { sub: options.principalId, iss: options.principalId, aud: options.audience, iat, exp: iat + ttl, jti: randomUUID() };
  return signJws(JSON.stringify(HttpTokenClaims.parse(claims)), options.key, { typ: HTTP_TOKEN_JWS_TYPE });
}

function decodeJson(part: string, what: string): Record<string, unknown> {
  try {
    const value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // refused below
  }
  throw new HttpAuthError('HTTP_AUTH_MALFORMED', `the bearer token's ${what} is not a JSON object`);
}

/**
 * The principals a bearer token is verified against: the log's (the registry's
 * follower: a revoked key stops verifying within one delivery of
 * `principal.key_revoked`), plus the trust anchor's operator with its anchor
 * keys (`TrustAnchoredPrincipals`), so the first operator reads the API out of
 * the box.
 */
export function httpPrincipals(registry: Pick<PrincipalRegistry, 'lookup' | 'verificationKeys'>, anchor: TrustAnchor | undefined): SignedRequestPrincipals<PrincipalRecord> {
  return new TrustAnchoredPrincipals({ lookup: (id) => registry.lookup(id), verificationKeys: (record) => registry.verificationKeys(record.principal_id) }, anchor);
}
