import { WritError } from '@writ/contracts';
import type { z } from 'zod';
import { CliError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** How long one HTTP exchange may take before the command gives up. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A Writ error code as the API sends it in `{ code, message }` (`CONTEXT_REASON`). */
const REMOTE_CODE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

/**
 * The public HTTP API served by the projection service: `--url` or WRIT_URL,
 * default http://127.0.0.1:8080. Reads are JSON; errors are `{ code, message }`
 * and keep the server's code (PROJECTION_NOT_FOUND, APPROVAL_NOT_PENDING...),
 * which the CLI exits with.
 */
export class WritApi {
  private constructor(readonly baseUrl: string) {}

  static from(io: CliIo, urlFlag?: string): WritApi {
    const raw = urlFlag ?? (io.env['WRIT_URL'] || DEFAULT_API_URL);
    let url: URL;
    try {
      url = new URL(raw);
    } catch (cause) {
      throw new CliError('CLI_USAGE', `--url ${JSON.stringify(raw)} is not a URL (e.g. ${DEFAULT_API_URL})`, { cause });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError('CLI_USAGE', `--url must be http(s), not ${url.protocol}`);
    if (url.username !== '' || url.password !== '') throw new CliError('CLI_USAGE', '--url must not carry credentials');
    return new WritApi(url.href.replace(/\/+$/, ''));
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
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
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
      const reply = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; message?: unknown };
      if (typeof reply.code === 'string' && REMOTE_CODE.test(reply.code)) {
        // The server's code is what the caller branches on.
        throw new WritError(reply.code, typeof reply.message === 'string' ? reply.message : `${init.method} ${url} answered ${response.status}`, {
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
