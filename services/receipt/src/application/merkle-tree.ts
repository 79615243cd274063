import { emptyTreeRoot, merkleNodeHash } from '@writ/crypto';
import { TlogError } from './tlog-errors.js';

/**
 * An append-only Merkle tree over leaf hashes with RFC 9162 (section 2.1)
 * hashing, kept in memory for the transparency log.
 *
 * `@writ/crypto`'s `merkleRoot` / `inclusionProof` / `consistencyProof` are
 * the reference definitions, but they rehash every leaf on each call (O(n));
 * a log answers many proofs over a growing tree. Here every complete subtree
 * is hashed once, when its last leaf arrives: `#levels[k][i]` is the root of
 * the 2^k leaves starting at leaf i·2^k. Every subtree the RFC's recursion
 * visits is then either such a complete, aligned subtree (looked up) or lies
 * on the right edge (at most one per level), so a root costs O(log n) and a
 * proof O(log² n) node hashes. Unit tests hold it to the reference.
 */
export class MerkleTree {
  readonly #levels: Uint8Array[][] = [[]];

  /** Number of leaves. */
  get size(): number {
    return this.#leaves.length;
  }

  /** Appends a leaf hash (SHA-256(0x00 ‖ leaf), 32 bytes) and returns its index. */
  append(leafHash: Uint8Array): number {
    const index = this.#leaves.length;
    this.#leaves.push(leafHash);
    let level = 0;
    let position = index;
    // Each odd position closes a complete subtree one level up.
    while (position % 2 === 1) {
      const nodes = this.#levels[level] as Uint8Array[];
      const parent = merkleNodeHash(nodes[position - 1] as Uint8Array, nodes[position] as Uint8Array);
      level += 1;
      position = (position - 1) / 2;
      (this.#levels[level] ??= []).push(parent);
    }
    return index;
  }

  /** The leaf hash at `index`. */
  leafHash(index: number): Uint8Array {
    this.#checkSizes(index, this.size - 1);
    return this.#leaves[index] as Uint8Array;
  }

  /** RFC 9162 Merkle Tree Hash of the first `size` leaves (default: all); the empty tree's is SHA-256(""). */
  root(size: number = this.size): Uint8Array {
    this.#checkSizes(size, this.size);
    return size === 0 ? emptyTreeRoot() : this.#subtreeRoot(0, size);
  }

  /** RFC 9162 2.1.3.1 audit path of leaf `index` in the tree of the first `size` leaves. */
  inclusionPath(index: number, size: number): Uint8Array[] {
    this.#checkSizes(size, this.size);
    this.#checkSizes(index, size - 1);
    return this.#auditPath(index, 0, size);
  }

  /** RFC 9162 2.1.4.1 proof that the tree of the first `first` leaves is a prefix of the tree of the first `second`. */
  consistencyPath(first: number, second: number): Uint8Array[] {
    this.#checkSizes(second, this.size);
    this.#checkSizes(first, second);
    if (first === 0 || first === second) return [];
    return this.#subProof(first, 0, second, true);
  }

  get #leaves(): Uint8Array[] {
    return this.#levels[0] as Uint8Array[];
  }

  // MTH(D[start:end]), end - start >= 1.
  #subtreeRoot(start: number, end: number): Uint8Array {
    const width = end - start;
    if (isPowerOfTwo(width) && start % width === 0) return (this.#levels[log2(width)] as Uint8Array[])[start / width] as Uint8Array;
    const k = largestPowerOfTwoBelow(width);
    return merkleNodeHash(this.#subtreeRoot(start, start + k), this.#subtreeRoot(start + k, end));
  }

  // PATH(m, D[start:end]) with m relative to start.
  #auditPath(m: number, start: number, end: number): Uint8Array[] {
    if (end - start === 1) return [];
    const k = largestPowerOfTwoBelow(end - start);
    return m < k
      ? [...this.#auditPath(m, start, start + k), this.#subtreeRoot(start + k, end)]
      : [...this.#auditPath(m - k, start + k, end), this.#subtreeRoot(start, start + k)];
  }

  // SUBPROOF(m, D[start:end], b) with m relative to start.
  #subProof(m: number, start: number, end: number, completeSubtree: boolean): Uint8Array[] {
    const width = end - start;
    if (m === width) return completeSubtree ? [] : [this.#subtreeRoot(start, end)];
    const k = largestPowerOfTwoBelow(width);
    return m <= k
      ? [...this.#subProof(m, start, start + k, completeSubtree), this.#subtreeRoot(start + k, end)]
      : [...this.#subProof(m - k, start + k, end, false), this.#subtreeRoot(start, start + k)];
  }

  #checkSizes(value: number, max: number): void {
    if (!Number.isSafeInteger(value) || value < 0 || value > max) {
      throw new TlogError('TLOG_TREE_SIZE_INVALID', `${String(value)} is outside 0..${String(max)} for a tree of ${String(this.size)} leaves`, {
        details: { value, max, tree_size: this.size },
      });
    }
  }
}

function isPowerOfTwo(value: number): boolean {
  let v = value;
  while (v > 1 && v % 2 === 0) v /= 2;
  return v === 1;
}

function log2(powerOfTwo: number): number {
  let exponent = 0;
  for (let v = powerOfTwo; v > 1; v /= 2) exponent += 1;
  return exponent;
}

/** The largest power of two strictly below `n` (n >= 2). */
function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}
