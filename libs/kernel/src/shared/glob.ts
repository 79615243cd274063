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

/** Patterns compiled before (`null`: refused), bounded: the same few patterns come back with every decision. */
const compiled = new Map<string, CompiledGlob | null>();
const COMPILED_CACHE_SIZE = 2_048;

/**
 * Compiles a path pattern relative to the workspace root, or returns undefined
 * when the pattern could match outside it (absolute, `~`, `..`) or is empty.
 * `./src/` is read as `src/**` (a trailing slash owns the directory's content).
 * The result is frozen and may be shared by every caller of the same pattern.
 */
export function compileGlob(pattern: string): CompiledGlob | undefined {
  const known = compiled.get(pattern);
  if (known !== undefined) return known ?? undefined;
  const glob = compileUncached(pattern);
  if (compiled.size >= COMPILED_CACHE_SIZE) compiled.clear();
  compiled.set(pattern, glob ?? null);
  return glob;
}

function compileUncached(pattern: string): CompiledGlob | undefined {
  if (pattern.length === 0 || FORBIDDEN.test(pattern) || pattern.startsWith('/') || pattern.startsWith('~')) return undefined;
  const parts = pattern.split('/');
  const segments: string[] = [];
  for (let index = 0; index < parts.length; index += 1) {
    const part = parts[index] as string;
    if (part === '..') return undefined;
    if (part === '' || part === '.') {
      if (index === parts.length - 1 && part === '' && segments.length > 0 && segments[segments.length - 1] !== '**') segments.push('**');
      continue;
    }
    if (part === '**' && segments[segments.length - 1] === '**') continue;
    segments.push(part);
  }
  if (segments.length === 0) return undefined;
  return Object.freeze({ source: pattern, segments: Object.freeze(segments) });
}

/** True when the segment has a wildcard (`*`, `?`); a segment without one matches only itself. */
function isWild(segment: string): boolean {
  return segment.includes('*') || segment.includes('?');
}

/** One pattern segment against one path segment: a plain string comparison unless it has a wildcard. */
function segmentMatches(pattern: string, text: string): boolean {
  return pattern === text || (isWild(pattern) && matchSegment(pattern, text));
}

/**
 * True when `path` (normalized segments) matches `glob` as a whole.
 *
 * `**` is to segments what `*` is to characters, and every other pattern
 * segment consumes exactly one path segment, so the linear backtracking of
 * `matchSegment` (resume after the last `**`) is exact here too: O(pattern ×
 * path) at worst, and no allocation (this runs for every path against every
 * sacred glob of a decision).
 */
export function matchGlob(glob: CompiledGlob, path: readonly string[]): boolean {
  const pattern = glob.segments;
  const to = pattern.length;
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < path.length) {
    const c = p < to ? (pattern[p] as string) : undefined;
    if (c === '**') {
      starP = p;
      starT = t;
      p += 1;
    } else if (c !== undefined && segmentMatches(c, path[t] as string)) {
      p += 1;
      t += 1;
    } else if (starP >= 0) {
      p = starP + 1;
      starT += 1;
      t = starT;
    } else {
      return false;
    }
  }
  while (p < to && pattern[p] === '**') p += 1;
  return p === to;
}

