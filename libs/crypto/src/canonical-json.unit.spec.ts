import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';

// RFC 8785 section 3.2.2 / Appendix B sample files (input -> output, plus the expected UTF-8 bytes as hex).
// The copy under __fixtures__ is byte-identical to /work/shared/vectors/rfc8785.
const VECTORS = new URL('./__fixtures__/rfc8785/', import.meta.url);
const vectorNames = readdirSync(new URL('input/', VECTORS))
  .filter((name) => name.endsWith('.json'))
  .map((name) => name.slice(0, -'.json'.length))
  .sort();

function doubleFromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

describe('canonicalJson: RFC 8785 known answers', () => {
  it('has the six published sample files to check against', () => {
    expect(vectorNames).toEqual(['arrays', 'french', 'structures', 'unicode', 'values', 'weird']);
  });

  it.each(vectorNames)('given input/%s.json, when canonicalized, then it equals output/ byte for byte', (name) => {
    const input: unknown = JSON.parse(readFileSync(new URL(`input/${name}.json`, VECTORS), 'utf8'));
    const expectedText = readFileSync(new URL(`output/${name}.json`, VECTORS), 'utf8');
    const expectedBytes = Buffer.from(readFileSync(new URL(`outhex/${name}.txt`, VECTORS), 'utf8').replace(/\s+/g, ''), 'hex');

    const canonical = canonicalJson(input);

    expect(canonical).toBe(expectedText);
    expect(Buffer.from(canonical, 'utf8').equals(expectedBytes)).toBe(true);
  });

  // RFC 8785 Appendix B: IEEE 754 bit patterns and their required serialization.
  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('given the double 0x%s, when canonicalized, then it reads %s', (bits, expected) => {
    expect(canonicalJson(doubleFromBits(bits))).toBe(expected);
  });

  it.each([
    [1e21, '1e+21'],
    [1e-7, '1e-7'],
    [-0, '0'],
    [333333333.33333329, '333333333.3333333'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [4.5, '4.5'],
    [0.002, '0.002'],
    [1e30, '1e+30'],
  ])('given the number %s, when canonicalized, then it reads %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('given keys that sort differently by code point and by UTF-16 unit, when canonicalized, then UTF-16 order wins', () => {
    // U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FB33 even though its code point is larger.
    expect(canonicalJson({ '\uFB33': 1, '\u{1F600}': 2 })).toBe('{"\u{1F600}":2,"\uFB33":1}');
  });

  it('given control characters and quotes, when canonicalized, then only the JSON-mandated escapes are used', () => {
    expect(canonicalJson('\u0000\u001f"\\/\u007f\u2028')).toBe('"\\u0000\\u001f\\"\\\\/\u007f\u2028"');
  });
});

describe('canonicalJson: properties', () => {
  it('is idempotent: canonicalizing the parse of a canonical form changes nothing', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const once = canonicalJson(value);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
      }),
    );
  });

  it('does not depend on the insertion order of object members', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), (value, seed) => {
        expect(canonicalJson(reorderMembers(value, seed))).toBe(canonicalJson(value));
      }),
    );
  });

  it('produces JSON that parses back to the same canonical value for arbitrary unicode strings', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' })), (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(value);
      }),
    );
  });
});

describe('canonicalJson: values JSON cannot carry exactly', () => {
  const cycle: Record<string, unknown> = {};
  cycle['self'] = cycle;

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['NaN nested in an array', [1, NaN]],
    ['bigint', 10n],
    ['bigint nested in an object', { amount: 10n }],
    ['a lone high surrogate', '\uD800'],
    ['a lone low surrogate in a key', { '\uDC00': 1 }],
    ['a cycle', cycle],
    ['top-level undefined', undefined],
    ['a top-level function', () => 1],
    ['a top-level symbol', Symbol('s')],
  ])('given %s, when canonicalized, then CRYPTO_NOT_CANONICALIZABLE', (_name, value) => {
    expect(codeOf(() => canonicalJson(value))).toBe('CRYPTO_NOT_CANONICALIZABLE');
  });

  it('given the same object referenced twice (a DAG, not a cycle), when canonicalized, then both copies are written', () => {
    const shared = { b: 1 };
    expect(canonicalJson({ x: shared, y: shared })).toBe('{"x":{"b":1},"y":{"b":1}}');
  });

  it('given a member whose value is undefined, when canonicalized, then the member is omitted as JSON.stringify does', () => {
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}');
  });
});

// Rebuilds every object with its members inserted in a seed-dependent rotated, reversed order.
function reorderMembers(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item) => reorderMembers(item, seed));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).reverse();
  const shift = entries.length === 0 ? 0 : seed % entries.length;
  const rotated = [...entries.slice(shift), ...entries.slice(0, shift)];
  return Object.fromEntries(rotated.map(([key, member]) => [key, reorderMembers(member, seed)]));
}
