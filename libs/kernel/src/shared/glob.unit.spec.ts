import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob, matchGlob, matchSegment } from './glob.js';
import { normalizePath } from './paths.js';

function matches(pattern: string, path: string): boolean {
  const glob = compileGlob(pattern);
  const normalized = normalizePath(path);
  return glob !== undefined && normalized.ok && matchGlob(glob, normalized.segments);
}

describe('anchored glob', () => {
  it.each([
    ['src/**', 'src/a.ts', true],
    ['src/**', 'src/deep/er/a.ts', true],
    ['src/**', 'src', true],
    ['src/**', 'src2/a.ts', false],
    ['src/**', 'lib/src/a.ts', false],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/d/a.ts', false],
    ['src/*.ts', 'src/a.tsx', false],
    ['src/?.ts', 'src/a.ts', true],
    ['src/?.ts', 'src/ab.ts', false],
    ['**/*.test.ts', 'a/b/c.test.ts', true],
    ['**/*.test.ts', 'c.test.ts', true],
    ['tests/foo/*.test.ts', 'tests/foo/x.test.ts', true],
    ['src/foo.ts', 'src/foo.ts', true],
    ['src/foo.ts', 'src/foo.ts.bak', false],
    ['src/foo.ts', 'xsrc/foo.ts', false],
    ['src/', 'src/a/b', true],
    ['./src/**', 'src/a', true],
    ['**', '.', true],
    ['src/**/x', 'src/x', true],
    ['src/**/x', 'src/a/b/x', true],
    ['a*b', 'ab', true],
    ['a*b', 'a/b', false],
    ['[ab]', 'a', false],
    ['[ab]', '[ab]', true],
  ])('given the pattern %j, then %j matches: %s', (pattern, path, want) => {
    expect(matches(pattern, path)).toBe(want);
  });

  it.each(['/etc/**', '../**', 'src/../../x', '~/x', '', 'a\\b'])('given the pattern %j, then it does not compile (it could reach outside)', (pattern) => {
    expect(compileGlob(pattern)).toBeUndefined();
  });

  it('given a pathological pattern, then matching stays fast (no backtracking blow-up)', () => {
    const glob = compileGlob(`${'**/'.repeat(30)}x`) as NonNullable<ReturnType<typeof compileGlob>>;
    const path = Array.from({ length: 200 }, () => 'a');
    const started = performance.now();
    expect(matchGlob(glob, path)).toBe(false);
    expect(matchSegment('*a*a*a*a*a*a*a*b', 'a'.repeat(5_000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('property: a literal pattern matches exactly itself', () => {
    const name = fc.stringMatching(/^[a-z.]{1,6}$/).filter((s) => s !== '.' && s !== '..' && s !== '...');
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 4 }), fc.array(name, { minLength: 1, maxLength: 4 }), (a, b) => {
        expect(matches(a.join('/'), b.join('/'))).toBe(a.join('/') === b.join('/'));
      }),
    );
  });

  it('property: dir/** matches exactly the paths below dir (segment-wise prefix)', () => {
    const name = fc.constantFrom('a', 'b', 'ab', 'a.b');
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 3 }), fc.array(name, { minLength: 1, maxLength: 5 }), (dir, path) => {
        const inside = dir.every((segment, i) => path[i] === segment);
        expect(matches(`${dir.join('/')}/**`, path.join('/'))).toBe(inside);
      }),
    );
  });
});