/** Wildcard match of one segment (`*`, `?`), linear backtracking to the last star. */
export function matchSegment(pattern: string, text: string): boolean {
  if (pattern === text) return true;
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

/**
 * A list of globs prepared for "does any of them match": the shapes the
 * Sacred Scopes are made of are answered without the general matcher.
 * `**\/name` (a literal last segment, `**\/.env`) is a lookup of the path's
 * last segment; `**\/name/**` (`**\/secrets/**`) a lookup of each segment;
 * `**\/*.pem` matches the last segment alone and `**\/*oauth*\/**` any one
 * segment. Every other glob is matched in turn. The answer is the same as
 * trying each glob in turn (`matchGlob`).
 */
export interface GlobSet {
  /** The globs, as given. */
  readonly globs: readonly CompiledGlob[];
  /** A bare `**` is in the list: everything matches. */
  readonly any: boolean;
  /** Last segments of `**\/<literal>`. */
  readonly lastNames: ReadonlySet<string>;
  /** Segments of `**\/<literal>/**`. */
  readonly anyNames: ReadonlySet<string>;
  /** Segment patterns of `**\/<wildcard>`, matched against the last segment. */
  readonly lastPatterns: readonly string[];
  /** Segment patterns of `**\/<wildcard>/**`, matched against each segment. */
  readonly anyPatterns: readonly string[];
  /** The rest, matched one by one. */
  readonly others: readonly CompiledGlob[];
}

/** Prepares `globs` for `matchGlobSet` (prepare once per list, match many). */
export function compileGlobSet(globs: readonly CompiledGlob[]): GlobSet {
  let any = false;
  const lastNames = new Set<string>();
  const anyNames = new Set<string>();
  const lastPatterns: string[] = [];
  const anyPatterns: string[] = [];
  const others: CompiledGlob[] = [];
  for (const glob of globs) {
    const s = glob.segments;
    const middle = s[1] as string;
    if (s.length === 1 && s[0] === '**') any = true;
    else if (s.length === 2 && s[0] === '**' && middle !== '**') {
      if (isWild(middle)) lastPatterns.push(middle);
      else lastNames.add(middle);
    } else if (s.length === 3 && s[0] === '**' && s[2] === '**' && middle !== '**') {
      if (isWild(middle)) anyPatterns.push(middle);
      else anyNames.add(middle);
    } else others.push(glob);
  }
  return Object.freeze({ globs, any, lastNames, anyNames, lastPatterns: Object.freeze(lastPatterns), anyPatterns: Object.freeze(anyPatterns), others: Object.freeze(others) });
}

/** True when `path` matches any glob of the set (the same answer as `matchAnyGlob` over `set.globs`). */
export function matchGlobSet(set: GlobSet, path: readonly string[]): boolean {
  if (set.any) return true;
  const n = path.length;
  if (n > 0) {
    const last = path[n - 1] as string;
    if (set.lastNames.has(last)) return true;
    for (const pattern of set.lastPatterns) if (matchSegment(pattern, last)) return true;
  }
  if (set.anyNames.size > 0 || set.anyPatterns.length > 0) {
    for (const segment of path) {
      if (set.anyNames.has(segment)) return true;
      for (const pattern of set.anyPatterns) if (matchSegment(pattern, segment)) return true;
    }
  }
  for (const glob of set.others) if (matchGlob(glob, path)) return true;
  return false;
}

interface PreparedList {
  readonly set: GlobSet;
  /** Answers by path (`segments.join('/')`), bounded: a workload touches the same few paths again and again. */
  readonly memo: Map<string, boolean>;
}

/** Frozen glob lists (a profile's), prepared on first use: a frozen list cannot change after it was prepared. */
const preparedLists = new WeakMap<readonly CompiledGlob[], PreparedList>();
const MEMO_SIZE = 1_024;

/**
 * True when `path` matches any of `globs`. A frozen list is prepared once
 * (`compileGlobSet`) and, given `key` (the path as `segments.join('/')`, or
 * `.` for the root), remembers its answers: the list and the matcher are
 * fixed, so the answer for a path is too.
 */
export function matchAnyGlob(globs: readonly CompiledGlob[], path: readonly string[], key?: string): boolean {
  // A list that is not frozen may change, and is usually short (a task's files_owned): try each glob in turn.
  if (!Object.isFrozen(globs)) {
    for (const glob of globs) if (matchGlob(glob, path)) return true;
    return false;
  }
  let prepared = preparedLists.get(globs);
  if (prepared === undefined) {
    prepared = { set: compileGlobSet(globs), memo: new Map() };
    preparedLists.set(globs, prepared);
  }
  if (key === undefined) return matchGlobSet(prepared.set, path);
  const known = prepared.memo.get(key);
  if (known !== undefined) return known;
  const result = matchGlobSet(prepared.set, path);
  if (prepared.memo.size >= MEMO_SIZE) prepared.memo.clear();
  prepared.memo.set(key, result);
  return result;
}

/** A zod schema for a path pattern relative to the workspace that cannot reach outside it (`src/**`, `**\/.env`). */
export const GlobPattern = FilePath.refine((pattern) => compileGlob(pattern) !== undefined, {
  message: 'must be a relative path pattern (no leading "/", "~", ".." segments or backslashes)',
});
