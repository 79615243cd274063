import type { z } from 'zod';
import { AgentError } from './agent-errors.js';
import type { AgentKey } from './agent-key.js';
import { signHttpToken } from './http-token.js';

/** The fetch the client uses (the global one by default; a test or a proxy may pass its own). */
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface WritApiOptions {
  /** The API's base URL (`http://127.0.0.1:8080`). */
  readonly baseUrl: string;
  readonly principalId: string;
  readonly key: AgentKey;
  readonly subjectRoot: string;
  readonly fetch?: Fetch;
  /** Per request; default 15 s. */
  readonly requestTimeoutMs?: number;
}

/** A token is reused while it has at least this long to live: one signature per few minutes, not per request. */
const TOKEN_REUSE_MARGIN_S = 60;
const TOKEN_TTL_S = 300;

/**
 * Writ's HTTP API as the agent reads it: every route with a bearer token the
 * agent signs itself, every answer checked against the view it expects, every
 * refusal turned into an AgentError with Writ's own code as `remoteCode`.
 */
export class WritApi {
  readonly baseUrl: string;
  readonly #options: WritApiOptions;
  readonly #fetch: Fetch;
  #token: { readonly value: string; readonly exp: number } | undefined;

  constructor(options: WritApiOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#options = options;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The bearer token in use (a fresh one once the current one has less than a minute left). */
  async authorization(): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    if (this.#token === undefined || this.#token.exp - now < TOKEN_REUSE_MARGIN_S) {
      const value = await signHttpToken(this.#options.principalId, this.#options.key, { subjectRoot: this.#options.subjectRoot, ttlSeconds: TOKEN_TTL_S });
      this.#token = { value, exp: now + TOKEN_TTL_S };
    }
    return `Bearer ${this.#token.value}`;
  }

  /** GET `route` as the agent; `undefined` on 404 (an unknown id and another principal's answer the same). */
  async find<S extends z.ZodType>(route: string, view: S, what: string): Promise<z.output<S> | undefined> {
    const response = await this.#send(route, { headers: { authorization: await this.authorization(), accept: 'application/json' } }, what);
    if (response.status === 404) return undefined;
    return this.#parse(response, view, what, route);
  }

  /** GET `route` as the agent; AGENT_NOT_FOUND on 404. */
  async get<S extends z.ZodType>(route: string, view: S, what: string): Promise<z.output<S>> {
    const found = await this.find(route, view, what);
    if (found === undefined) throw new AgentError('AGENT_NOT_FOUND', `${what} is not there (GET ${route} answered 404): not yet projected, or not this agent's`, { details: { route } });
    return found;
  }

  /** GET a public route (no token): `/v1/keys`. */
  async getPublic<S extends z.ZodType>(route: string, view: S, what: string): Promise<z.output<S>> {
    const response = await this.#send(route, { headers: { accept: 'application/json' } }, what);
    return this.#parse(response, view, what, route);
  }

  /**
   * POSTs a signed ActionRequest to `/v1/actions` (the JWS as `application/jose`,
   * `Idempotency-Key`, `Writ-Principal`). Ingress's refusal (4xx with its code)
   * is AGENT_SUBMIT_REJECTED with that code as `remoteCode`.
   */
  async postAction<S extends z.ZodType>(jws: string, idempotencyKey: string, principalId: string, view: S): Promise<{ readonly status: number; readonly reply: z.output<S> }> {
    const route = '/v1/actions';
    const response = await this.#send(route, { method: 'POST', headers: { 'content-type': 'application/jose', accept: 'application/json', 'idempotency-key': idempotencyKey, 'writ-principal': principalId }, body: jws }, 'the submission');
    if (response.status >= 400 && response.status < 500) {
      const body = await bodyOf(response);
      const code = codeOf(body);
      throw new AgentError('AGENT_SUBMIT_REJECTED', `POST ${route} refused the request (${response.status} ${code ?? 'no code'}): ${messageOf(body) ?? 'no message'}`, {
        details: { status: response.status, route },
        ...(code === undefined ? {} : { remoteCode: code }),
      });
    }
    return { status: response.status, reply: await this.#parse(response, view, 'the submission', route) };
  }

  /**
   * POSTs a signed claim to `/v1/tasks/<id>/claims/<kind>` (public: the signed
   * claim is the credential; the bearer token is sent anyway). The
   * orchestrator's refusal of the request itself (any 4xx) is
   * AGENT_CLAIM_REFUSED with its code (ORCHESTRATOR_CLAIM_*) as `remoteCode`.
   */
  async postClaim<S extends z.ZodType>(route: string, body: unknown, view: S): Promise<z.output<S>> {
    const response = await this.#send(
      route,
      { method: 'POST', headers: { authorization: await this.authorization(), 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) },
      'the claim',
    );
    if (response.status >= 400 && response.status < 500) {
      const refusal = await bodyOf(response);
      const code = codeOf(refusal);
      throw new AgentError('AGENT_CLAIM_REFUSED', `POST ${route} refused the claim (${response.status} ${code ?? 'no code'}): ${messageOf(refusal) ?? 'no message'}`, {
        details: { status: response.status, route },
        ...(code === undefined ? {} : { remoteCode: code }),
      });
    }
    return this.#parse(response, view, 'the claim', route);
  }

  async #send(route: string, init: RequestInit, what: string): Promise<Response> {
    const url = `${this.baseUrl}${route}`;
    try {
      return await this.#fetch(url, { ...init, signal: AbortSignal.timeout(this.#options.requestTimeoutMs ?? 15_000) });
    } catch (cause) {
      throw new AgentError('AGENT_API_UNAVAILABLE', `cannot reach Writ's API for ${what} at ${url} (${(cause as Error).message}); is the projection service up (WRIT_URL)?`, { cause, details: { url } });
    }
  }

