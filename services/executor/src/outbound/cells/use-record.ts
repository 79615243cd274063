import { constants } from 'node:fs';
import { chown, lstat, mkdir, open, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CELL_GID, CELL_HARNESS_USER, CELL_UID, type CellUser } from './cell-config.js';

/**
 * The per-use record the recorded exec wrapper keeps (exec-wrapper.ts,
 * RECORDED_SUPERVISOR_SCRIPT), read from the host: `<cellsRoot>/<taskId>/uses/<useId>/`.
 * The cell writes it as the acting seat's uid (cap-drop ALL leaves no way to change uid inside
 * the cell), so it is evidence of the action's own doing, not a tamper-proof witness: the
 * action could rewrite its own record, but it already controls its exit status and
 * output. Other uses' directories are not listable (the parent is root-owned 0711) and
 * their names (use ids) are hashes of grants the action never sees.
 */
export interface UseRecord {
  /** `run/` exists: the wrapper began (or a reconciler fenced it, then `fenced`). */
  readonly started: boolean;
  /**
   * The reconciler made `run/` first: the action never ran and never will. Read from the
   * host's marker `uses/<useId>.fenced` in the root-owned parent, never from the record
   * itself: the action can write its own record, and a `fenced` it planted there must not
   * turn a run into "never ran".
   */
  readonly fenced: boolean;
  /** The action's exit status; undefined while it runs or when the wrapper died before the end. */
  readonly exit_code: number | undefined;
  readonly timed_out: boolean;
  readonly pgid: number | undefined;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  /** Bytes written past the cap (read and dropped); undefined when unknown. */
  readonly stdout_rest: number | undefined;
  readonly stderr_rest: number | undefined;
}

const USE_ID = /^use-[0-9a-f]{40}$/;

export function useRecordDir(usesDir: string, useId: string): string {
  if (!USE_ID.test(useId)) throw new Error(`not a use id: ${useId}`);
  return path.join(usesDir, useId);
}

/** The host's fence marker of a use: beside its record, in `uses/` (root-owned, the cell cannot write there). */
function fenceMarker(usesDir: string, useId: string): string {
  return `${useRecordDir(usesDir, useId)}.fenced`;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * `uses/` root-owned 0711 (not listable by the cell), then `uses/<useId>/` owned by `owner` (the
 * user the exec runs as: the acting seat), 0700: another seat can neither read nor forge it.
 */
export async function prepareUseRecord(usesDir: string, useId: string, owner: CellUser = CELL_HARNESS_USER): Promise<void> {
  await mkdir(usesDir, { mode: 0o711 }).catch((error: unknown) => {
    if (errnoCode(error) !== 'EEXIST') throw error;
  });
  const dir = useRecordDir(usesDir, useId);
  // An existing directory is kept as it is: it may hold a reconciler's fence.
  await mkdir(dir, { mode: 0o700 }).catch((error: unknown) => {
    if (errnoCode(error) !== 'EEXIST') throw error;
  });
  const stat = await lstat(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (stat.uid !== owner.uid || stat.gid !== owner.gid) await chown(dir, owner.uid, owner.gid);
}

/**
 * Makes `run/` as root before the wrapper does: afterwards the wrapper refuses to
 * start (exit 125). True when this call fenced the use (the action never ran); false
 * when the wrapper's `run/` was there first (it started), or the directory is gone.
 */
export async function fenceUseRecord(usesDir: string, useId: string): Promise<boolean> {
  const dir = useRecordDir(usesDir, useId);
  try {
    await mkdir(dir, { mode: 0o700 });
    await chown(dir, CELL_UID, CELL_GID);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  }
  try {
    await mkdir(path.join(dir, 'run'), { mode: 0o700 });
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw error;
  }
  // A crash before the marker leaves `run/` without exit: read later as started, settled unknown (never re-run).
  await writeFile(fenceMarker(usesDir, useId), '', { mode: 0o600 });
  return true;
}

/** Reads a file of the record without following links, at most `max` bytes; undefined when absent. */
async function readPlain(file: string, max: number): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    // The cell writes its record and could plant a link in it: a link is as good as no file (never followed, never fatal).
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ELOOP') return undefined;
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return undefined;
    const buffer = Buffer.alloc(Math.min(stat.size, max));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function intOf(bytes: Buffer | undefined): number | undefined {
  if (bytes === undefined) return undefined;
  const text = bytes.toString('utf8').trim();
  return /^\d{1,10}$/.test(text) ? Number(text) : undefined;
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    (error: unknown) => {
      if (errnoCode(error) === 'ENOENT') return false;
      throw error;
    },
  );
}

/** The record of one use, or undefined when its directory does not exist on this host. */
export async function readUseRecord(usesDir: string, useId: string, maxOutputBytes: number): Promise<UseRecord | undefined> {
  const dir = useRecordDir(usesDir, useId);
  if (!(await exists(dir))) return undefined;
  const file = (name: string) => path.join(dir, name);
  const exitCode = intOf(await readPlain(file('exit'), 16));
  return {
    started: await exists(file('run')),
    fenced: await exists(fenceMarker(usesDir, useId)),
    exit_code: exitCode,
    timed_out: await exists(file('timed_out')),
    pgid: intOf(await readPlain(file('pgid'), 16)),
    stdout: (await readPlain(file('stdout'), maxOutputBytes)) ?? Buffer.alloc(0),
    stderr: (await readPlain(file('stderr'), maxOutputBytes)) ?? Buffer.alloc(0),
    stdout_rest: intOf(await readPlain(file('stdout.rest'), 32)),
    stderr_rest: intOf(await readPlain(file('stderr.rest'), 32)),
  };
}

/** Removes a use's record once its completion is in the log (idempotent). */
export async function removeUseRecord(usesDir: string, useId: string): Promise<void> {
  await rm(useRecordDir(usesDir, useId), { recursive: true, force: true });
  await rm(fenceMarker(usesDir, useId), { force: true });
}
