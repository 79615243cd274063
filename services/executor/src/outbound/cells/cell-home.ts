import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, chown, lstat, mkdir, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CELL_DIRS, CELL_FILES } from '@writ/kernel';
import { CELL_GID, type CellUser } from './cell-config.js';
import { CellError } from './cell-errors.js';

/**
 * CELL_HOME on the host: the one directory a cell may write, bind-mounted at
 * /workspace, laid out per the Lazarus Cell Spec (section 6):
 *
 * ```
 * <cellsRoot>/<cell_id>/workspace/      CELL_HOME: the task's project files live at its root
 * ├── .lazarus/                         harness only (root 0755): cell.json, spawn.log,
 * │   └── checkpoints/                  decisions.jsonl, one <checkpoint_id>.json per checkpoint
 * ├── shared/                           root:cell 2775: every working seat writes here
 * │   ├── scratchpad.md                 root:cell 0664
 * │   └── artifacts/                    root:cell 2775
 * └── home/                             root 0755: one home/<participant>/ (the seat's own uid, 0700) per running seat
 * ```
 *
 * The project is CELL_HOME's root itself (not a `project/` directory): action paths,
 * grant scopes (the kernel's "paths relative to the cell home"), policy ownership globs,
 * workspace diffs and state-witness observations all name the same relative paths, and
 * `home/<participant>/…` and `shared/…` are reachable by those same relative paths.
 * `.lazarus`, `home` and `shared` are reserved names at the root.
 *
 * Ownership is what keeps the structure, and the seats apart. Every seat runs as its own
 * uid (application/cell-seats.ts); working seats share the cell group (CELL_GID), read-only
 * seats have a private group. CELL_HOME is root:cell 3775: the cell group writes the
 * project at its root (setgid: what a seat makes there stays the group's), others only read,
 * and the sticky bit means a seat removes or renames only its own entries there: never
 * `.lazarus`, `home` or `shared`, nor plants a symlink in their place that a host-side write
 * by the executor (root) would follow. Below the root nothing is sticky: working seats
 * change and remove each other's files (the exec wrapper's umask 002 keeps them
 * group-writable). `home/<seat>/` is the seat's own uid, 0700: no other seat lists, reads
 * or writes it.
 */

/** Permission bits of the layout. */
const MODES = Object.freeze({
  root: 0o3775,
  lazarus: 0o755,
  checkpoints: 0o755,
  home: 0o755,
  shared: 0o2775,
  participant: 0o700,
  artifacts: 0o2775,
  scratchpad: 0o664,
  file: 0o644,
});

/** Top-level names of CELL_HOME that are not project files. */
export const CELL_RESERVED_NAMES: ReadonlySet<string> = new Set([CELL_DIRS.lazarus, CELL_DIRS.shared, CELL_DIRS.home].map((dir) => dir.replace(/\/$/, '')));

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function startFailed(message: string, cause?: unknown, details: Record<string, unknown> = {}): CellError {
  return new CellError('CELL_START_FAILED', message, { cause, details });
}

/** `dir` exists as a real directory (made now if missing, `mode` and owner then applied): never a symlink. */
async function ensureDir(dir: string, mode: number, uid: number, gid: number, force = false): Promise<'created' | 'present'> {
  let created = false;
  try {
    await mkdir(dir, { mode });
    created = true;
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  }
  const stat = await lstat(dir);
  if (!stat.isDirectory()) throw startFailed(`${dir} exists but is not a directory (a symlink is never followed)`, undefined, { path: dir });
  // Only a directory this call made, or one owned by root (the harness's own), is (re)owned here:
  // a directory the cell user made is never chowned, so nothing it controls is handed to root.
  if (created || force || stat.uid === 0) {
    if (stat.uid !== uid || stat.gid !== gid) await chown(dir, uid, gid);
    if ((stat.mode & 0o7777) !== mode) await chmod(dir, mode);
  }
  return created ? 'created' : 'present';
}

