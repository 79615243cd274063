import { bytesToHex, utf8 } from './bytes.js';
import { canonicalJson } from './canonical-json.js';
import { subtle } from './webcrypto.js';

/** SHA-256 of bytes (or a string taken as UTF-8). */
export async function sha256(data: Uint8Array<ArrayBuffer> | string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await subtle().digest('SHA-256', typeof data === 'string' ? utf8(data) : data));
}

/** SHA-256 as lowercase hex: the form every Writ hash field carries. */
export async function sha256Hex(data: Uint8Array<ArrayBuffer> | string): Promise<string> {
  return bytesToHex(await sha256(data));
}

/** `sha256:<hex>` of the value's RFC 8785 form (`canonicalContentVersion` of `@writ/crypto`). */
export async function canonicalDigest(value: unknown): Promise<`sha256:${string}`> {
  return `sha256:${await sha256Hex(canonicalJson(value))}`;
}
