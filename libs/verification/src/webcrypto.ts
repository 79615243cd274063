import { VerificationError } from './verification-errors.js';

/**
 * The platform's WebCrypto (`globalThis.crypto.subtle`): Node 24 and current
 * browsers both implement Ed25519 and SHA-256 there. A browser exposes it only
 * to secure contexts (https, or http on 127.0.0.1 / localhost), hence the
 * explicit error instead of a TypeError deep inside a check.
 */
/**
 * The platform's types, named through `globalThis` so the module typechecks
 * under Node's types and under the DOM's alike (each names them differently).
 */
export type Subtle = typeof globalThis.crypto.subtle;
export type WebCryptoKey = Awaited<ReturnType<Subtle['importKey']>>;

export function subtle(): Subtle {
  const api = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle;
  if (api === undefined) {
    throw new VerificationError('VERIFY_WEBCRYPTO_UNAVAILABLE', 'WebCrypto is not available here: open the page over https or on 127.0.0.1 / localhost');
  }
  return api;
}

export const ED25519 = { name: 'Ed25519' } as const;
