import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob, matchGlob, matchSegment, type CompiledGlob } from '../shared/glob.js';
import { globCovers, globsIntersect, segmentsIntersect } from './glob-targets.js';

const glob = (pattern: string) => compileGlob(pattern) as CompiledGlob;

/** Every string over `alphabet` up to `max` characters. */
function strings(alphabet: string, max: number): string[] {
  const out = [''];
  for (let length = 1; length <= max; length += 1) {
    for (const prefix of out.filter((s) => s.length === length - 1)) for (const c of alphabet) out.push(prefix + c);
  }
  return out;
}
const WORDS = strings('abc', 6);
const segmentPattern = fc.array(fc.constantFrom('a', 'b', '*', '?'), { maxLength: 4 }).map((chars) => chars.join(''));

describe('glob targets: patterns as write targets', () => {
  it.each([
    ['*', 'package.json', true],
    ['*.ts', 'package.json', false],
    ['*.lock', 'id_rsa*', true],
    ['x?.o', '*oauth*', false],
    ['a*', '*b', true],
    ['?', 'ab', false],
    ['*x', '*y', false],
  ])('given segments %j and %j, then they intersect: %s', (a, b, want) => {
    expect(segmentsIntersect(a, b)).toBe(want);
    expect(segmentsIntersect(b, a)).toBe(want);
  });

  it('property: segmentsIntersect agrees with a brute-force search for a common word', () => {
    fc.assert(
      fc.property(segmentPattern, segmentPattern, (a, b) => {
        const brute = WORDS.some((word) => matchSegment(a, word) && matchSegment(b, word));
        expect(segmentsIntersect(a, b), `${a} ∩ ${b}`).toBe(brute);
      }),
      { numRuns: 1_500 },
    );
  });

  it('given path patterns, then globsIntersect sees through ** on either side', () => {
    expect(globsIntersect(['**', 'package.json'], ['src', '*'])).toBe(true);
    expect(globsIntersect(['**', 'migrations', '**'], ['db', 'migrations', '*.sql'])).toBe(true);
    expect(globsIntersect(['**', 'migrations', '**'], ['src', '*.sql'])).toBe(false);
    expect(globsIntersect(['src', '**'], ['lib', '*'])).toBe(false);
  });

  it('given a pattern target, then globCovers is true only when every expansion is owned', () => {
    expect(globCovers(glob('src/**'), ['src', 'build', '*.o'])).toBe(true);
    expect(globCovers(glob('src/**'), ['*', 'a.ts'])).toBe(false);
    expect(globCovers(glob('src/*.o'), ['src', '*.o'])).toBe(true);
    expect(globCovers(glob('src/*'), ['src', 'x?'])).toBe(true);
    expect(globCovers(glob('src/?'), ['src', '*'])).toBe(false);
    expect(globCovers(glob('**'), ['*'])).toBe(true);
    expect(globCovers(glob('src/a*'), ['src', '*'])).toBe(false);
  });

  it('property: globCovers is sound: when it says covered, every sampled expansion matches the glob', () => {
    const ownedGlob = fc.constantFrom('src/**', 'src/*', 'src/a*', 'src/?', 'src/*/b', '**', 'src/a/**', '*/a');
    const target = fc.array(fc.oneof(fc.constantFrom('src', 'a', 'b'), segmentPattern.filter((p) => p.length > 0)), { minLength: 1, maxLength: 3 });
    const fills = fc.array(fc.constantFrom('', 'a', 'b', 'ab', 'ba', 'src'), { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(ownedGlob, target, fills, (pattern, segments, fill) => {
        if (!globCovers(glob(pattern), segments)) return;
        let k = 0;
        const expansion = segments.map((part) => part.replace(/[*?]/g, (c) => (c === '?' ? 'a' : (fill[k++ % fill.length] as string))));
        if (expansion.some((part) => part === '')) return;
        expect(matchGlob(glob(pattern), expansion), `${pattern} ⊇ ${segments.join('/')} but not ${expansion.join('/')}`).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });
});
