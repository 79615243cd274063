import type { ChangedFile } from '@writ/contracts';
import { compileGlob, matchAnyGlob, type CompiledGlob } from '../shared/glob.js';
import { normalizePath } from '../shared/paths.js';

/** A file one execution of the task changed (`execution.completed.changed_files`), with that execution's event id. */
export type ExecutedChange = ChangedFile & { readonly execution_event_id: string };

export interface SacredScopes {
  /** Sacred path globs (the kernel's DEFAULT_SACRED_PATHS unless a deployment says otherwise). */
  readonly scopes: readonly string[];
  /** The task's explicit Sacred Scope exceptions: such a path is excused only when it is owned too. */
  readonly exceptions: readonly string[];
}

export interface FileOwnershipAudit {
  readonly verdict: 'passed' | 'failed';
  readonly changed_files: number;
  /** Changed, but matched by no files_owned pattern (or spelled outside the workspace). */
  readonly modified_not_owned: readonly ExecutedChange[];
  /** Changed inside a Sacred Scope without an owned exception. */
  readonly sacred_modified: readonly ExecutedChange[];
  /** Executions without a workspace diff: the audit cannot vouch for them (fails closed). */
  readonly unaudited_executions: readonly string[];
  /** For each sacred path, the content it had before the task first changed it (null: it did not exist). */
  readonly restore: readonly { readonly path: string; readonly before_sha256: string | null }[];
}

function compileAll(patterns: readonly string[]): CompiledGlob[] {
  return patterns.map((pattern) => compileGlob(pattern)).filter((glob): glob is CompiledGlob => glob !== undefined);
}

/**
 * The file-ownership audit of seed 003 (scope-safety), run when a task
 * closes: every file the task's executions changed against the union of its
 * files_owned. Modified but not owned → failed; owned but not modified →
 * fine; modified inside a Sacred Scope → failed and to be reverted (the
 * `restore` list says to what). A path is owned when a files_owned pattern
 * matches its normalized spelling; a path that cannot be normalized inside
 * the workspace is never owned. An execution whose diff was not captured
 * makes the audit fail closed: it cannot prove the scope held.
 */
export function auditFileOwnership(
  changes: readonly ExecutedChange[],
  filesOwned: readonly string[],
  sacred: SacredScopes,
  unauditedExecutions: readonly string[] = [],
): FileOwnershipAudit {
  const owned = compileAll(filesOwned);
  const sacredGlobs = Object.freeze(compileAll(sacred.scopes));
  const exceptions = compileAll(sacred.exceptions);
  const modifiedNotOwned: ExecutedChange[] = [];
  const sacredModified: ExecutedChange[] = [];
  const restore = new Map<string, string | null>();
  for (const change of changes) {
    const normalized = normalizePath(change.path);
    const segments = normalized.ok ? normalized.segments : undefined;
    const isOwned = segments !== undefined && matchAnyGlob(owned, segments);
    if (!isOwned) modifiedNotOwned.push(change);
    const isSacred = segments !== undefined && matchAnyGlob(sacredGlobs, segments);
    const excused = isSacred && isOwned && segments !== undefined && matchAnyGlob(exceptions, segments);
    if (isSacred && !excused) {
      sacredModified.push(change);
      if (!restore.has(change.path)) restore.set(change.path, change.before_sha256);
    }
  }
  const failed = modifiedNotOwned.length > 0 || sacredModified.length > 0 || unauditedExecutions.length > 0;
  return {
    verdict: failed ? 'failed' : 'passed',
    changed_files: changes.length,
    modified_not_owned: modifiedNotOwned,
    sacred_modified: sacredModified,
    unaudited_executions: [...unauditedExecutions],
    restore: [...restore].map(([path, before]) => ({ path, before_sha256: before })),
  };
}
