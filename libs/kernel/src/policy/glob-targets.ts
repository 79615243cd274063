/**
 * Reasoning about write targets that are themselves patterns: a shell word
 * like `src/*.o` names every path it may expand to. Policy must be sound for
 * all of them, so "inside files_owned" asks whether EVERY expansion is owned
 * and "sacred" asks whether ANY expansion could be sacred. Both are answered
 * over segment lists with `**`, `*` and `?`, like `shared/glob.ts`.
 */
import { matchGlob, matchSegment, type CompiledGlob } from '../shared/glob.js';

/** True when the word has characters a shell expands as a filename pattern. */
export function hasGlobChars(segment: string): boolean {
  return segment.includes('*') || segment.includes('?');
}

function memoized(width: number, step: (i: number, j: number, go: (i: number, j: number) => boolean) => boolean): (i: number, j: number) => boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * width + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const result = step(i, j, go);
    memo.set(key, result);
    return result;
  };
  return go;
}

/** True when some string matches both one-segment patterns (`*`, `?`, literals). */
export function segmentsIntersect(a: string, b: string): boolean {
  const go = memoized(b.length + 1, (i, j, next) => {
    if (i === a.length && j === b.length) return true;
    if (i < a.length && a[i] === '*' && next(i + 1, j)) return true;
    if (j < b.length && b[j] === '*' && next(i, j + 1)) return true;
    if (i >= a.length || j >= b.length) return false;
    const x = a[i] as string;
    const y = b[j] as string;
    if (x === '*' && y === '*') return false; // covered by the two skips above
    if (x === '*') return next(i, j + 1);
    if (y === '*') return next(i + 1, j);
    return (x === '?' || y === '?' || x === y) && next(i + 1, j + 1);
  });
  return go(0, 0);
}

/** True when some path matches both segment patterns (`**` spans segments). */
export function globsIntersect(a: readonly string[], b: readonly string[]): boolean {
  const go = memoized(b.length + 1, (i, j, next) => {
    if (i === a.length && j === b.length) return true;
    if (i < a.length && a[i] === '**' && next(i + 1, j)) return true;
    if (j < b.length && b[j] === '**' && next(i, j + 1)) return true;
    if (i >= a.length || j >= b.length) return false;
    const x = a[i] as string;
    const y = b[j] as string;
    if (x === '**' && y === '**') return false;
    if (x === '**') return next(i, j + 1);
    if (y === '**') return next(i + 1, j);
    return segmentsIntersect(x, y) && next(i + 1, j + 1);
  });
  return go(0, 0);
}

/**
 * True when every path the pattern `target` can expand to matches `glob`.
 * Conservative (false when unsure): either the glob ends in `**` and its head
 * matches a literal prefix of the target, or both have the same length and
 * each pattern segment of the target is `*` or the same pattern in the glob.
 */
export function globCovers(glob: CompiledGlob, target: readonly string[]): boolean {
  const firstPattern = target.findIndex(hasGlobChars);
  if (firstPattern < 0) return matchGlob(glob, target);
  const segments = glob.segments;
  if (segments[segments.length - 1] === '**') {
    const head = { source: glob.source, segments: segments.slice(0, -1) };
    for (let j = 0; j <= firstPattern; j += 1) {
      if (matchGlob(head, target.slice(0, j))) return true;
    }
  }
  if (segments.includes('**') || segments.length !== target.length) return false;
  return target.every((part, i) => {
    const pattern = segments[i] as string;
    return hasGlobChars(part) ? pattern === '*' || pattern === part : matchSegment(pattern, part);
  });
}
