import { mintBearerToken, type SigningKey } from '@writ/verification';

/**
 * Bearer tokens for the API, signed in the browser with the logged-in
 * principal's key (docs/security.md, "HTTP reads": typ writ-http+jws, EdDSA,
 * sub = iss = the principal, aud = `writ-http:<subject root>`). Each token
 * lives two minutes and is reused until 30 s before it expires, so a burst of
 * reads costs one signature, and a stolen token is worth little.
 */
export const TOKEN_TTL_SECONDS = 120;
const RENEW_BEFORE_MS = 30_000;

export interface TokenSourceOptions {
  readonly principalId: string;
  readonly key: SigningKey;
  readonly audience: string;
  readonly clock?: () => Date;
}

export class BearerTokens {
  #current: { readonly token: string; readonly expiresAt: number } | undefined;
  #pending: Promise<string> | undefined;

  constructor(private readonly options: TokenSourceOptions) {}

  /** `Bearer <token>`. */
  async authorization(): Promise<string> {
    return `Bearer ${await this.token()}`;
  }

  token(): Promise<string> {
    const now = (this.options.clock ?? (() => new Date()))();
    if (this.#current !== undefined && this.#current.expiresAt - now.getTime() > RENEW_BEFORE_MS) return Promise.resolve(this.#current.token);
    this.#pending ??= mintBearerToken({ principalId: this.options.principalId, key: this.options.key, audience: this.options.audience, now, ttlSeconds: TOKEN_TTL_SECONDS, jti: crypto.randomUUID() })
      .then(({ token, expiresAt }) => {
        this.#current = { token, expiresAt: expiresAt.getTime() };
        return token;
      })
      .finally(() => {
        this.#pending = undefined;
      });
    return this.#pending;
  }

  /** Forget the cached token (after a 401: the next call signs a new one). */
  reset(): void {
    this.#current = undefined;
  }
}
