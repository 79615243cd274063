import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { Id } from '@writ/contracts';
import { CELL_WORKSPACE } from './cell-config.js';
import { CellError } from './cell-errors.js';

/**
 * A task id names a host directory and a container, so it must be a plain
 * `Id` (1-128 of A-Z a-z 0-9 _ -): no dots, no slashes, nothing to escape with.
 */
export function assertTaskId(taskId: string): string {
  if (!Id.safeParse(taskId).success) {
    throw new CellError('CELL_TASK_ID_INVALID', `task id ${JSON.stringify(taskId)} cannot name a cell: it must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-"`, {
      details: { task_id: String(taskId) },
    });
  }
  return taskId;
}

/** Host layout of one cell: `<cellsRoot>/<taskId>/workspace`, bind-mounted at /workspace. */
export interface CellHostPaths {
  readonly taskDir: string;
  readonly workspaceDir: string;
  /** `<taskDir>/uses`: per-use records, mounted at /run/writ when `useRecords` (root-owned, 0711). */
  readonly usesDir: string;
}

export function cellHostPaths(cellsRoot: string, taskId: string): CellHostPaths {
  const taskDir = path.join(cellsRoot, assertTaskId(taskId));
  return { taskDir, workspaceDir: path.join(taskDir, 'workspace'), usesDir: path.join(taskDir, 'uses') };
}

/** A working directory inside the cell: its absolute path and its path relative to /workspace. */
export interface CellCwd {
  readonly containerPath: string;
  /** '' for /workspace itself, else `a/b` (POSIX separators, no `.` or `..`). */
  readonly relative: string;
}

/**
 * Resolves a requested cwd lexically, without touching any file system. Accepts a
 * path relative to /workspace (`src`, `./src/lib`) or an absolute one under it
 * (`/workspace/src`). Refuses every `..` segment, even one that would stay inside
 * (`a/../b`): a cwd names a place, it does not navigate.
 */
export function resolveCellCwd(cwd: string | undefined): CellCwd {
  if (cwd === undefined || cwd === '' || cwd === '.') return { containerPath: CELL_WORKSPACE, relative: '' };
  if (typeof cwd !== 'string' || cwd.includes('\0')) {
    throw new CellError('CELL_ARGUMENT_INVALID', 'cwd must be a string without NUL bytes', { details: { cwd: String(cwd) } });
  }
  const escape = () =>
    new CellError('CELL_PATH_ESCAPE', `cwd ${JSON.stringify(cwd)} is not inside ${CELL_WORKSPACE}: give a path relative to it, without ".."`, {
      details: { cwd },
    });
  let rest: string;
  if (cwd.startsWith('/')) {
    if (cwd !== CELL_WORKSPACE && !cwd.startsWith(`${CELL_WORKSPACE}/`)) throw escape();
    rest = cwd.slice(CELL_WORKSPACE.length);
  } else {
    rest = cwd;
  }
  const segments = rest.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw escape();
  const relative = segments.join('/');
  return { containerPath: relative === '' ? CELL_WORKSPACE : `${CELL_WORKSPACE}/${relative}`, relative };
}

/**
 * Checks on the host that a resolved cwd is a real directory inside the workspace,
 * reached without any symlink (a symlink could point anywhere).
 */
export async function assertHostCwd(workspaceDir: string, cwd: CellCwd): Promise<void> {
  if (cwd.relative === '') return;
  try {
    await lstat(workspaceDir);
  } catch (error) {
    throw new CellError('CELL_NOT_FOUND', `there is no workspace at ${workspaceDir}: call openCell first`, { cause: error, details: { workspace: workspaceDir } });
  }
  let current = workspaceDir;
  for (const segment of cwd.relative.split('/')) {
    current = path.join(current, segment);
    let stat;
    try {
      stat = await lstat(current);
    } catch (error) {
      throw new CellError('CELL_CWD_INVALID', `cwd ${cwd.containerPath} does not exist in the workspace`, { cause: error, details: { cwd: cwd.containerPath } });
    }
    if (stat.isSymbolicLink()) {
      throw new CellError('CELL_PATH_ESCAPE', `cwd ${cwd.containerPath} goes through a symlink (${segment}); symlinks are not followed`, {
        details: { cwd: cwd.containerPath },
      });
    }
    if (!stat.isDirectory()) {
      throw new CellError('CELL_CWD_INVALID', `cwd ${cwd.containerPath} is not a directory`, { details: { cwd: cwd.containerPath } });
    }
  }
}
