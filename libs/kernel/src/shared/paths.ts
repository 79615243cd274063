/**
 * Lexical normalization of POSIX paths relative to a workspace (the cell
 * home). Symlinks cannot be seen here: the executor resolves them inside the
 * cell; the kernel only guarantees that the *spelling* of a path stays inside.
 */

/** Why a path was refused. */
export type PathRefusal =
  /** Empty string. */
  | 'PATH_EMPTY'
  /** Absolute and not under the workspace root (or no root was given). */
  | 'PATH_ABSOLUTE'
  /** `..` climbs above the workspace root. */
  | 'PATH_ESCAPES_ROOT'
  /** `~` or `~user`: relative to a home directory the kernel cannot see. */
  | 'PATH_HOME_RELATIVE'
  /** Control characters or a backslash (never a separator on POSIX, but a classic disguise). */
  | 'PATH_INVALID_CHARACTER';

export type NormalizedPath =
  | { readonly ok: true; readonly path: string; readonly segments: readonly string[] }
  | { readonly ok: false; readonly reason: PathRefusal };

export interface NormalizeOptions {
  /** Absolute POSIX path of the workspace; absolute inputs under it become relative. */
  readonly root?: string | undefined;
  /** Directory (relative to the root) that relative inputs are resolved against. */
  readonly cwd?: readonly string[] | undefined;
}

const FORBIDDEN = /[\x00-\x1f\x7f\\]/;

/** The workspace root itself, as a normalized path. */
export const ROOT_PATH = '.';

function resolveSegments(base: readonly string[], parts: readonly string[], clampAtRoot: boolean): string[] | undefined {
  const out = [...base];
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) {
        if (clampAtRoot) continue;
        return undefined;
      }
      out.pop();
      continue;
    }
    out.push(part);
  }
  return out;
}

/**
 * Normalizes `input` to segments relative to the workspace root, refusing
 * anything whose spelling leaves it: `..` above the root, absolute paths
 * outside `root`, `~`, backslashes and control characters.
 */
export function normalizePath(input: string, options: NormalizeOptions = {}): NormalizedPath {
  if (input.length === 0) return { ok: false, reason: 'PATH_EMPTY' };
  if (FORBIDDEN.test(input)) return { ok: false, reason: 'PATH_INVALID_CHARACTER' };
  if (input.startsWith('~')) return { ok: false, reason: 'PATH_HOME_RELATIVE' };
  let segments: string[] | undefined;
  if (input.startsWith('/')) {
    // POSIX: `/..` is `/`, so an absolute path is clamped at the filesystem root first.
    const absolute = resolveSegments([], input.split('/'), true) ?? [];
    const root = options.root === undefined ? undefined : rootSegments(options.root);
    if (root === undefined || root.length > absolute.length || root.some((part, i) => absolute[i] !== part)) {
      return { ok: false, reason: 'PATH_ABSOLUTE' };
    }
    segments = absolute.slice(root.length);
  } else {
    segments = resolveSegments(options.cwd ?? [], input.split('/'), false);
    if (segments === undefined) return { ok: false, reason: 'PATH_ESCAPES_ROOT' };
  }
  return { ok: true, path: segments.length === 0 ? ROOT_PATH : segments.join('/'), segments };
}

function rootSegments(root: string): string[] | undefined {
  if (!root.startsWith('/') || FORBIDDEN.test(root)) return undefined;
  return resolveSegments([], root.split('/'), true);
}
