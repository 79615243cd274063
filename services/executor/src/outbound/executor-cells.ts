import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';
import { hasErrorCode, WritError } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { ExecutorError } from '../application/executor-errors.js';
import type { CellCloser, CellPort } from '../application/ports.js';
import type { CellEnvironment, CellExecOptions, CellExecResult, CellHandle, CellImage, CellRuntime, WorkspaceSnapshot } from './cells/index.js';

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * The cell runtime plus the host-side checks file actions need. Paths are
 * always workspace-relative in what this reports: host paths stay here.
 */
export class ExecutorCells implements CellPort, CellCloser {
  readonly #runtime: CellRuntime;

  constructor(runtime: CellRuntime) {
    this.#runtime = runtime;
  }

  get runtime(): CellRuntime {
    return this.#runtime;
  }

  ensureImage(): Promise<CellImage> {
    return this.#runtime.ensureImage();
  }

  openCell(taskId: string): Promise<CellHandle> {
    return this.#guard(() => this.#runtime.openCell(taskId));
  }

  snapshotWorkspace(taskId: string): Promise<WorkspaceSnapshot> {
    return this.#guard(() => this.#runtime.snapshotWorkspace(taskId));
  }

  exec(taskId: string, options: CellExecOptions): Promise<CellExecResult> {
    return this.#guard(() => this.#runtime.exec(taskId, options));
  }

  /** Removes the task's containers and keeps its workspace (`scrub: false`). */
  closeCell(taskId: string): Promise<{ readonly containers_removed: number }> {
    return this.#guard(() => this.#runtime.closeCell(taskId, { scrub: false }));
  }

  environment(taskId: string): Promise<CellEnvironment> {
    return this.#guard(() => this.#runtime.environment(taskId));
  }

  /**
   * Cell errors end up in `execution.completed.error.message`: where the cells live on
   * this host is not the log's business, so the cells root is replaced there (code and
   * cause are kept).
   */
  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const root = this.#runtime.config.cellsRoot;
      if (!hasErrorCode(error) || !(error instanceof Error) || !error.message.includes(root)) throw error;
      throw new WritError(error.code, error.message.split(root).join('<cells-root>'), { cause: error });
    }
  }

  /**
   * Refuses a path reached through a symlink: every existing segment of
   * `relative` below the workspace must be a real directory or (last) a
   * non-link. Segments that do not exist yet are fine (a write creates them).
   */
  async assertPlainPath(taskId: string, relative: string): Promise<void> {
    const { workspaceDir } = this.#runtime.hostPaths(taskId);
    const segments = relative.split('/');
    let current = workspaceDir;
    for (const [index, segment] of segments.entries()) {
      current = path.join(current, segment);
      let stat;
      try {
        stat = await lstat(current);
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return;
        throw error;
      }
      const shown = segments.slice(0, index + 1).join('/');
      if (stat.isSymbolicLink()) {
        throw new ExecutorError('EXECUTOR_PATH_ESCAPE', `${relative} goes through the symlink ${shown}; file actions never follow symlinks`, {
          details: { path: relative, symlink: shown },
        });
      }
      if (index < segments.length - 1 && !stat.isDirectory()) return;
    }
  }

  async readChangedFile(taskId: string, relative: string, sha256: string, maxBytes: number): Promise<Uint8Array | undefined> {
    const { workspaceDir } = this.#runtime.hostPaths(taskId);
    const segments = relative.split('/');
    if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) return undefined;
    let current = workspaceDir;
    for (const segment of segments.slice(0, -1)) {
      current = path.join(current, segment);
      const stat = await lstat(current).catch(() => undefined);
      if (stat === undefined || !stat.isDirectory()) return undefined;
    }
    let handle;
    try {
      // O_NOFOLLOW: a symlink put in the file's place since the snapshot is not followed.
      handle = await open(path.join(workspaceDir, relative), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile() || stat.size > maxBytes) return undefined;
      const bytes = await handle.readFile();
      // Only the content the snapshot hashed is kept: anything else is not what the action left.
      return sha256Hex(bytes) === sha256 ? bytes : undefined;
    } finally {
      await handle.close();
    }
  }
}
