import { execFile } from 'node:child_process';
import { lstat, open, readdir, readFile, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { CellError } from './cell-errors.js';

/**
 * Disk quota of a cell's workspace (opt-in, `diskQuotaBytes`): the workspace directory is
 * the mount point of its own sparse ext4 image (`<dir>/../workspace.img`), loop-mounted
 * `nosuid,nodev`. A cell that fills it meets ENOSPC inside its own file system; the host's
 * file system loses at most the image's size. Needs root (mount) and e2fsprogs (mkfs.ext4).
 */

const run = promisify(execFile);

/** The image file beside a workspace directory. */
export function workspaceImagePath(workspaceDir: string): string {
  return path.join(path.dirname(workspaceDir), 'workspace.img');
}

async function tool(file: string, args: readonly string[], what: string): Promise<void> {
  try {
    await run(file, args as string[], { timeout: 60_000 });
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    const stderr = String(failure.stderr ?? '').trim();
    const reason =
      failure.code === 'ENOENT'
        ? `${file} is not installed (install e2fsprogs / util-linux)`
        : failure.code === 'EACCES' || /permission denied|only root|not permitted/i.test(stderr)
          ? `${file} lacks the permission (loop mounts need root / CAP_SYS_ADMIN)`
          : `${file} failed: ${stderr || failure.message}`;
    throw new CellError('CELL_QUOTA_UNAVAILABLE', `${what}: ${reason}; unset WRIT_CELL_DISK_QUOTA_BYTES to run without a disk quota`, {
      cause: error,
      details: { tool: file, stderr: stderr.slice(0, 512) },
    });
  }
}

/** True when `dir` is the root of a mount (its device differs from its parent's). */
export async function isMountPoint(dir: string): Promise<boolean> {
  try {
    const [self, parent] = await Promise.all([lstat(dir), lstat(path.dirname(dir))]);
    return self.dev !== parent.dev;
  } catch {
    return false;
  }
}

/**
 * Makes `workspaceDir` a mount of its image, creating the image (sparse, `quotaBytes`) when
 * it does not exist yet. Idempotent: an already mounted workspace is left as it is, and an
 * existing image (e.g. after a reboot) is mounted again with its content. True when it mounted now.
 */
export async function mountWorkspaceImage(workspaceDir: string, quotaBytes: number): Promise<boolean> {
  if (await isMountPoint(workspaceDir)) return false;
  const image = workspaceImagePath(workspaceDir);
  // A workspace made before the quota was configured keeps its content and stays unbounded:
  // mounting over it would hide its files from the host while the cell still wrote to them.
  if (!(await pathExists(image)) && (await readdir(workspaceDir)).length > 0) return false;
  let created = false;
  try {
    const handle = await open(image, 'wx', 0o600);
    created = true;
    try {
      await handle.truncate(quotaBytes);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new CellError('CELL_QUOTA_UNAVAILABLE', `could not create the workspace image ${image}`, { cause: error, details: { image } });
    }
  }
  try {
    // -m 0: no blocks reserved for root (nothing in the cell runs as root).
    if (created) await tool('mkfs.ext4', ['-q', '-F', '-m', '0', image], `formatting the workspace image ${image}`);
    await tool('mount', ['-o', 'loop,nosuid,nodev', image, workspaceDir], `mounting the workspace image ${image}`);
  } catch (error) {
    if (created) await rm(image, { force: true }).catch(() => undefined);
    throw error;
  }
  // A fresh file system's lost+found is not the task's: the cell starts from an empty workspace.
  if (created) await rmdir(path.join(workspaceDir, 'lost+found')).catch(() => undefined);
  return true;
}

async function pathExists(target: string): Promise<boolean> {
  return lstat(target).then(
    () => true,
    () => false,
  );
}

/** Mounts the (already mounted) workspace of a pooled slot at a task's workspace too, then drops the slot's mount. */
export async function moveWorkspaceMount(from: string, to: string): Promise<void> {
  // rename(2) of a mount point is EBUSY; a bind keeps the same file system (and the cell's mount of it).
  await tool('mount', ['--bind', from, to], `binding the workspace ${from} at ${to}`);
  await tool('umount', [from], `unmounting the pooled workspace ${from}`);
}

/** Mount points at or below `dir` (from /proc/self/mountinfo), deepest first. */
async function mountsUnder(dir: string): Promise<string[]> {
  let info: string;
  try {
    info = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const unescape = (value: string) => value.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  const found = info
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((target): target is string => target !== undefined)
    .map(unescape)
    .filter((target) => target === dir || target.startsWith(`${dir}/`));
  return [...new Set(found)].sort((a, b) => b.length - a.length);
}

/**
 * Unmounts every workspace image mounted at or below `dir` (a task's or a pool slot's
 * directory) so that it can be deleted; the loop device goes with its last mount.
 */
export async function releaseWorkspaceMounts(dir: string): Promise<void> {
  for (const target of await mountsUnder(dir)) {
    // Each mount (a bind stacked on the same point included) is dropped one at a time.
    while ((await mountsUnder(target)).includes(target)) {
      await tool('umount', [target], `unmounting the workspace ${target}`);
    }
  }
}
