import { HTTP_TOKEN_DEFAULT_TTL_SECONDS, HTTP_TOKEN_MAX_TTL_SECONDS, Id, httpAudience, parseContract } from '@writ/contracts';
import { importEd25519PrivateJwk } from '@writ/crypto';
import { mintHttpToken } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { readJsonFile } from '../files.js';
import { parseDuration } from './cell-renew.js';

export interface HttpTokenOptions {
  /** Who the token speaks for; default WRIT_OPERATOR_ID, else `operator`. */
  readonly principal?: string;
  /** Its PRIVATE JWK (one of its registered keys); default WRIT_OPERATOR_KEY. */
  readonly key?: string;
  /** `90s`, `10m`, `15m`: default 5m, at most 15m. */
  readonly ttl?: string;
  /** Default `writ-http:<WRIT_SUBJECT_ROOT or writ>`. */
  readonly audience?: string;
  readonly json?: boolean;
}

export interface HttpTokenResult {
  /** `Bearer <token>`: the Authorization header's value. */
  readonly authorization: string;
  readonly token: string;
  readonly principal_id: string;
  readonly kid: string;
  readonly audience: string;
  readonly expires_at: string;
}

/**
 * `writ http token [--principal <id> --key <jwk>] [--ttl 10m]`: a bearer token
 * for the HTTP API (typ writ-http+jws, EdDSA, kid = the key's, sub = iss = the
 * principal, aud = this deployment's API, at most 15 minutes), printed as the
 * Authorization header's value `Bearer …` for curl, a dashboard or
 * WRIT_HTTP_AUTHORIZATION. Nothing is sent anywhere: the API checks it against
 * the principal's registered keys at each request.
 */
export async function httpToken(options: HttpTokenOptions, io: CliIo): Promise<HttpTokenResult> {
  const keyFile = options.key ?? (io.env['WRIT_OPERATOR_KEY'] || undefined);
  if (keyFile === undefined) {
    throw new CliError('CLI_KEY_REQUIRED', 'a token is signed by the principal it speaks for: pass --key <private JWK> (and --principal <id>), or set WRIT_OPERATOR_KEY (. <WRIT_HOME>/writ.env)');
  }
  const principalId = parseContract('--principal', Id, options.principal ?? (io.env['WRIT_OPERATOR_ID'] || 'operator'));
  const ttlSeconds = options.ttl === undefined ? HTTP_TOKEN_DEFAULT_TTL_SECONDS : parseDuration(options.ttl, '--ttl') / 1000;
  if (ttlSeconds > HTTP_TOKEN_MAX_TTL_SECONDS) {
    throw new CliError('CLI_USAGE', `--ttl is at most ${HTTP_TOKEN_MAX_TTL_SECONDS / 60}m: the API refuses a longer-lived token (mint a new one instead)`);
  }
  const audience = options.audience ?? httpAudience(io.env['WRIT_SUBJECT_ROOT'] || 'writ');
  const key = await importEd25519PrivateJwk(await readJsonFile(io.cwd, keyFile, 'private JWK'));
  const now = io.now();
  const token = await mintHttpToken({ principalId, key, audience, now, ttlSeconds });
  const result: HttpTokenResult = {
    authorization: `Bearer ${token}`,
    token,
    principal_id: principalId,
    kid: key.kid,
    audience,
    expires_at: new Date((Math.floor(now.getTime() / 1000) + ttlSeconds) * 1000).toISOString(),
  };
  io.stdout(options.json === true ? JSON.stringify(result) : result.authorization);
  return result;
}
