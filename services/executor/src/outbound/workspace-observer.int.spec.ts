import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sha256Hex } from '@writ/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { symlinkFingerprint, WorkspaceObserver, type WalkLimits } from './workspace-observer.js';

/**
 * The observer against a real directory tree on this host (no mocks of the file system):
 * `<root>/<task>/workspace` as the cell runtime lays it out.
 */

let root: string;
const LIMITS: WalkLimits = { maxEntries: 10_000, maxDepth: 32, maxBytes: 64 * 1024 * 1024 };
const workspaceOf = (taskId: string) => path.join(root, taskId, 'workspace');
const observer = (limits: Partial<WalkLimits> = {}) => new WorkspaceObserver(workspaceOf, { ...LIMITS, ...limits });

async function workspace(taskId: string, files: Record<string, string> = {}): Promise<string> {
  const dir = workspaceOf(taskId);
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

async function walk(taskId: string, ...paths: string[][]): Promise<string[]> {
  const result = await observer().walk(taskId, paths);
  expect(result.stable).toBe(true);
  return [...result.fingerprints];
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'writ-observe-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('WorkspaceObserver.refs (repo: resources of the state witness)', () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);

  it('given a repository, then HEAD and named refs read loose or packed; an unborn branch and no repository say so', async () => {
    // given the workspace's repository on main (loose) with a packed tag, and a nested repository without commits
    await workspace('t-git', {
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.git/refs/heads/main': `${A}\n`,
      '.git/packed-refs': `# pack-refs with: peeled fully-peeled sorted\n${B} refs/tags/v1\n`,
      'libs/ui/.git/HEAD': 'ref: refs/heads/main\n',
    });
    // when
    const refs = await observer().refs('t-git', [
      { segments: [], ref: 'HEAD' },
      { segments: [], ref: 'refs/heads/main' },
      { segments: [], ref: 'refs/tags/v1' },
      { segments: [], ref: 'refs/heads/other' },
      { segments: ['libs', 'ui'], ref: 'HEAD' },
      { segments: ['docs'], ref: 'HEAD' },
    ]);
    // then
    expect(refs).toEqual([`git:HEAD=${A}`, `git:refs/heads/main=${A}`, `git:refs/tags/v1=${B}`, 'git:refs/heads/other=unborn', 'git:HEAD=unborn', 'absent']);
  });

  it('given a .git that is a symlink planted by the cell, then it is not followed: no repository there', async () => {
    const dir = await workspace('t-git-link', { 'elsewhere/HEAD': 'ref: refs/heads/main\n', [`elsewhere/refs/heads/main`]: `${A}\n` });
    await symlink(path.join(dir, 'elsewhere'), path.join(dir, '.git'));
    expect(await observer().refs('t-git-link', [{ segments: [], ref: 'refs/heads/main' }])).toEqual(['absent']);
  });
});

