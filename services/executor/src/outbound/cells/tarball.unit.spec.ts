import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinTarballs, paxGlobalComment, tarMembersLength, TarballError } from './tarball.js';

/**
 * The host-side join of a checkpoint's per-user parts. The parts here are made by the host's
 * tar (ustar, like the cell's busybox tar), and the joined archive is read back by it.
 */

let dir: string;

/** `tar -cf -` of `members` in `dir`, as the host's tar writes it. */
const tar = (...members: string[]) => new Uint8Array(execFileSync('tar', ['--format=ustar', '-cf', '-', '-C', dir, ...members]));
const list = (archive: Uint8Array) => execFileSync('tar', ['-tf', '-'], { input: archive, encoding: 'utf8' }).split('\n').filter(Boolean);
const content = (archive: Uint8Array, member: string) => execFileSync('tar', ['-xOf', '-', member], { input: archive, encoding: 'utf8' });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'writ-tarball-'));
  await mkdir(path.join(dir, 'src'));
  await writeFile(path.join(dir, 'src/a.ts'), 'export {}\n');
  await mkdir(path.join(dir, 'home/agent-1'), { recursive: true });
  // A file of exactly one block of zero bytes: its data looks like an end of archive, and must not end the walk.
  await writeFile(path.join(dir, 'home/agent-1/zeros.bin'), Buffer.alloc(512));
  await writeFile(path.join(dir, 'home/agent-1/memory.md'), 'remember\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('joining per-user tarballs into one checkpoint', () => {
  it('given the project part and a home part, when joined under a pax comment, then one archive lists every member of both, in order, with their content, and the comment is no member', () => {
    const joined = joinTarballs([tar('src'), tar('home/agent-1')], paxGlobalComment('writ checkpoint of cell task-1, nonce 00ff'));
    expect(list(joined)).toEqual([...list(tar('src')), ...list(tar('home/agent-1'))]);
    expect(list(joined).slice(0, 2)).toEqual(['src/', 'src/a.ts']);
    expect(list(joined).filter((name) => name.startsWith('home/')).sort()).toEqual(['home/agent-1/', 'home/agent-1/memory.md', 'home/agent-1/zeros.bin']);
    expect(content(joined, 'home/agent-1/memory.md')).toBe('remember\n');
    expect(content(joined, 'src/a.ts')).toBe('export {}\n');
    expect(Buffer.from(joined).includes(Buffer.from('comment=writ checkpoint of cell task-1, nonce 00ff\n'))).toBe(true);
  });

  it('given a part whose last member is a block of zero bytes, then its members end after that data, not inside it', () => {
    const part = tar('home/agent-1/zeros.bin');
    expect(tarMembersLength(part)).toBe(1024);
    const joined = joinTarballs([part, tar('src')]);
    expect(list(joined)).toEqual(['home/agent-1/zeros.bin', 'src/', 'src/a.ts']);
    expect(Buffer.from(execFileSync('tar', ['-xOf', '-', 'home/agent-1/zeros.bin'], { input: joined }))).toEqual(Buffer.alloc(512));
  });

  it('given a truncated part or one without an end of archive, then TarballError (nothing half-joined is stored)', () => {
    const part = tar('src');
    expect(() => joinTarballs([part.subarray(0, 700)])).toThrow(TarballError);
    expect(() => joinTarballs([part.subarray(0, tarMembersLength(part))])).toThrow(TarballError);
    const bad = Buffer.from(part);
    bad.write('9', 124, 'latin1');
    expect(() => tarMembersLength(bad)).toThrow(TarballError);
  });

  it('given a pax comment, then its record length counts its own digits (readers check it), and a multi-line comment is refused', () => {
    const header = paxGlobalComment('x'.repeat(90));
    const record = Buffer.from(header.subarray(512)).toString('latin1').replace(/\0+$/, '');
    const [length] = record.split(' ');
    expect(Number(length)).toBe(Buffer.byteLength(record));
    expect(() => paxGlobalComment('a\nb')).toThrow(TarballError);
  });
});
