import { describe, expect, it } from 'vitest';
import { canonicalContentVersion, sha256Hex } from './sha256.js';

describe('sha256Hex', () => {
  it('matches the FIPS 180-2 "abc" vector', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('canonicalContentVersion', () => {
  it('given the same content in another key order, when versioned, then the versions are equal and carry the sha256: prefix', () => {
    const a = canonicalContentVersion({ id: 'p', rules: { b: 1, a: [1, 2] } });
    const b = canonicalContentVersion({ rules: { a: [1, 2], b: 1 }, id: 'p' });
    expect(a).toBe(b);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('given a changed value, when versioned, then the version changes', () => {
    expect(canonicalContentVersion({ id: 'p', n: 1 })).not.toBe(canonicalContentVersion({ id: 'p', n: 2 }));
  });
});
