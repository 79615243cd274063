import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from './hex.js';

describe('hex', () => {
  it('given bytes, when encoded and decoded, then they round-trip as lowercase hex', () => {
    const bytes = Uint8Array.of(0x00, 0x0f, 0xab, 0xff);
    expect(bytesToHex(bytes)).toBe('000fabff');
    expect(hexToBytes('000FABff')).toEqual(bytes);
  });

  it('given a view into a larger buffer, when encoded, then only the viewed bytes are written', () => {
    const backing = Uint8Array.of(1, 2, 3, 4);
    expect(bytesToHex(backing.subarray(1, 3))).toBe('0203');
  });

  it.each(['abc', 'zz', '0x00', '00 ', 'g0'])('given %j, when decoded, then CRYPTO_HEX_INVALID', (text) => {
    expect(() => hexToBytes(text)).toThrow(expect.objectContaining({ code: 'CRYPTO_HEX_INVALID' }));
  });
});