describe('WorkspaceObserver', () => {
  it('given a file, then sha256 of its content; given nothing there, then absent', async () => {
    await workspace('t-file', { 'out.txt': 'hello\n' });
    expect(await walk('t-file', ['out.txt'], ['missing.txt'], ['missing', 'deeper.txt'], ['out.txt', 'under-a-file'])).toEqual([
      `sha256:${sha256Hex('hello\n')}`,
      'absent',
      'absent',
      'absent',
    ]);
  });

  it('given a task without a workspace yet, then every path is absent', async () => {
    expect(await walk('t-none', ['build'], [])).toEqual(['absent', 'absent']);
  });

  it('given a directory, then dir:<hash of its sorted listing>, which changes when anything below it changes', async () => {
    const dir = await workspace('t-dir', { 'build/a.o': 'a', 'build/sub/b.o': 'b' });
    const [first] = await walk('t-dir', ['build']);
    const listing = JSON.stringify([
      ['a.o', `sha256:${sha256Hex('a')}`],
      ['sub', `dir:${sha256Hex(JSON.stringify([['b.o', `sha256:${sha256Hex('b')}`]]))}`],
    ]);
    expect(first).toBe(`dir:${sha256Hex(listing)}`);
    // the same tree observed again is the same fingerprint
    expect(await walk('t-dir', ['build'])).toEqual([first]);
    // a nested change moves it
    await writeFile(path.join(dir, 'build/sub/b.o'), 'b2');
    const [second] = await walk('t-dir', ['build']);
    expect(second).not.toBe(first);
    // and the workspace itself is observed as a directory too
    expect((await walk('t-dir', []))[0]).toMatch(/^dir:[0-9a-f]{64}$/);
  });

  it('given a symlink, then symlink:<target>, never followed: its target may change without moving the fingerprint', async () => {
    const outside = path.join(root, 'outside.txt');
    await writeFile(outside, 'secret one');
    const dir = await workspace('t-link');
    await symlink(outside, path.join(dir, 'link'));
    await symlink('../../outside-dir', path.join(dir, 'reldir'));
    const [link, rel] = await walk('t-link', ['link'], ['reldir']);
    expect(link).toBe(`symlink:${outside}`);
    expect(rel).toBe('symlink:../../outside-dir');
    await writeFile(outside, 'secret two');
    expect(await walk('t-link', ['link'])).toEqual([link]);
    // inside a directory listing a link is its target text too
    await mkdir(path.join(dir, 'd'));
    await symlink('/etc/passwd', path.join(dir, 'd', 'p'));
    const [d] = await walk('t-link', ['d']);
    expect(d).toBe(`dir:${sha256Hex(JSON.stringify([['p', 'symlink:/etc/passwd']]))}`);
    // a target too long to carry is hashed
    expect(symlinkFingerprint('x'.repeat(300))).toBe(`symlink-sha256:${sha256Hex('x'.repeat(300))}`);
  });

  it('given a path that goes through a symlink, then refused: nothing behind the link is read', async () => {
    const elsewhere = path.join(root, 'elsewhere');
    await mkdir(elsewhere, { recursive: true });
    await writeFile(path.join(elsewhere, 'f.txt'), 'not the workspace');
    const dir = await workspace('t-through');
    await symlink(elsewhere, path.join(dir, 'via'));
    expect(await walk('t-through', ['via', 'f.txt'])).toEqual(['refused']);
  });

  it('given a workspace that is itself a symlink, then every path is refused', async () => {
    const real = await workspace('t-real', { 'a.txt': 'a' });
    await mkdir(path.join(root, 't-swapped'), { recursive: true });
    await symlink(real, workspaceOf('t-swapped'));
    expect(await walk('t-swapped', ['a.txt'], [])).toEqual(['refused', 'refused']);
  });

  it('given a FIFO, then special:fifo, without opening it', async () => {
    const dir = await workspace('t-fifo');
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    expect(await walk('t-fifo', ['pipe'])).toEqual(['special:fifo']);
  });

  it('given the bounds, then a file past the byte budget is stat:, a directory past the entries or depth is dir-partial:', async () => {
    await workspace('t-bounds', { 'big.bin': 'x'.repeat(1024), 'many/1': '1', 'many/2': '2', 'many/3': '3', 'deep/a/b/c.txt': 'c' });
    const big = await observer({ maxBytes: 100 }).walk('t-bounds', [['big.bin']]);
    expect(big.fingerprints[0]).toMatch(/^stat:[0-9a-f]{64}$/);
    const many = await observer({ maxEntries: 2 }).walk('t-bounds', [['many']]);
    expect(many.fingerprints[0]).toMatch(/^dir-partial:[0-9a-f]{64}$/);
    const deep = await observer({ maxDepth: 1 }).walk('t-bounds', [['deep']]);
    expect(deep.fingerprints[0]).toMatch(/^dir-partial:[0-9a-f]{64}$/);
    const whole = await observer().walk('t-bounds', [['deep']]);
    expect(whole.fingerprints[0]).toMatch(/^dir:[0-9a-f]{64}$/);
  });
});
