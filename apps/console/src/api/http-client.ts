import { ApiError } from './api-error.js';

/**
 * The one place the console talks HTTP: same origin as the page (the
 * projection serves both), JSON in and out, a fresh bearer token on every
 * call from the session, and errors read in both shapes the API has had:
 * `{ code, message }` today and RFC 9457 problem+json (`{ type, title,
 * status, detail, code }`) once it lands.
 */

/** A Writ code: `CONTEXT_REASON`. */
const REMOTE_CODE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

const TIMEOUT_MS = 20_000;

export type Query = Readonly<Record<string, string | number | undefined>>;

export type Authorization = () => Promise<string>;

export class HttpClient {
  constructor(
    private readonly authorization: Authorization,
    private readonly base = '',
  ) {}

  url(path: string, query: Query = {}): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') search.set(name, String(value));
    const qs = search.toString();
    return `${this.base}${path}${qs === '' ? '' : `?${qs}`}`;
  }

  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.exchange<T>(this.url(path, query), { method: 'GET', headers: { accept: 'application/json' } });
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.exchange<T>(this.url(path), { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  /** A bearer token for a transport that cannot set headers (EventSource: `?access_token=`). */
  token(): Promise<string> {
    return this.authorization().then((header) => header.replace(/^Bearer /, ''));
  }

  private async exchange<T>(url: string, init: RequestInit): Promise<T> {
    let response: Response;
    let text: string;
    try {
      const headers = { ...(init.headers as Record<string, string>), authorization: await this.authorization() };
      response = await fetch(url, { ...init, headers, credentials: 'omit', cache: 'no-store', signal: AbortSignal.timeout(TIMEOUT_MS) });
      text = await response.text();
    } catch (cause) {
      if (cause instanceof ApiError) throw cause;
      const timedOut = (cause as { name?: unknown } | null)?.name === 'TimeoutError';
      throw new ApiError('CONSOLE_HTTP_FAILED', timedOut ? `${init.method} ${url} did not answer within ${TIMEOUT_MS / 1000} s` : `cannot reach ${url}: ${String((cause as Error)?.message ?? cause)}`);
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const reply = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; message?: unknown; detail?: unknown; title?: unknown };
      if (typeof reply.code === 'string' && REMOTE_CODE.test(reply.code)) {
        const message = [reply.detail, reply.message, reply.title].find((part): part is string => typeof part === 'string') ?? `${init.method} ${url} answered ${response.status}`;
        throw new ApiError(reply.code, message, response.status);
      }
      throw new ApiError('CONSOLE_HTTP_REPLY_INVALID', `${init.method} ${url} answered ${response.status} without a Writ error code`, response.status);
    }
    if (body === undefined) throw new ApiError('CONSOLE_HTTP_REPLY_INVALID', `${init.method} ${url} answered ${response.status} with something that is not JSON`, response.status);
    return body as T;
  }
}