  async #parse<S extends z.ZodType>(response: Response, view: S, what: string, route: string): Promise<z.output<S>> {
    const body = await bodyOf(response);
    if (response.status === 401) {
      const code = codeOf(body);
      throw new AgentError('AGENT_API_UNAUTHORIZED', `the API refused the agent's bearer token for ${what} (${code ?? 'no code'}): ${messageOf(body) ?? ''} (is the agent registered, and its key one of its active keys?)`, {
        details: { route },
        ...(code === undefined ? {} : { remoteCode: code }),
      });
    }
    if (response.status >= 500 || body === undefined) {
      throw new AgentError('AGENT_API_UNAVAILABLE', `the API answered ${response.status} for ${what} (GET ${route})${messageOf(body) === undefined ? '' : `: ${messageOf(body)}`}; retry later`, {
        details: { route, status: response.status },
        ...(codeOf(body) === undefined ? {} : { remoteCode: codeOf(body) as string }),
      });
    }
    if (response.status >= 400) {
      const code = codeOf(body);
      throw new AgentError('AGENT_API_REFUSED', `the API refused ${what} (${response.status} ${code ?? 'no code'}): ${messageOf(body) ?? ''}`, {
        details: { route, status: response.status },
        ...(code === undefined ? {} : { remoteCode: code }),
      });
    }
    const parsed = view.safeParse(body);
    if (!parsed.success) {
      throw new AgentError('AGENT_API_UNAVAILABLE', `the API's answer for ${what} is not what this SDK reads (${parsed.error.issues.map((issue) => issue.path.join('.')).join(', ')}); is the server of this SDK's release?`, {
        details: { route },
      });
    }
    return parsed.data;
  }
}

async function bodyOf(response: Response): Promise<unknown> {
  try {
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

function codeOf(body: unknown): string | undefined {
  const code = (body as { code?: unknown; reason_code?: unknown } | null)?.code ?? (body as { reason_code?: unknown } | null)?.reason_code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,127}$/.test(code) ? code : undefined;
}

function messageOf(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 500) : undefined;
}
