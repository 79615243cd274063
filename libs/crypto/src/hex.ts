import { CryptoError } from './crypto-errors.js';

const HEX_BYTES = /^(?:[0-9a-fA-F]{2})*$/;

/** Lowercase hex of `bytes`. */
export function bytesToHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Bytes of a hex string (either case). Refuses odd lengths and non-hex characters
 * with `CRYPTO_HEX_INVALID`, where `Buffer.from(hex, 'hex')` would silently stop
 * at the first bad character and return a shorter value.
 */
export function hexToBytes(hex: string): Uint8Array {
  if (typeof hex !== 'string' || !HEX_BYTES.test(hex)) {
    throw new CryptoError('CRYPTO_HEX_INVALID', 'expected an even number of hex digits');
  }
  return new Uint8Array(Buffer.from(hex, 'hex'));
}
