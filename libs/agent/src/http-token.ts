import { randomUUID } from 'node:crypto';
import { CompactSign } from 'jose';
import { AgentError } from './agent-errors.js';
import type { AgentKey } from './agent-key.js';
import { checkContract } from './contract-check.js';
import { HTTP_TOKEN_DEFAULT_TTL_SECONDS, HTTP_TOKEN_JWS_TYPE, HTTP_TOKEN_MAX_TTL_SECONDS, HttpTokenClaims, httpAudience } from './contracts.js';

export interface HttpTokenOptions {
  /** The deployment's subject root; the token's audience is `writ-http:<root>` (default `writ`). */
  readonly subjectRoot?: string;
  /** Lifetime in seconds, 1 to 900 (default 300): the API refuses longer ones. */
  readonly ttlSeconds?: number;
  readonly now?: Date;
}

/**
 * A bearer token for Writ's HTTP API (docs/security.md, "HTTP reads"), signed
 * by the agent's own registered key: a compact JWS with protected header
 * `{"alg":"EdDSA","kid":…,"typ":"writ-http+jws"}` over `{ sub, iss, aud, iat,
 * exp, jti }` where `sub` = `iss` = the principal and `aud` =
 * `writ-http:<root>`. Send it as `Authorization: Bearer <token>`. An agent
 * reads its own actions, tasks and receipts with it, nothing else.
 */
export async function signHttpToken(principalId: string, key: AgentKey, options: HttpTokenOptions = {}): Promise<string> {
  const ttl = options.ttlSeconds ?? HTTP_TOKEN_DEFAULT_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > HTTP_TOKEN_MAX_TTL_SECONDS) {
    throw new AgentError('AGENT_REQUEST_INVALID', `an HTTP token lives 1 to ${HTTP_TOKEN_MAX_TTL_SECONDS} s, not ${String(ttl)}`);
  }
  const iat = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const claims = checkContract('HttpTokenClaims', HttpTokenClaims, {
    sub: principalId,
    iss: principalId,
    aud: httpAudience(options.subjectRoot ?? 'writ'),
    iat,
    exp: iat + ttl,
    jti: randomUUID(),
  });
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claims))).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: HTTP_TOKEN_JWS_TYPE }).sign(key.privateKey);
}
