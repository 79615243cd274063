import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob, compileGlobSet, matchAnyGlob, matchGlob, matchGlobSet, matchSegment, type CompiledGlob } from '../shared/glob.js';
import { DEFAULT_SACRED_PATHS, DEFAULT_SECRET_PATHS } from './sacred-scopes.js';

// The matcher and the prepared sets are performance work: these tests hold them to the plain
// definition (try every glob, `**` spans zero or more segments), written out as a recursion.
function reference(pattern: readonly string[], path: readonly string[]): boolean {
  const go = (p: number, s: number): boolean => {
    if (p === pattern.length) return s === path.length;
    if (pattern[p] === '**') return go(p + 1, s) || (s < path.length && go(p, s + 1));
    return s < path.length && matchSegment(pattern[p] as string, path[s] as string) && go(p + 1, s + 1);
  };
  return go(0, 0);
}

const compileAll = (patterns: readonly string[]): CompiledGlob[] => patterns.map((pattern) => compileGlob(pattern)).filter((glob): glob is CompiledGlob => glob !== undefined);

const segment = fc.constantFrom('a', 'b', 'ab', '.env', 'secrets', 'x.pem', 'oauth2', 'src', 'package.json', 'migrations');
const patternSegment = fc.constantFrom('**', '*', '?', 'a', 'b', 'a*', '*b', '?b', '.env', '*.pem', '*oauth*', 'secrets', 'src');
const path = fc.array(segment, { maxLength: 6 });
const pattern = fc.array(patternSegment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('/'));

describe('glob matching against its definition', () => {
  it('property: matchGlob agrees with the recursive definition', () => {
    fc.assert(
      fc.property(pattern, path, (source, segments) => {
        const glob = compileGlob(source) as CompiledGlob;
        expect(matchGlob(glob, segments), `${source} ~ ${segments.join('/')}`).toBe(reference(glob.segments, segments));
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: a prepared set answers as trying every glob in turn, and so does its memo on a second ask', () => {
    fc.assert(
      fc.property(fc.array(pattern, { minLength: 1, maxLength: 8 }), fc.array(path, { minLength: 1, maxLength: 6 }), (sources, paths) => {
        const globs = Object.freeze(compileAll(sources));
        const set = compileGlobSet(globs);
        for (const segments of paths) {
          const want = globs.some((glob) => reference(glob.segments, segments));
          const key = segments.length === 0 ? '.' : segments.join('/');
          expect(matchGlobSet(set, segments)).toBe(want);
          expect(matchAnyGlob(globs, segments, key)).toBe(want);
          expect(matchAnyGlob(globs, segments, key)).toBe(want);
          expect(matchAnyGlob([...globs], segments)).toBe(want);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('given the default sacred and secret lists, then the prepared set answers as every glob in turn', () => {
    const names = ['a', '.env', '.env.local', '.envrc', 'id_rsa', 'id_rsa.pub', 'x.pem', 'x.key', 'secrets', '.secrets', 'auth', 'my-oauth-app', 'OAuthClient', 'package.json', 'go.sum', 'requirements-dev.txt', 'db', 'migrate', 'alembic', 'versions', 'migrations', '.git', 'src'];
    for (const list of [DEFAULT_SACRED_PATHS, DEFAULT_SECRET_PATHS]) {
      const globs = Object.freeze(compileAll(list));
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...names), { maxLength: 5 }), (segments) => {
          const key = segments.length === 0 ? '.' : segments.join('/');
          expect(matchAnyGlob(globs, segments, key), key).toBe(globs.some((glob) => reference(glob.segments, segments)));
        }),
        { numRuns: 1_000 },
      );
    }
  });

  it('given a pattern compiled twice, then both answers are the same frozen glob, and a refused pattern stays refused', () => {
    const first = compileGlob('src/**');
    expect(compileGlob('src/**')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first?.segments)).toBe(true);
    expect(compileGlob('../x')).toBeUndefined();
    expect(compileGlob('../x')).toBeUndefined();
  });
});
