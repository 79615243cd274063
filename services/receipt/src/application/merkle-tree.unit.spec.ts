import { hasErrorCode } from '@writ/contracts';
import { consistencyProof, emptyTreeRoot, inclusionProof, merkleLeafHash, merkleRoot, sha256Hex, verifyConsistency, verifyInclusion } from '@writ/crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MerkleTree } from './merkle-tree.js';

/** Leaves as the log has them: 32-byte receipt hashes. */
const leaf = (n: number): Uint8Array => Uint8Array.from(Buffer.from(sha256Hex(`receipt ${n}`), 'hex'));
const leavesOf = (count: number): Uint8Array[] => Array.from({ length: count }, (_, n) => leaf(n));

function treeOf(leaves: readonly Uint8Array[]): MerkleTree {
  const tree = new MerkleTree();
  for (const bytes of leaves) tree.append(merkleLeafHash(bytes));
  return tree;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return hasErrorCode(error) ? error.code : 'untyped';
  }
  return undefined;
}

describe('MerkleTree (incremental, RFC 9162)', () => {
  it('given no leaves, then the root is SHA-256 of the empty string', () => {
    expect(hex(new MerkleTree().root())).toBe(hex(emptyTreeRoot()));
  });

  it('given every tree size up to 70, when the root, every audit path and every consistency path are asked, then they equal the reference (@writ/crypto) and verify', () => {
    const all = leavesOf(70);
    const tree = treeOf(all);
    for (let size = 1; size <= all.length; size++) {
      const prefix = all.slice(0, size);
      const root = merkleRoot(prefix);
      expect(hex(tree.root(size))).toBe(hex(root));
      for (let index = 0; index < size; index++) {
        const path = tree.inclusionPath(index, size);
        expect(path.map(hex)).toEqual(inclusionProof(index, prefix).map(hex));
        expect(verifyInclusion(tree.leafHash(index), index, size, path, root)).toBe(true);
      }
      for (let first = 0; first <= size; first++) {
        const path = tree.consistencyPath(first, size);
        expect(path.map(hex)).toEqual(consistencyProof(first, size, all).map(hex));
        expect(verifyConsistency(first, size, tree.root(first), root, path)).toBe(true);
      }
    }
  });

  it('given random sizes, indices and prefixes (property), then the incremental tree agrees with the reference', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), (size, i, m) => {
        const all = leavesOf(size);
        const tree = treeOf(all);
        const index = i % size;
        const first = m % (size + 1);
        expect(hex(tree.root())).toBe(hex(merkleRoot(all)));
        expect(tree.inclusionPath(index, size).map(hex)).toEqual(inclusionProof(index, all).map(hex));
        expect(tree.consistencyPath(first, size).map(hex)).toEqual(consistencyProof(first, size, all).map(hex));
      }),
      { numRuns: 60 },
    );
  });

  it('given a tree of 5 leaves, when a size, index or prefix outside it is asked, then TLOG_TREE_SIZE_INVALID', () => {
    const tree = treeOf(leavesOf(5));
    expect(codeOf(() => tree.root(6))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => tree.root(-1))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => tree.inclusionPath(5, 5))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => tree.inclusionPath(0, 6))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => tree.inclusionPath(0, 0))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => tree.consistencyPath(4, 3))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => tree.consistencyPath(2, 6))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => tree.leafHash(5))).toBe('TLOG_TREE_SIZE_INVALID');
    expect(codeOf(() => tree.root(2.5))).toBe('TLOG_TREE_SIZE_INVALID');
  });
});
