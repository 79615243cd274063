import canonicalize from 'canonicalize';
import { VerificationError } from './verification-errors.js';

/**
 * RFC 8785 (JCS) with the same reference implementation `@writ/crypto` uses
 * (`canonicalize`, pure JavaScript, so it bundles for the browser): equal
 * input, equal bytes, on either side. Values JSON cannot carry exactly are
 * refused rather than coerced.
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (cause) {
    throw new VerificationError('VERIFY_NOT_CANONICALIZABLE', `value cannot be canonicalized (RFC 8785): ${(cause as Error).message}`, { cause });
  }
  if (text === undefined) throw new VerificationError('VERIFY_NOT_CANONICALIZABLE', `value of type ${typeof value} has no JSON representation`);
  return text;
}
