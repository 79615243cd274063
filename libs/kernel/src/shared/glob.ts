import { FilePath } from '@writ/contracts';

/**
 * A small, anchored glob matcher over normalized POSIX paths: `**` (a whole
 * segment) matches zero or more segments, `*` any run of characters inside one
 * segment, `?` exactly one character inside one segment. Every other character
 * is literal (no classes, braces or escapes). A pattern matches the WHOLE path,
 * never a part of it; no regular expression is built from input.
 */

export interface CompiledGlob {
  /** The pattern as written. */
  readonly source: string;
  /** Normalized segments; `**` only ever appears as a whole segment. */
  readonly segments: readonly string[];
}

const FORBIDDEN = /[\x00-\x1f\x7f\\]/;

/**
 * Compiles a path pattern relative to the workspace root, or returns undefined
 * when the pattern could match outside it (absolute, `~`, `..`) or is empty.
 * `./src/` is read as `src/**` (a trailing slash owns the directory's content).
 */
export function compileGlob(pattern: string): CompiledGlob | undefined {
  if (pattern.length === 0 || FORBIDDEN.test(pattern) || pattern.startsWith('/') || pattern.startsWith('~')) return undefined;
  const parts = pattern.split('/');
  const segments: string[] = [];
  for (const [index, part] of parts.entries()) {
    if (part === '..') return undefined;
    if (part === '' || part === '.') {
      if (index === parts.length - 1 && part === '' && segments.length > 0 && segments[segments.length - 1] !== '**') segments.push('**');
      continue;
    }
    if (part === '**' && segments[segments.length - 1] === '**') continue;
    segments.push(part);
  }
  if (segments.length === 0) return undefined;
  return { source: pattern, segments };
}

/** True when `path` (normalized segments) matches `glob` as a whole. */
export function matchGlob(glob: CompiledGlob, path: readonly string[]): boolean {
  const pattern = glob.segments;
  const width = path.length + 1;
  const memo = new Map<number, boolean>();
  const go = (pi: number, si: number): boolean => {
    const key = pi * width + si;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (pi === pattern.length) result = si === path.length;
    else if (pattern[pi] === '**') result = go(pi + 1, si) || (si < path.length && go(pi, si + 1));
    else result = si < path.length && matchSegment(pattern[pi] as string, path[si] as string) && go(pi + 1, si + 1);
    memo.set(key, result);
    return result;
  };
  return go(0, 0);
}

/** Wildcard match of one segment (`*`, `?`), linear backtracking to the last star. */
export function matchSegment(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const c = pattern[p];
    if (c === '?' || (c !== undefined && c !== '*' && c === text[t])) {
      p += 1;
      t += 1;
    } else if (c === '*') {
      starP = p;
      starT = t;
      p += 1;
    } else if (starP >= 0) {
      p = starP + 1;
      starT += 1;
      t = starT;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p += 1;
  return p === pattern.length;
}

/** True when `path` matches any of `globs`. */
export function matchAnyGlob(globs: readonly CompiledGlob[], path: readonly string[]): boolean {
  return globs.some((glob) => matchGlob(glob, path));
}

/** A zod schema for a path pattern relative to the workspace that cannot reach outside it (`src/**`, `**\/.env`). */
export const GlobPattern = FilePath.refine((pattern) => compileGlob(pattern) !== undefined, {
  message: 'must be a relative path pattern (no leading "/", "~", ".." segments or backslashes)',
});