/** An empty file made only when nothing is at `file` (O_EXCL: an existing name, even a symlink, is left alone). */
async function createEmptyFile(file: string, mode: number, uid: number, gid: number): Promise<void> {
  let handle;
  try {
    handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return;
    throw error;
  }
  try {
    await handle.chown(uid, gid);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/**
 * The participant-independent part of the layout: CELL_HOME (root:cell 3775), `.lazarus/` and
 * `.lazarus/checkpoints/` (root 0755), `shared/` (root:cell 2775), `home/` (root 0755); and, when
 * `shared/` is new, `shared/scratchpad.md` and `shared/artifacts/` (root:cell, group-writable).
 * Idempotent; made before the first container runs on the directory (a cold cell, or a
 * pooled cell's slot), so nothing in the cell can race it.
 */
export async function ensureCellHomeBase(cellHomeDir: string): Promise<void> {
  try {
    // Forced: a cell home made by an earlier version belongs to the cell user; it becomes root's (its parent,
    // the task directory, is root's 0700, so nothing in the cell can swap it while this runs).
    await ensureDir(cellHomeDir, MODES.root, 0, CELL_GID, true);
    await ensureDir(path.join(cellHomeDir, CELL_DIRS.lazarus), MODES.lazarus, 0, 0);
    await ensureDir(path.join(cellHomeDir, CELL_DIRS.checkpoints), MODES.checkpoints, 0, 0);
    await createEmptyFile(path.join(cellHomeDir, CELL_FILES.spawn_log), MODES.file, 0, 0);
    await createEmptyFile(path.join(cellHomeDir, CELL_FILES.decisions), MODES.file, 0, 0);
    await ensureDir(path.join(cellHomeDir, CELL_DIRS.home), MODES.home, 0, 0);
    const shared = await ensureDir(path.join(cellHomeDir, CELL_DIRS.shared), MODES.shared, 0, CELL_GID);
    if (shared === 'created') {
      await ensureDir(path.join(cellHomeDir, CELL_DIRS.artifacts), MODES.artifacts, 0, CELL_GID);
      await createEmptyFile(path.join(cellHomeDir, CELL_FILES.scratchpad), MODES.scratchpad, 0, CELL_GID);
    }
  } catch (error) {
    if (error instanceof CellError) throw error;
    throw startFailed(`could not lay out the cell home ${cellHomeDir} (root-owned; needs root)`, error, { cell_home: cellHomeDir });
  }
}

/**
 * `home/<participant>/`, the seat's own (`owner`: its uid and group), 0700. `participantId` is an
 * Id (one path segment). An existing home is given to `owner` (itself, not what is in it): only
 * the harness makes entries in root's `home/`, so the directory is never one the cell planted.
 */
export async function ensureParticipantHome(cellHomeDir: string, participantId: string, owner: CellUser): Promise<void> {
  await ensureDir(path.join(cellHomeDir, CELL_DIRS.home, participantId), MODES.participant, owner.uid, owner.gid, true);
}

/** The owner of `home/<participant>/` as the host sees it (never following a link), or undefined when it is not a directory. */
export async function participantHomeOwner(cellHomeDir: string, participantId: string): Promise<CellUser | undefined> {
  try {
    const stat = await lstat(path.join(cellHomeDir, CELL_DIRS.home, participantId));
    return stat.isDirectory() ? { uid: stat.uid, gid: stat.gid } : undefined;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** Removes `home/<participant>/` and everything in it (links are removed, never followed). */
export async function removeParticipantHome(cellHomeDir: string, participantId: string): Promise<void> {
  await rm(path.join(cellHomeDir, CELL_DIRS.home, participantId), { recursive: true, force: true });
}

/** The names of `home/` (participants' homes present on disk), sorted. */
export async function participantHomes(cellHomeDir: string): Promise<string[]> {
  try {
    return (await readdir(path.join(cellHomeDir, CELL_DIRS.home))).sort();
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw error;
  }
}

/** The project's own entries at CELL_HOME's root (every name but the reserved ones), sorted. */
export async function projectEntries(cellHomeDir: string): Promise<string[]> {
  return (await readdir(cellHomeDir)).filter((name) => !CELL_RESERVED_NAMES.has(name)).sort();
}

/**
 * Empties the areas a checkpoint restores: the project's entries at the root and the
 * content of `shared/` (homes are the caller's business). Runs as root on the host:
 * `rm` removes links, never follows them.
 */
export async function clearRestorableAreas(cellHomeDir: string): Promise<void> {
  for (const name of await projectEntries(cellHomeDir)) await rm(path.join(cellHomeDir, name), { recursive: true, force: true });
  const shared = path.join(cellHomeDir, CELL_DIRS.shared);
  for (const name of await readdir(shared).catch(() => [] as string[])) await rm(path.join(shared, name), { recursive: true, force: true });
}

/** `.lazarus/`, checked to be the harness's own directory before root writes in it. */
async function lazarusDir(cellHomeDir: string): Promise<string> {
  const dir = path.join(cellHomeDir, CELL_DIRS.lazarus);
  const stat = await lstat(dir);
  if (!stat.isDirectory() || stat.uid !== 0) throw startFailed(`${dir} is not the harness's directory (root-owned, not a link)`, undefined, { path: dir });
  return dir;
}

/** Replaces a harness file atomically (temporary file, then rename), root 0644. `relative` is under `.lazarus/`. */
export async function writeHarnessFile(cellHomeDir: string, relative: string, content: string): Promise<void> {
  await lazarusDir(cellHomeDir);
  const file = path.join(cellHomeDir, relative);
  // Unique per writer: two executors of one process (or host) may replace the same file at once.
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, content, { mode: MODES.file, flag: 'w' });
  await rename(temporary, file);
}

/** Appends one line to a harness log (`spawn.log`, `decisions.jsonl`), creating it root 0644. */
export async function appendHarnessLine(cellHomeDir: string, relative: string, line: string): Promise<void> {
  await lazarusDir(cellHomeDir);
  const handle = await open(path.join(cellHomeDir, relative), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, MODES.file);
  try {
    await handle.appendFile(`${line.replace(/\n/g, ' ')}\n`);
  } finally {
    await handle.close();
  }
}
