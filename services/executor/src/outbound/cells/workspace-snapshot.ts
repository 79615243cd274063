import { createHash } from 'node:crypto';
import { createReadStream, type Stats } from 'node:fs';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '@writ/crypto';
import { CellError } from './cell-errors.js';

/**
 * What a workspace held at one moment: regular files and symlinks by their path
 * relative to the workspace root (POSIX separators). Directories are implied by
 * their contents; sockets, FIFOs and devices are skipped and listed apart.
 * Symlinks are recorded as links (their target text), never followed.
 */
export type SnapshotEntry =
  | {
      readonly kind: 'file';
      /** SHA-256 of the content, lowercase hex. */
      readonly sha256: string;
      readonly size: number;
      /** Permission bits, including setuid/setgid/sticky (`mode & 0o7777`). */
      readonly mode: number;
    }
  | {
      readonly kind: 'symlink';
      /** The link's target text, as `readlink` returns it. */
      readonly target: string;
      /** SHA-256 of the target text, so a retargeted link shows as modified. */
      readonly sha256: string;
      /** Length of the target text in bytes. */
      readonly size: number;
      readonly mode: number;
    };

export interface WorkspaceSnapshot {
  readonly entries: ReadonlyMap<string, SnapshotEntry>;
  /** Paths of special files (sockets, FIFOs, devices) that were not recorded. */
  readonly skipped: readonly string[];
}

export interface FileChange {
  readonly path: string;
  readonly before: SnapshotEntry | null;
  readonly after: SnapshotEntry | null;
  readonly before_sha256: string | null;
  readonly after_sha256: string | null;
}

export interface WorkspaceDiff {
  readonly added: readonly FileChange[];
  /** Content, mode or kind (file ↔ symlink) changed. */
  readonly modified: readonly FileChange[];
  readonly deleted: readonly FileChange[];
}

/** Files up to this size are read whole; larger ones are hashed as a stream. */
const READ_WHOLE_BYTES = 1024 * 1024;

async function hashFile(file: string, size: number): Promise<string> {
  if (size <= READ_WHOLE_BYTES) return sha256Hex(await readFile(file));
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function permissionBits(stat: Stats): number {
  return stat.mode & 0o7777;
}

export interface SnapshotOptions {
  /** Names at the root that are not walked at all (the harness's `.lazarus` of a cell home). */
  readonly skipTopLevel?: ReadonlySet<string>;
}

/**
 * Walks `root` on the host (no symlink is followed, not even `root` itself) and
 * records every regular file and symlink under it. Entries come out sorted by path.
 */
export async function snapshotDirectory(root: string, options: SnapshotOptions = {}): Promise<WorkspaceSnapshot> {
  let rootStat;
  try {
    rootStat = await lstat(root);
  } catch (error) {
    throw new CellError('CELL_NOT_FOUND', `no workspace at ${root}`, { cause: error, details: { workspace: root } });
  }
  if (!rootStat.isDirectory()) {
    throw new CellError('CELL_PATH_ESCAPE', `the workspace ${root} is not a directory (a symlink is never followed)`, { details: { workspace: root } });
  }
  const found: Array<[string, SnapshotEntry]> = [];
  const skipped: string[] = [];
  const pending: string[] = [''];
  while (pending.length > 0) {
    const relativeDir = pending.pop() as string;
    const names = (await readdir(path.join(root, relativeDir))).sort();
    for (const name of names) {
      if (relativeDir === '' && options.skipTopLevel?.has(name) === true) continue;
      const relative = relativeDir === '' ? name : `${relativeDir}/${name}`;
      const absolute = path.join(root, relative);
      let stat: Stats;
      try {
        stat = await lstat(absolute);
      } catch (error) {
        // Gone between readdir and lstat: nothing runs in the cell while we walk, so
        // only a concurrent host process could do this; record what is there.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      if (stat.isDirectory()) {
        pending.push(relative);
      } else if (stat.isFile()) {
        found.push([relative, { kind: 'file', sha256: await hashFile(absolute, stat.size), size: stat.size, mode: permissionBits(stat) }]);
      } else if (stat.isSymbolicLink()) {
        const target = await readlink(absolute);
        found.push([relative, { kind: 'symlink', target, sha256: sha256Hex(target), size: Buffer.byteLength(target), mode: permissionBits(stat) }]);
      } else {
        skipped.push(relative);
      }
    }
  }
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { entries: new Map(found), skipped: skipped.sort() };
}

function sameEntry(a: SnapshotEntry, b: SnapshotEntry): boolean {
  return a.kind === b.kind && a.sha256 === b.sha256 && a.size === b.size && a.mode === b.mode;
}

function change(pathName: string, before: SnapshotEntry | null, after: SnapshotEntry | null): FileChange {
  return { path: pathName, before, after, before_sha256: before?.sha256 ?? null, after_sha256: after?.sha256 ?? null };
}

/** What changed from `before` to `after`; a pure function, each list sorted by path. */
export function diffSnapshots(before: WorkspaceSnapshot, after: WorkspaceSnapshot): WorkspaceDiff {
  const added: FileChange[] = [];
  const modified: FileChange[] = [];
  const deleted: FileChange[] = [];
  for (const [pathName, next] of after.entries) {
    const previous = before.entries.get(pathName);
    if (previous === undefined) added.push(change(pathName, null, next));
    else if (!sameEntry(previous, next)) modified.push(change(pathName, previous, next));
  }
  for (const [pathName, previous] of before.entries) {
    if (!after.entries.has(pathName)) deleted.push(change(pathName, previous, null));
  }
  const byPath = (a: FileChange, b: FileChange) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return { added: added.sort(byPath), modified: modified.sort(byPath), deleted: deleted.sort(byPath) };
}
