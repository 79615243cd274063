import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizePath } from './paths.js';

describe('normalizePath', () => {
  it.each([
    ['src/a.ts', 'src/a.ts'],
    ['./src//a.ts', 'src/a.ts'],
    ['src/./b/../a.ts', 'src/a.ts'],
    ['src/...', 'src/...'],
    ['src/..%2f..%2fetc', 'src/..%2f..%2fetc'],
    ['src/.. /x', 'src/.. /x'],
    ['.', '.'],
    ['src/..', '.'],
  ])('given %j, then it normalizes to %j', (input, want) => {
    const result = normalizePath(input);
    expect(result.ok && result.path).toBe(want);
  });

  it.each([
    ['', 'PATH_EMPTY'],
    ['../etc/passwd', 'PATH_ESCAPES_ROOT'],
    ['src/../../etc', 'PATH_ESCAPES_ROOT'],
    ['src/link/../../../x', 'PATH_ESCAPES_ROOT'],
    ['/etc/passwd', 'PATH_ABSOLUTE'],
    ['~/.ssh/id_rsa', 'PATH_HOME_RELATIVE'],
    ['~root/x', 'PATH_HOME_RELATIVE'],
    ['src\\..\\..\\x', 'PATH_INVALID_CHARACTER'],
    ['src/a\u0000b', 'PATH_INVALID_CHARACTER'],
    ['src/a\nb', 'PATH_INVALID_CHARACTER'],
  ])('given %j, then it is refused with %s', (input, reason) => {
    expect(normalizePath(input)).toEqual({ ok: false, reason });
  });

  it('given a workspace root, when an absolute path lies under it, then it becomes relative', () => {
    expect(normalizePath('/work/main/src/a.ts', { root: '/work/main' })).toMatchObject({ ok: true, path: 'src/a.ts' });
    expect(normalizePath('/work/main/../main/src', { root: '/work/main' })).toMatchObject({ ok: true, path: 'src' });
  });

  it.each(['/work/mainframe/x', '/work/main/../../etc', '/etc', '/work'])('given the root /work/main, then %j is PATH_ABSOLUTE', (input) => {
    expect(normalizePath(input, { root: '/work/main' })).toEqual({ ok: false, reason: 'PATH_ABSOLUTE' });
  });

  it('given a cwd, then relative paths resolve against it and may not climb above the root', () => {
    expect(normalizePath('../b', { cwd: ['src', 'a'] })).toMatchObject({ ok: true, path: 'src/b' });
    expect(normalizePath('../../../b', { cwd: ['src', 'a'] })).toEqual({ ok: false, reason: 'PATH_ESCAPES_ROOT' });
  });

  it('property: whatever is accepted agrees with posix.normalize and stays inside the root', () => {
    const segment = fc.constantFrom('a', 'b', '.', '..', '', '...', 'c d');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 8 }), (parts) => {
        const input = parts.join('/');
        const result = normalizePath(input);
        if (input === '') return;
        if (input.startsWith('/')) {
          expect(result).toEqual({ ok: false, reason: 'PATH_ABSOLUTE' });
          return;
        }
        const oracle = posix.normalize(input);
        const escapes = oracle === '..' || oracle.startsWith('../');
        if (escapes) expect(result.ok).toBe(false);
        else {
          expect(result.ok).toBe(true);
          if (result.ok) expect(result.path).toBe(oracle.replace(/\/$/, '') || '.');
        }
      }),
    );
  });
});
