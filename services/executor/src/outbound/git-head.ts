import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** A repository's HEAD as its files say: the ref it names (null when detached) and the commit (null before the first commit, or unreadable). */
export interface GitHead {
  readonly ref: string | null;
  readonly commit: string | null;
}

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** A ref name git would write: `refs/...`, whole segments, no `..`, no control characters. */
const REF_NAME = /^refs\/(?:[A-Za-z0-9._+@-]+\/)*[A-Za-z0-9._+@-]+$/;
/** HEAD, a loose ref and packed-refs are small; anything larger is not one of them. */
const MAX_REF_FILE_BYTES = 1024 * 1024;

/**
 * Reads `<repoDir>/.git/HEAD` and the ref it names (loose, else `packed-refs`) from the host,
 * every segment opened without following a symlink (`O_NOFOLLOW` on each directory and
 * file): the cell wrote these files and may have planted links. Undefined when `.git` is not
 * a plain directory holding a HEAD (no repository there, a `.git` file of a worktree, a link).
 */
export async function readGitHead(workspaceDir: string, repoRelative: string): Promise<GitHead | undefined> {
  const segments = repoRelative.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return undefined;
  const gitDir = [...segments, '.git'];
  const head = await readPlain(workspaceDir, [...gitDir, 'HEAD']);
  if (head === undefined) return undefined;
  const text = head.trim();
  if (OBJECT_ID.test(text)) return { ref: null, commit: text };
  const named = /^ref: (\S+)$/.exec(text)?.[1];
  if (named === undefined || !REF_NAME.test(named) || named.split('/').some((segment) => segment === '..' || segment === '.')) return { ref: null, commit: null };
  const loose = (await readPlain(workspaceDir, [...gitDir, ...named.split('/')]))?.trim();
  if (loose !== undefined && OBJECT_ID.test(loose)) return { ref: named, commit: loose };
  const packed = await readPlain(workspaceDir, [...gitDir, 'packed-refs']);
  for (const line of (packed ?? '').split('\n')) {
    const [id, name] = line.trim().split(' ');
    if (name === named && id !== undefined && OBJECT_ID.test(id)) return { ref: named, commit: id };
  }
  return { ref: named, commit: null };
}

/**
 * The commit a ref names in the repository at `repoRelative` (`HEAD`, or a full ref name such as
 * `refs/heads/main`, loose or packed), read like `readGitHead`: null when the ref does not exist
 * (an unborn branch), undefined when there is no plain repository there.
 */
export async function readGitRef(workspaceDir: string, repoRelative: string, ref: string): Promise<{ readonly commit: string | null } | undefined> {
  if (ref === 'HEAD') {
    const head = await readGitHead(workspaceDir, repoRelative);
    return head === undefined ? undefined : { commit: head.commit };
  }
  const segments = repoRelative.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..') || !REF_NAME.test(ref) || ref.split('/').some((segment) => segment === '..' || segment === '.')) return undefined;
  const gitDir = [...segments, '.git'];
  if ((await readPlain(workspaceDir, [...gitDir, 'HEAD'])) === undefined) return undefined;
  const loose = (await readPlain(workspaceDir, [...gitDir, ...ref.split('/')]))?.trim();
  if (loose !== undefined && OBJECT_ID.test(loose)) return { commit: loose };
  for (const line of ((await readPlain(workspaceDir, [...gitDir, 'packed-refs'])) ?? '').split('\n')) {
    const [id, name] = line.trim().split(' ');
    if (name === ref && id !== undefined && OBJECT_ID.test(id)) return { commit: id };
  }
  return { commit: null };
}

/** A regular file below `root`, reached through plain directories only; undefined otherwise. */
async function readPlain(root: string, segments: readonly string[]): Promise<string | undefined> {
  let dir: FileHandle | undefined = await open(root, constants.O_RDONLY | constants.O_DIRECTORY).catch(() => undefined);
  if (dir === undefined) return undefined;
  try {
    for (const [index, segment] of segments.entries()) {
      const last = index === segments.length - 1;
      const flags = constants.O_RDONLY | constants.O_NOFOLLOW | (last ? constants.O_NONBLOCK : constants.O_DIRECTORY);
      // Through the open directory's descriptor, like openat(2): a segment swapped for a link fails here.
      const next: FileHandle | undefined = await open(path.join(`/proc/self/fd/${dir.fd}`, segment), flags).catch(() => undefined);
      await dir.close();
      dir = next;
      if (dir === undefined) return undefined;
    }
    const stat = await dir.stat();
    if (!stat.isFile() || stat.size > MAX_REF_FILE_BYTES) return undefined;
    return (await dir.readFile()).toString('utf8');
  } finally {
    await dir?.close().catch(() => undefined);
  }
}
