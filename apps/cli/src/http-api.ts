import { HTTP_TOKEN_MAX_TTL_SECONDS, Id, WritError, httpAudience, parseContract } from '@writ/contracts';
import { importEd25519PrivateJwk, type Ed25519SigningKey } from '@writ/crypto';
import { mintHttpToken } from '@writ/runtime';
import type { z } from 'zod';
import { CliError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { readJsonFile } from './files.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** How long one HTTP exchange may take before the command gives up. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A Writ error code as the API sends it in its problem details' `code` (`CONTEXT_REASON`). */
const REMOTE_CODE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

/** Who reads the API: a principal and its PRIVATE JWK (`--principal` / `--key`, else WRIT_OPERATOR_ID / WRIT_OPERATOR_KEY). */
export interface ApiCaller {
  readonly principal?: string | undefined;
  readonly key?: string | undefined;
}

/** How long the CLI's own tokens live: one command's exchanges, minted fresh for each. */
const CLI_TOKEN_TTL_SECONDS = 120;

/**
 * The bearer credential of a command (docs/security.md, "HTTP reads"): a fresh
 * token for each request, signed by the caller's key (`--principal` with its
 * `--key`, else the operator of WRIT_OPERATOR_ID / WRIT_OPERATOR_KEY from writ.env), for
 * this deployment's API (`writ-http:<WRIT_SUBJECT_ROOT>`). Without a key,
 * WRIT_HTTP_AUTHORIZATION is sent as is when set (a token minted elsewhere), else nothing.
 */
export function httpCredential(io: CliIo, caller: ApiCaller = {}): () => Promise<string | undefined> {
  const keyFile = caller.key ?? (io.env['WRIT_OPERATOR_KEY'] || undefined);
  if (keyFile === undefined) {
    const preset = io.env['WRIT_HTTP_AUTHORIZATION'] || undefined;
    return async () => preset;
  }
  // A --principal without its --key (rollback's proposer, say) does not read: the operator of writ.env does.
  const principalId = parseContract('--principal', Id, (caller.key === undefined ? undefined : caller.principal) ?? (io.env['WRIT_OPERATOR_ID'] || 'operator'));
  const audience = httpAudience(io.env['WRIT_SUBJECT_ROOT'] || 'writ');
  let key: Promise<Ed25519SigningKey> | undefined;
  return async () => {
    key ??= readJsonFile(io.cwd, keyFile, 'private JWK').then((jwk) => importEd25519PrivateJwk(jwk));
    const token = await mintHttpToken({ principalId, key: await key, audience, now: io.now(), ttlSeconds: Math.min(CLI_TOKEN_TTL_SECONDS, HTTP_TOKEN_MAX_TTL_SECONDS) });
    return `Bearer ${token}`;
  };
}

/**
 * The public HTTP API served by the projection service: `--url` or WRIT_URL,
 * default http://127.0.0.1:8080. Reads are JSON; errors are RFC 9457 problem
 * details (`application/problem+json`: `detail`, and `message` as its alias)
 * keeping the server's `code` (PROJECTION_NOT_FOUND, APPROVAL_NOT_PENDING...),
 * which the CLI exits with. Every request carries the caller's bearer token
 * (`httpCredential`).
 */
export class WritApi {
  private constructor(
    readonly baseUrl: string,
    private readonly authorization: () => Promise<string | undefined>,
  ) {}

  static from(io: CliIo, urlFlag?: string, caller: ApiCaller = {}): WritApi {
    const raw = urlFlag ?? (io.env['WRIT_URL'] || DEFAULT_API_URL);
    let url: URL;
    try {
      url = new URL(raw);
    } catch (cause) {
      throw new CliError('CLI_USAGE', `--url ${JSON.stringify(raw)} is not a URL (e.g. ${DEFAULT_API_URL})`, { cause });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError('CLI_USAGE', `--url must be http(s), not ${url.protocol}`);
    if (url.username !== '' || url.password !== '') throw new CliError('CLI_USAGE', '--url must not carry credentials');
    return new WritApi(url.href.replace(/\/+$/, ''), httpCredential(io, caller));
  }

  /** `GET <base><path>?<query>`, its JSON checked against `shape`. */
  get<S extends z.ZodType>(path: string, shape: S, query: Readonly<Record<string, string | number | undefined>> = {}): Promise<z.output<S>> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
    const qs = search.toString();
    return this.exchange(`${path}${qs === '' ? '' : `?${qs}`}`, { method: 'GET', headers: { accept: 'application/json' } }, shape);
  }

  /** `POST <base><path>` with a JSON body, the reply checked against `shape`. */
  post<S extends z.ZodType>(path: string, body: unknown, shape: S): Promise<z.output<S>> {
    return this.exchange(path, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify(body) }, shape);
  }

  private async exchange<S extends z.ZodType>(path: string, init: RequestInit, shape: S): Promise<z.output<S>> {
    const url = `${this.baseUrl}${path}`;
    let response: Response;
    let text: string;
    const authorization = await this.authorization();
    const headers = { ...(init.headers as Record<string, string> | undefined), ...(authorization === undefined ? {} : { authorization }) };
    try {
      response = await fetch(url, { ...init, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      text = await response.text();
    } catch (cause) {
      const timedOut = (cause as { name?: unknown } | null)?.name === 'TimeoutError';
      throw new CliError('CLI_HTTP_FAILED', timedOut ? `${url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s` : `cannot reach ${url} (set --url or WRIT_URL)`, {
        cause,
      });
    }
    let body: unknown;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const reply = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; detail?: unknown; message?: unknown };
      if (typeof reply.code === 'string' && REMOTE_CODE.test(reply.code)) {
        // The server's code is what the caller branches on; `detail` says what to do (`message` from a server before problem details).
        const message = typeof reply.detail === 'string' ? reply.detail : typeof reply.message === 'string' ? reply.message : `${init.method} ${url} answered ${response.status}`;
        const hint = response.status === 401 ? ' (the CLI signs with --principal / --key, else WRIT_OPERATOR_ID / WRIT_OPERATOR_KEY: . <WRIT_HOME>/writ.env)' : '';
        throw new WritError(reply.code, `${message}${hint}`, {
          details: { status: response.status, remote: true },
        });
      }
      throw new CliError('CLI_HTTP_FAILED', `${init.method} ${url} answered ${response.status} without a Writ error code (is --url the Writ API?)`, {
        details: { status: response.status },
      });
    }
    if (body === undefined) throw new CliError('CLI_HTTP_REPLY_INVALID', `${init.method} ${url} answered ${response.status} with something that is not JSON (is --url the Writ API?)`);
    const parsed = shape.safeParse(body);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .slice(0, 5)
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ');
      throw new CliError('CLI_HTTP_REPLY_INVALID', `${init.method} ${url} answered JSON this CLI does not understand: ${issues}`);
    }
    return parsed.data;
  }
}
