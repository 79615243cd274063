import { z } from 'zod';
import { Id } from './ids.js';

/**
 * The bearer credential of Writ's HTTP API (docs/security.md, "HTTP reads"):
 * `Authorization: Bearer <compact JWS>`, a JWT signed with EdDSA by one of the
 * caller's registered keys (`kid`), whose protected header's `typ` is
 * `HTTP_TOKEN_JWS_TYPE` and whose audience is the deployment's HTTP API
 * (`httpAudience(<subject root>)`). A JWS made for anything else (an
 * ActionRequest, an admin request, a grant) lacks that `typ` and audience and
 * is refused.
 */
export const HTTP_TOKEN_JWS_TYPE = 'writ-http+jws';

/** What `writ http token` mints when no `--ttl` is given: 5 minutes. */
export const HTTP_TOKEN_DEFAULT_TTL_SECONDS = 300;

/** The longest lifetime (`exp - iat`) a token may have: 15 minutes. A longer one is refused, whatever its signature. */
export const HTTP_TOKEN_MAX_TTL_SECONDS = 900;

/** Clock skew tolerated on `iat` (not in the future) and `exp`: 30 s. */
export const HTTP_TOKEN_CLOCK_SKEW_SECONDS = 30;

/** The audience of a deployment's HTTP API: `writ-http:<subject root>` (`writ-http:writ` by default). */
export function httpAudience(subjectRoot: string): string {
  return `writ-http:${subjectRoot}`;
}

/** The claims of an HTTP bearer token: who (`sub` = `iss`, a principal id), for which API (`aud`), when and until when. */
export const HttpTokenClaims = z.object({
  /** The principal the token speaks for; its key signs it. */
  sub: Id,
  /** The signer: the same principal (a token is never issued by one principal for another). */
  iss: Id,
  aud: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  iat: z.number().int().nonnegative(),
  exp: z.number().int().positive(),
  jti: z.string().min(1).max(128).optional(),
});
export type HttpTokenClaims = z.infer<typeof HttpTokenClaims>;

/**
 * Why a bearer token was refused: every one answers 401 with this code and a
 * JSON body `{ code, message }`.
 */
export const HTTP_AUTH_ERROR_CODES = [
  /** No `Authorization` header (or not `Bearer`). */
  'HTTP_AUTH_MISSING',
  /** Not a compact JWS with JSON claims, or claims that are not `HttpTokenClaims`. */
  'HTTP_AUTH_MALFORMED',
  /** The header names an algorithm other than EdDSA (`none`, `HS256`, ...). */
  'HTTP_AUTH_ALG_NOT_ALLOWED',
  /** The header's `typ` is not `writ-http+jws` (an ActionRequest or admin request JWS replayed as a bearer). */
  'HTTP_AUTH_TYPE_INVALID',
  /** The audience is not this deployment's HTTP API. */
  'HTTP_AUTH_AUDIENCE_INVALID',
  /** `sub` names no registered principal. */
  'HTTP_AUTH_PRINCIPAL_UNKNOWN',
  /** No active key of the principal has the header's `kid` (never registered, or revoked). */
  'HTTP_AUTH_KEY_UNKNOWN',
  /** The signature does not verify under that key. */
  'HTTP_AUTH_SIGNATURE_INVALID',
  /** `exp` has passed. */
  'HTTP_AUTH_EXPIRED',
  /** `iat` lies in the future. */
  'HTTP_AUTH_NOT_YET_VALID',
  /** `exp - iat` exceeds `HTTP_TOKEN_MAX_TTL_SECONDS`. */
  'HTTP_AUTH_LIFETIME_TOO_LONG',
] as const;
export type HttpAuthErrorCode = (typeof HTTP_AUTH_ERROR_CODES)[number];

/** A verified caller's read scope: everything, or only what is its own. */
export type HttpReadScope = { readonly kind: 'all' } | { readonly kind: 'own'; readonly principalId: string };
