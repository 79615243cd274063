import { createHash } from 'node:crypto';
import { constants, type BigIntStats } from 'node:fs';
import { lstat, open, readdir, readlink, stat as statPath, type FileHandle } from 'node:fs/promises';
import { sha256Hex } from '@writ/crypto';
import { readGitRef } from './git-head.js';
import type { WorkspaceObserverPort, WorkspaceWalk } from '../application/ports.js';

/** Bounds of one walk (one pass over every requested resource). */
export interface WalkLimits {
  /** Directory entries visited at most; past it the directory being listed (and its ancestors) is `dir-partial:`. */
  readonly maxEntries: number;
  /** Directory levels descended below a resource; a deeper directory is fingerprinted by its metadata. */
  readonly maxDepth: number;
  /** File bytes hashed at most; a file past the budget is fingerprinted by its metadata (`stat:`). */
  readonly maxBytes: number;
}

export const ABSENT = 'absent';
const REFUSED = 'refused';
/** `Fingerprint` (kernel) holds at most 256 characters. */
const MAX_FINGERPRINT = 256;
const READ_CHUNK = 1024 * 1024;

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

interface Budget {
  entries: number;
  bytes: number;
  stable: boolean;
}

interface Found {
  readonly fingerprint: string;
  /** A bound cut the walk below this entry. */
  readonly partial: boolean;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * Everything is reached through an open directory descriptor (`/proc/self/fd/<fd>/<name>`,
 * like `openat`), and every open uses O_NOFOLLOW: a segment swapped for a symlink while the
 * walk runs is never followed out of the workspace, it fails the open instead.
 */
function at(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

/** `symlink:<target>`, or `symlink-sha256:<hex of the target>` when the target is too long to carry. */
export function symlinkFingerprint(target: string): string {
  const plain = `symlink:${target}`;
  return plain.length <= MAX_FINGERPRINT ? plain : `symlink-sha256:${sha256Hex(target)}`;
}

/** Identity and times of an inode: what a metadata fingerprint hashes. */
function statIdentity(stat: BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.mode}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

/** Size and times that move when content is written (compared before and after reading). */
function sameContentStamp(a: BigIntStats, b: BigIntStats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

function specialKind(stat: BigIntStats): string {
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSocket()) return 'socket';
  if (stat.isCharacterDevice()) return 'char-device';
  if (stat.isBlockDevice()) return 'block-device';
  return 'other';
}

/**
 * Fingerprints resources of a task's workspace on the host, read-only, for the state
 * witness (the cell's bind mount: `<cellsRoot>/<taskId>/workspace`):
 *
 * - a regular file: `sha256:<hex of its content>`;
 * - a directory: `dir:<sha256 of its sorted listing>` where the listing is the JSON array of
 *   `[name, child fingerprint]` (children recursively, files by content);
 * - a symlink: `symlink:<target>` (never followed), a segment on the way that is a symlink:
 *   `refused`;
 * - nothing there (or a missing workspace): `absent`; a socket, FIFO or device: `special:<kind>`.
 *
 * Bounds per walk: past `maxBytes` a file is `stat:<sha256 of dev, inode, mode, size, mtime,
 * ctime>`; past `maxDepth` or `maxEntries` a directory is `dir-partial:<…>` (what was walked,
 * plus the metadata of what was not), and so is every directory above it.
 */
export class WorkspaceObserver implements WorkspaceObserverPort {
  readonly #workspaceOf: (taskId: string) => string;
  readonly #limits: WalkLimits;

  constructor(workspaceOf: (taskId: string) => string, limits: WalkLimits) {
    this.#workspaceOf = workspaceOf;
    this.#limits = limits;
  }

  async walk(taskId: string, paths: ReadonlyArray<readonly string[]>): Promise<WorkspaceWalk> {
    if (paths.length === 0) return { fingerprints: [], stable: true };
    const budget: Budget = { entries: this.#limits.maxEntries, bytes: this.#limits.maxBytes, stable: true };
    let root: FileHandle;
    try {
      root = await open(this.#workspaceOf(taskId), DIR_FLAGS);
    } catch (error) {
      const code = errnoCode(error);
      // No workspace yet (no cell was ever opened): nothing is there.
      if (code === 'ENOENT') return { fingerprints: paths.map(() => ABSENT), stable: true };
      // The workspace is a symlink or not a directory: never followed, never read.
      if (code === 'ELOOP' || code === 'ENOTDIR') return { fingerprints: paths.map(() => REFUSED), stable: true };
      throw error;
    }
    try {
      const fingerprints: string[] = [];
      for (const segments of paths) fingerprints.push(await this.#resource(root.fd, segments, budget));
      return { fingerprints, stable: budget.stable };
    } finally {
      await root.close();
    }
  }

  async refs(taskId: string, repos: ReadonlyArray<{ readonly segments: readonly string[]; readonly ref: string }>): Promise<string[]> {
    return Promise.all(
      repos.map(async ({ segments, ref }) => {
        const found = await readGitRef(this.#workspaceOf(taskId), segments.join('/'), ref);
        return found === undefined ? ABSENT : `git:${ref}=${found.commit ?? 'unborn'}`;
      }),
    );
  }

  /** Walks down `segments` from the workspace, one opened directory at a time. */
  async #resource(rootFd: number, segments: readonly string[], budget: Budget): Promise<string> {
    if (segments.length === 0) return (await this.#directory(rootFd, 0, budget)).fingerprint;
    const opened: FileHandle[] = [];
    try {
      let fd = rootFd;
      for (const segment of segments.slice(0, -1)) {
        let stat: BigIntStats;
        try {
          stat = await lstat(at(fd, segment), { bigint: true });
        } catch (error) {
          if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return ABSENT;
          throw error;
        }
        if (stat.isSymbolicLink()) return REFUSED;
        if (!stat.isDirectory()) return ABSENT;
        const dir = await this.#openDirectory(fd, segment, stat, budget);
        if (dir === undefined) return ABSENT;
        opened.push(dir);
        fd = dir.fd;
      }
      const found = await this.#entry(fd, segments.at(-1) as string, 0, budget, false);
      return found.fingerprint;
    } finally {
      for (const handle of opened.reverse()) await handle.close();
    }
  }

  /** One directory entry: file, directory, symlink or special; `inListing` = it was just listed, so vanishing means change. */
  async #entry(parentFd: number, name: string, depth: number, budget: Budget, inListing: boolean): Promise<Found> {
    let stat: BigIntStats;
    try {
      stat = await lstat(at(parentFd, name), { bigint: true });
    } catch (error) {
      if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') {
        if (inListing) budget.stable = false;
        return { fingerprint: ABSENT, partial: false };
      }
      throw error;
    }
    if (stat.isSymbolicLink()) {
      try {
        return { fingerprint: symlinkFingerprint(await readlink(at(parentFd, name))), partial: false };
      } catch {
        budget.stable = false;
        return { fingerprint: ABSENT, partial: false };
      }
    }
    if (stat.isFile()) return { fingerprint: await this.#file(parentFd, name, stat, budget), partial: false };
    if (stat.isDirectory()) {
      if (depth > this.#limits.maxDepth) return { fingerprint: `dir-partial:${sha256Hex(statIdentity(stat))}`, partial: true };
      const dir = await this.#openDirectory(parentFd, name, stat, budget);
      if (dir === undefined) return { fingerprint: ABSENT, partial: false };
      try {
        return await this.#directory(dir.fd, depth, budget);
      } finally {
        await dir.close();
      }
    }
    return { fingerprint: `special:${specialKind(stat)}`, partial: false };
  }

  /** Opens a directory entry without following a link; a different inode than was lstat'ed is a change. */
  async #openDirectory(parentFd: number, name: string, stat: BigIntStats, budget: Budget): Promise<FileHandle | undefined> {
    let dir: FileHandle;
    try {
      dir = await open(at(parentFd, name), DIR_FLAGS);
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') {
        budget.stable = false;
        return undefined;
      }
      throw error;
    }
    const opened = await dir.stat({ bigint: true });
    if (opened.ino !== stat.ino || opened.dev !== stat.dev) budget.stable = false;
    return dir;
  }

  async #directory(fd: number, depth: number, budget: Budget): Promise<Found> {
    const stamp = await statOf(fd);
    const names = (await readdir(at(fd))).sort();
    const listing: Array<[string, string]> = [];
    let partial = false;
    for (const name of names) {
      if (budget.entries <= 0) {
        // The rest of this directory is not walked: its metadata stands for it.
        partial = true;
        listing.push(['', `dir-partial:${sha256Hex(statIdentity(stamp))}`]);
        break;
      }
      budget.entries -= 1;
      const child = await this.#entry(fd, name, depth + 1, budget, true);
      listing.push([name, child.fingerprint]);
      partial ||= child.partial;
    }
    const after = await statOf(fd);
    // Entries added, removed or renamed while listing move the directory's mtime / ctime.
    if (!sameContentStamp(stamp, after)) budget.stable = false;
    return { fingerprint: `${partial ? 'dir-partial' : 'dir'}:${sha256Hex(JSON.stringify(listing))}`, partial };
  }

  /** `sha256:<hex>` of the content, read through a descriptor opened without following links. */
  async #file(parentFd: number, name: string, stat: BigIntStats, budget: Budget): Promise<string> {
    if (stat.size > BigInt(budget.bytes)) return `stat:${sha256Hex(statIdentity(stat))}`;
    let handle: FileHandle;
    try {
      handle = await open(at(parentFd, name), FILE_FLAGS);
    } catch (error) {
      // Replaced (by a symlink: ELOOP) or removed since the lstat: a change under the walk.
      if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ELOOP') {
        budget.stable = false;
        return ABSENT;
      }
      throw error;
    }
    try {
      const before = await handle.stat({ bigint: true });
      if (!before.isFile() || before.ino !== stat.ino) {
        budget.stable = false;
        return ABSENT;
      }
      const hash = createHash('sha256');
      const buffer = Buffer.alloc(Math.max(1, Math.min(READ_CHUNK, Number(before.size))));
      let read = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        read += bytesRead;
        hash.update(buffer.subarray(0, bytesRead));
        if (read > budget.bytes) break;
      }
      budget.bytes -= read;
      const after = await handle.stat({ bigint: true });
      // Written while being read (or grown past what was stat'ed): not a stable state.
      if (!sameContentStamp(before, after) || BigInt(read) !== after.size) budget.stable = false;
      return `sha256:${hash.digest('hex')}`;
    } finally {
      await handle.close();
    }
  }
}

/** The directory an open descriptor holds (`stat` follows the magic link to it). */
function statOf(fd: number): Promise<BigIntStats> {
  return statPath(at(fd), { bigint: true });
}
