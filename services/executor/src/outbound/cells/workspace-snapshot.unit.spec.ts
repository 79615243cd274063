import { sha256Hex } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { diffSnapshots, type SnapshotEntry, type WorkspaceSnapshot } from './workspace-snapshot.js';

const file = (content: string, mode = 0o644): SnapshotEntry => ({ kind: 'file', sha256: sha256Hex(content), size: Buffer.byteLength(content), mode });
const link = (target: string): SnapshotEntry => ({ kind: 'symlink', target, sha256: sha256Hex(target), size: Buffer.byteLength(target), mode: 0o777 });
const snapshot = (entries: Record<string, SnapshotEntry>): WorkspaceSnapshot => ({ entries: new Map(Object.entries(entries)), skipped: [] });

describe('diffSnapshots', () => {
  it('given identical snapshots, when diffed, then nothing changed', () => {
    const s = snapshot({ 'a.txt': file('a'), l: link('a.txt') });
    expect(diffSnapshots(s, s)).toEqual({ added: [], modified: [], deleted: [] });
  });

  it('given adds, edits and removals, when diffed, then each is listed with its before/after hashes, sorted by path', () => {
    const before = snapshot({ 'keep.txt': file('k'), 'edit.txt': file('old'), 'gone.txt': file('g'), 'mode.sh': file('x', 0o644), link: link('a') });
    const after = snapshot({ 'keep.txt': file('k'), 'edit.txt': file('new'), 'mode.sh': file('x', 0o755), link: link('b'), 'z/new.txt': file('n'), 'b.txt': file('b') });
    const diff = diffSnapshots(before, after);
    expect(diff.added.map((c) => [c.path, c.before_sha256, c.after_sha256])).toEqual([
      ['b.txt', null, sha256Hex('b')],
      ['z/new.txt', null, sha256Hex('n')],
    ]);
    expect(diff.modified.map((c) => [c.path, c.before_sha256, c.after_sha256])).toEqual([
      ['edit.txt', sha256Hex('old'), sha256Hex('new')],
      ['link', sha256Hex('a'), sha256Hex('b')],
      ['mode.sh', sha256Hex('x'), sha256Hex('x')],
    ]);
    expect(diff.deleted.map((c) => [c.path, c.before_sha256, c.after_sha256])).toEqual([['gone.txt', sha256Hex('g'), null]]);
  });

  it('given a file replaced by a symlink with the same bytes as target, when diffed, then it is modified', () => {
    const diff = diffSnapshots(snapshot({ p: file('t') }), snapshot({ p: link('t') }));
    expect(diff.modified.map((c) => [c.before?.kind, c.after?.kind])).toEqual([['file', 'symlink']]);
  });
});
