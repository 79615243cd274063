import { httpAudience } from '@writ/contracts';
import { importPrivateJwk, type SigningKey } from '@writ/verification';
import { ApiError, consoleError, hasCode } from '../api/api-error.js';
import { HttpClient } from '../api/http-client.js';
import type { PrincipalRow } from '../api/rows.js';
import { BearerTokens } from './bearer-tokens.js';

/**
 * Who is logged in: a principal id and its Ed25519 key, imported into
 * WebCrypto as a NON-EXTRACTABLE CryptoKey and held in this page's memory
 * only. Nothing stores it (no localStorage, no IndexedDB, no cookie), no
 * request carries it, and a reload logs out: the trade-off is re-loading
 * the key file after a reload, against a key that no script, extension
 * storage dump or later XSS can read back (the page can still ask it to
 * sign while it is open). apps/console/README.md, "Security model".
 */
export interface Session {
  readonly principalId: string;
  readonly kid: string;
  /** As the API describes the principal; null when the log holds no row for it (the trust anchor's operator). */
  readonly principal: PrincipalRow | null;
  /** Reads everything (director, operator, observer that is not an agent) or only its own: as the server decided. */
  readonly scope: 'all' | 'own';
  /** May resolve approvals: holds `director` (or its roles are unknown: the server decides). */
  readonly mayResolve: boolean;
  readonly key: SigningKey;
  readonly tokens: BearerTokens;
  readonly http: HttpClient;
}

const ID = /^[A-Za-z0-9_-]{1,128}$/;

export interface LoginInput {
  readonly principalId: string;
  /** The private JWK's text (a file's content or a paste); parsed, imported, then dropped. */
  readonly jwkText: string;
  /** `writ-http:<subject root>`; default what `/console/settings.json` names, else `writ-http:writ`. */
  readonly audience?: string;
}

/** The audience the serving deployment's API expects (`/console/settings.json`, written by the projection). */
export async function deploymentAudience(): Promise<string> {
  try {
    const response = await fetch('settings.json', { credentials: 'omit', cache: 'no-store' });
    const settings = (await response.json()) as { audience?: unknown };
    if (typeof settings.audience === 'string' && settings.audience !== '') return settings.audience;
  } catch {
    // served elsewhere (a file, a dev server): the default deployment
  }
  return httpAudience('writ');
}

/**
 * Imports the key and asks the API who this is: the principal's row (roles),
 * and whether it reads everything (`/v1/projections/status` answers only
 * wide readers). A wrong key, unknown principal or revoked key fails here
 * with the server's HTTP_AUTH_* code.
 */
export async function login(input: LoginInput): Promise<Session> {
  const principalId = input.principalId.trim();
  if (!ID.test(principalId)) throw consoleError('CONSOLE_KEY_INVALID', 'the principal id is 1-128 characters of A-Z, a-z, 0-9, "_" or "-"');
  let jwk: unknown;
  try {
    jwk = JSON.parse(input.jwkText);
  } catch {
    throw consoleError('CONSOLE_KEY_INVALID', 'the key is not JSON: load the private JWK `writ principal keygen` wrote');
  }
  let key: SigningKey;
  try {
    key = await importPrivateJwk(jwk, { extractable: false });
  } catch (error) {
    throw new ApiError(hasCode(error) ? String((error as { code: string }).code) : 'CONSOLE_KEY_INVALID', (error as Error).message);
  }
  const tokens = new BearerTokens({ principalId, key, audience: input.audience ?? (await deploymentAudience()) });
  const http = new HttpClient(() => tokens.authorization());
  let principal: PrincipalRow | null = null;
  try {
    principal = await http.get<PrincipalRow>(`/v1/principals/${encodeURIComponent(principalId)}`);
  } catch (error) {
    // The trust anchor's operator reads the API with its anchor key before (or without) a row in the log.
    if (!hasCode(error, 'PROJECTION_NOT_FOUND')) throw error;
  }
  let scope: 'all' | 'own' = 'own';
  try {
    await http.get('/v1/projections/status');
    scope = 'all';
  } catch (error) {
    if (!hasCode(error, 'PROJECTION_SCOPE_FORBIDDEN')) throw error;
  }
  const roles = principal?.roles ?? null;
  return { principalId, kid: key.kid, principal, scope, mayResolve: roles === null || roles.includes('director'), key, tokens, http };
}
