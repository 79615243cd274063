import canonicalize from 'canonicalize';
import { CryptoError } from './crypto-errors.js';

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialization of a JSON value.
 *
 * Built on `canonicalize`, the reference implementation by the RFC's author:
 * ECMAScript number formatting, JSON.stringify string escaping, and object keys
 * sorted by UTF-16 code units. Values JSON cannot carry exactly (NaN, ±Infinity,
 * bigint, lone surrogates, cycles, a top-level `undefined`) are refused with
 * `CRYPTO_NOT_CANONICALIZABLE` rather than silently coerced; object members whose
 * value is `undefined` are omitted, as in JSON.stringify.
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (cause) {
    throw new CryptoError('CRYPTO_NOT_CANONICALIZABLE', `value cannot be canonicalized (RFC 8785): ${(cause as Error).message}`, { cause });
  }
  if (text === undefined) {
    throw new CryptoError('CRYPTO_NOT_CANONICALIZABLE', `value of type ${typeof value} has no JSON representation`);
  }
  return text;
}
