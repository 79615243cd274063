import { createHash } from 'node:crypto';
import { CryptoError } from './crypto-errors.js';

/**
 * Merkle tree hashing, proofs and proof verification as specified by RFC 9162
 * (Certificate Transparency 2.0), section 2.1, with SHA-256.
 *
 * Leaves are raw entry bytes; every hash is 32 bytes. Domain separation (0x00 for
 * leaves, 0x01 for interior nodes) keeps a leaf from ever being passed off as a
 * subtree. Tree sizes and indices are plain numbers up to 2^53 - 1: the
 * verifiers use arithmetic instead of 32-bit bitwise operators so that large
 * logs do not silently wrap.
 */

export const MERKLE_HASH_BYTES = 32;

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

function sha256(...parts: Uint8Array[]): Uint8Array {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
}

/** Root of the empty tree: SHA-256 of the empty string. */
export function emptyTreeRoot(): Uint8Array {
  return sha256();
}

/** RFC 9162 leaf hash: SHA-256(0x00 || leaf). */
export function merkleLeafHash(leaf: Uint8Array): Uint8Array {
  return sha256(LEAF_PREFIX, leaf);
}

/** RFC 9162 interior node hash: SHA-256(0x01 || left || right). */
export function merkleNodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(NODE_PREFIX, left, right);
}

/** Merkle Tree Hash of `leaves` (MTH in RFC 9162 section 2.1.1). */
export function merkleRoot(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return emptyTreeRoot();
  const hashes = leaves.map(merkleLeafHash);
  return subtreeRoot(hashes, 0, hashes.length);
}

/**
 * Audit path for the leaf at `index` in the tree made of `leaves` (PATH in RFC 9162
 * section 2.1.3.1), ordered from the leaf's sibling up to the root's child.
 */
export function inclusionProof(index: number, leaves: readonly Uint8Array[]): Uint8Array[] {
  if (!isTreeSize(index) || index >= leaves.length) {
    throw new CryptoError('MERKLE_INDEX_OUT_OF_RANGE', `leaf index ${String(index)} is outside a tree of ${String(leaves.length)} leaves`, {
      details: { index, treeSize: leaves.length },
    });
  }
  const hashes = leaves.map(merkleLeafHash);
  return auditPath(hashes, index, 0, hashes.length);
}

/**
 * Proof that the tree of the first `m` leaves is a prefix of the tree of the first
 * `n` leaves (PROOF in RFC 9162 section 2.1.4.1). Empty when `m` is 0 or `m === n`:
 * those pairs are consistent by definition.
 */
export function consistencyProof(m: number, n: number, leaves: readonly Uint8Array[]): Uint8Array[] {
  if (!isTreeSize(m) || !isTreeSize(n) || m > n || n > leaves.length) {
    throw new CryptoError('MERKLE_INDEX_OUT_OF_RANGE', `need 0 <= m <= n <= ${String(leaves.length)}, got m=${String(m)} n=${String(n)}`, {
      details: { m, n, available: leaves.length },
    });
  }
  if (m === 0 || m === n) return [];
  const hashes = leaves.slice(0, n).map(merkleLeafHash);
  return subProof(hashes, m, 0, n, true);
}

/**
 * Verifies an inclusion proof (RFC 9162 section 2.1.3.2). `leafHash` is the leaf's
 * hash (`merkleLeafHash(leaf)`), not the leaf bytes. Never throws: malformed input
 * (wrong hash lengths, index outside the tree, non-integer sizes) simply fails.
 *
 * `treeSize` is bound only through `root`: for another size in which the leaf's
 * path has the same shape (leaf 0 in 12 or 13 leaves) the computation is the same,
 * so the proof verifies against the same root. Take size and root together from
 * one signed tree head, never the size from the proof. (The same holds for the
 * second size of `verifyConsistency`.)
 */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!isTreeSize(index) || !isTreeSize(treeSize) || index >= treeSize) return false;
  if (!isHash(leafHash) || !isHash(root) || !Array.isArray(proof) || !proof.every(isHash)) return false;

  let fn = index;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      r = merkleNodeHash(p, r);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = merkleNodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalBytes(r, root);
}

/**
 * Verifies a consistency proof between the tree of size `m` with root `rootM` and
 * the tree of size `n` with root `rootN` (RFC 9162 section 2.1.4.2). The RFC
 * defines verification for 0 < m < n; the edges are decided here: m === n holds
 * iff the roots are equal and the proof is empty, and m === 0 holds iff the proof
 * is empty and `rootM` is the empty-tree root. Never throws.
 */
export function verifyConsistency(
  m: number,
  n: number,
  rootM: Uint8Array,
  rootN: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!isTreeSize(m) || !isTreeSize(n) || m > n) return false;
  if (!isHash(rootM) || !isHash(rootN) || !Array.isArray(proof) || !proof.every(isHash)) return false;
  if (m === 0) return proof.length === 0 && equalBytes(rootM, emptyTreeRoot()) && (n !== 0 || equalBytes(rootN, rootM));
  if (m === n) return proof.length === 0 && equalBytes(rootM, rootN);
  if (proof.length === 0) return false;

  const path = isPowerOfTwo(m) ? [rootM, ...proof] : proof;
  let fn = m - 1;
  let sn = n - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      fr = merkleNodeHash(c, fr);
      sr = merkleNodeHash(c, sr);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = merkleNodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return equalBytes(fr, rootM) && equalBytes(sr, rootN) && sn === 0;
}

// MTH(D[start:end]) over precomputed leaf hashes; end - start >= 1.
function subtreeRoot(hashes: readonly Uint8Array[], start: number, end: number): Uint8Array {
  if (end - start === 1) return hashes[start] as Uint8Array;
  const k = largestPowerOfTwoBelow(end - start);
  return merkleNodeHash(subtreeRoot(hashes, start, start + k), subtreeRoot(hashes, start + k, end));
}

// PATH(m, D[start:end]) with m relative to start.
function auditPath(hashes: readonly Uint8Array[], m: number, start: number, end: number): Uint8Array[] {
  if (end - start === 1) return [];
  const k = largestPowerOfTwoBelow(end - start);
  return m < k
    ? [...auditPath(hashes, m, start, start + k), subtreeRoot(hashes, start + k, end)]
    : [...auditPath(hashes, m - k, start + k, end), subtreeRoot(hashes, start, start + k)];
}

// SUBPROOF(m, D[start:end], b) with m relative to start.
function subProof(hashes: readonly Uint8Array[], m: number, start: number, end: number, completeSubtree: boolean): Uint8Array[] {
  const n = end - start;
  if (m === n) return completeSubtree ? [] : [subtreeRoot(hashes, start, end)];
  const k = largestPowerOfTwoBelow(n);
  return m <= k
    ? [...subProof(hashes, m, start, start + k, completeSubtree), subtreeRoot(hashes, start + k, end)]
    : [...subProof(hashes, m - k, start + k, end, false), subtreeRoot(hashes, start, start + k)];
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isTreeSize(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === MERKLE_HASH_BYTES;
}

function isOdd(value: number): boolean {
  return value % 2 === 1;
}

function half(value: number): number {
  return Math.floor(value / 2);
}

function isPowerOfTwo(value: number): boolean {
  let v = value;
  while (v > 1 && !isOdd(v)) v = half(v);
  return v === 1;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
