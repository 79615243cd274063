import { base64urlDecode, base64urlEncode, fromUtf8, utf8 } from './bytes.js';
import type { PublicKeySet, SigningKey } from './ed25519-keys.js';
import { VerificationError } from './verification-errors.js';
import { ED25519, subtle } from './webcrypto.js';

/**
 * Compact JWS with EdDSA over WebCrypto, byte for byte what `@writ/crypto`
 * (jose) produces: the protected header `{"alg":"EdDSA","kid":…,"typ":…}` in
 * that order, base64url without padding. Verification pins `alg` to EdDSA,
 * selects the key by `kid` from the caller's trust material only (no `jwk`,
 * `jku` or `x5u` header is honoured) and checks `typ` when asked.
 */

export interface JwsHeader {
  readonly alg: string;
  readonly kid?: string;
  readonly typ?: string;
  readonly [parameter: string]: unknown;
}

export interface VerifiedCompactJws {
  readonly payload: Uint8Array;
  readonly header: JwsHeader;
  readonly kid: string;
}

export async function signCompactJws(payload: string | Uint8Array<ArrayBuffer>, signer: Pick<SigningKey, 'privateKey' | 'kid'>, options: { readonly typ?: string } = {}): Promise<string> {
  const header = { alg: 'EdDSA', kid: signer.kid, ...(options.typ === undefined ? {} : { typ: options.typ }) };
  const signingInput = `${base64urlEncode(utf8(JSON.stringify(header)))}.${base64urlEncode(typeof payload === 'string' ? utf8(payload) : payload)}`;
  const signature = new Uint8Array(await subtle().sign(ED25519, signer.privateKey, utf8(signingInput)));
  return `${signingInput}.${base64urlEncode(signature)}`;
}

/** The protected header and payload of a compact JWS, read WITHOUT verifying it (to learn which key should). */
export function peekCompactJws(jws: string): { readonly header: JwsHeader; readonly payload: Uint8Array } {
  const parts = typeof jws === 'string' ? jws.split('.') : [];
  if (parts.length !== 3) throw new VerificationError('JWS_MALFORMED', 'a compact JWS has three dot-separated parts');
  let header: unknown;
  try {
    header = JSON.parse(fromUtf8(base64urlDecode(parts[0] as string)));
  } catch (cause) {
    throw new VerificationError('JWS_MALFORMED', 'the protected header is not JSON', { cause });
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new VerificationError('JWS_MALFORMED', 'the protected header is not a JSON object');
  return { header: header as JwsHeader, payload: base64urlDecode(parts[1] as string) };
}

export async function verifyCompactJws(jws: string, keys: PublicKeySet, options: { readonly typ?: string } = {}): Promise<VerifiedCompactJws> {
  const { header, payload } = peekCompactJws(jws);
  if (header.alg !== 'EdDSA') throw new VerificationError('JWS_ALG_NOT_ALLOWED', `alg ${String(header.alg)} is not EdDSA`);
  if (typeof header.kid !== 'string') throw new VerificationError('JWS_KID_MISSING', 'the protected header names no kid');
  const key = keys.get(header.kid);
  if (key === undefined) throw new VerificationError('JWS_KID_UNKNOWN', 'no trusted key has this kid', { details: { kid: header.kid } });
  const [encodedHeader, encodedPayload, encodedSignature] = jws.split('.') as [string, string, string];
  const signature = base64urlDecode(encodedSignature);
  const valid = signature.length === 64 && (await subtle().verify(ED25519, key.publicKey, signature, utf8(`${encodedHeader}.${encodedPayload}`)));
  if (!valid) throw new VerificationError('JWS_SIGNATURE_INVALID', 'the signature does not verify under the selected key', { details: { kid: header.kid } });
  if (options.typ !== undefined && header.typ !== options.typ) {
    throw new VerificationError('JWS_TYPE_MISMATCH', `expected typ ${options.typ}`, { details: { typ: header.typ, expected: options.typ } });
  }
  return { payload, header, kid: key.kid };
}

/** `<header>..<signature>`: the same JWS with its payload detached (RFC 7515 appendix F). */
export function detachedForm(jws: string): string {
  const [header, , signature] = jws.split('.');
  return `${header ?? ''}..${signature ?? ''}`;
}
