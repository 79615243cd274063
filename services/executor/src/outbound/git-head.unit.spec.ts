import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readGitHead } from './git-head.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'writ-git-head-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(relative: string, content: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, relative)), { recursive: true });
  await writeFile(path.join(root, relative), content);
}

describe('readGitHead: HEAD as the repository files say, never through a link', () => {
  it('given no .git, then undefined', async () => {
    expect(await readGitHead(root, '.')).toBeUndefined();
  });

  it('given an unborn branch, then its ref and no commit', async () => {
    await put('.git/HEAD', 'ref: refs/heads/main\n');
    expect(await readGitHead(root, '.')).toEqual({ ref: 'refs/heads/main', commit: null });
  });

  it('given a loose ref, then its commit; given only packed-refs, then the packed commit', async () => {
    await put('repo/.git/HEAD', 'ref: refs/heads/writ/x\n');
    await put('repo/.git/packed-refs', `# pack-refs with: peeled\n${B} refs/heads/writ/x\n`);
    expect(await readGitHead(root, 'repo')).toEqual({ ref: 'refs/heads/writ/x', commit: B });
    await put('repo/.git/refs/heads/writ/x', `${A}\n`);
    expect(await readGitHead(root, 'repo')).toEqual({ ref: 'refs/heads/writ/x', commit: A });
  });

  it('given a detached HEAD, then no ref and the commit', async () => {
    await put('.git/HEAD', `${A}\n`);
    expect(await readGitHead(root, '.')).toEqual({ ref: null, commit: A });
  });

  it('given a ref that climbs out, then no ref is followed', async () => {
    await put('.git/HEAD', 'ref: refs/../../../etc/passwd\n');
    expect(await readGitHead(root, '.')).toEqual({ ref: null, commit: null });
  });

  it('given .git or the ref file as a symlink, then it is not followed', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'writ-git-head-out-'));
    try {
      await writeFile(path.join(outside, 'HEAD'), `${A}\n`);
      await symlink(outside, path.join(root, '.git'));
      expect(await readGitHead(root, '.')).toBeUndefined();
      await rm(path.join(root, '.git'));
      await put('.git/HEAD', 'ref: refs/heads/main\n');
      await mkdir(path.join(root, '.git/refs/heads'), { recursive: true });
      await writeFile(path.join(outside, 'main'), `${B}\n`);
      await symlink(path.join(outside, 'main'), path.join(root, '.git/refs/heads/main'));
      expect(await readGitHead(root, '.')).toEqual({ ref: 'refs/heads/main', commit: null });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
