import { bytesToHex, consistencyProof, inclusionProof, merkleLeafHash, merkleRoot, sha256Hex, hexToBytes, verifyConsistency, verifyInclusion } from '@writ/crypto';
import { describe, expect, it } from 'vitest';
import { consistencyFailure } from './consistency.js';
import { inclusionFailure } from './inclusion.js';

/**
 * A corpus of mutated RFC 9162 proofs, generated from valid ones over trees
 * of many shapes (powers of two, one more, one less, odd sizes). Each mutant
 * is a false claim (a mutant equal to the valid proof, e.g. two equal hashes
 * swapped, is left out).
 *
 * On the bundle path every one is rejected: the proof's size must be the
 * signed tree head's, and its path must lead to the signed root
 * (`inclusionFailure`, `consistencyFailure`; a head whose size or root was
 * changed fails its signature, see verify-bundle.unit.spec.ts).
 *
 * libs/crypto's verifiers, given a bare (index, size, path, root), reject
 * every mutant except one kind no verifier can reject: a tree size changed to
 * another size for which the proof has the same shape (RFC 9162's path for the
 * leaf at that index has the same number of inner and border nodes, e.g.
 * index 0 in sizes 12 and 13). The computation is then identical, and only
 * the binding of the size to its root, which the signed tree head provides,
 * tells them apart. The test asserts that libs/crypto accepts exactly those
 * (computed independently from the decomposition transparency-dev/merkle
 * uses), and nothing else.
 */

const SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 31, 32, 33];
const leavesOf = (size: number): Uint8Array[] => Array.from({ length: size }, (_, i) => hexToBytes(sha256Hex(`receipt-${i}`)));
const MAX_LEAVES = leavesOf(Math.max(...SIZES) * 2 + 2);
const rootOf = (size: number): Uint8Array => merkleRoot(MAX_LEAVES.slice(0, size));

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const copy = new Uint8Array(bytes);
  copy[Math.floor(bit / 8) % copy.length] = (copy[Math.floor(bit / 8) % copy.length] as number) ^ (1 << bit % 8);
  return copy;
}

const ZERO = new Uint8Array(32);
const same = (a: readonly Uint8Array[], b: readonly Uint8Array[]) => a.length === b.length && a.every((x, i) => bytesToHex(x) === bytesToHex(b[i] as Uint8Array));

/** Path mutations: every element with a bit flipped, truncated at either end, padded, reordered. */
function pathMutants(path: readonly Uint8Array[]): { note: string; path: Uint8Array[] }[] {
  const mutants: { note: string; path: Uint8Array[] }[] = [];
  path.forEach((_, at) => {
    for (const bit of [0, 7, 131, 255]) mutants.push({ note: `bit ${bit} of element ${at} flipped`, path: path.map((p, i) => (i === at ? flipBit(p, bit) : p)) });
  });
  if (path.length > 0) {
    mutants.push({ note: 'last element dropped', path: path.slice(0, -1) });
    mutants.push({ note: 'first element dropped', path: path.slice(1) });
    mutants.push({ note: 'last element repeated', path: [...path, path.at(-1) as Uint8Array] });
    mutants.push({ note: 'reversed', path: [...path].reverse() });
  }
  mutants.push({ note: 'padded with zeros', path: [...path, ZERO] });
  mutants.push({ note: 'prefixed with zeros', path: [ZERO, ...path] });
  for (let at = 0; at + 1 < path.length; at++) {
    const swapped = [...path];
    [swapped[at], swapped[at + 1]] = [swapped[at + 1] as Uint8Array, swapped[at] as Uint8Array];
    mutants.push({ note: `elements ${at} and ${at + 1} swapped`, path: swapped });
  }
  mutants.push({ note: 'a 31-byte element', path: path.length === 0 ? [new Uint8Array(31)] : [path[0]!.subarray(1), ...path.slice(1)] });
  return mutants.filter((mutant) => !same(mutant.path, path));
}

/** Size mutations: ±1, ×2, ÷2 and out-of-range values. */
const sizeMutants = (size: number): number[] => [...new Set([size + 1, size - 1, size * 2, Math.floor(size / 2), 0, -1, 1.5, Number.NaN, 2 ** 53])].filter((value) => !Object.is(value, size));

/** RFC 9162 inclusion path shape of the leaf at `index` in a tree of `size` (transparency-dev/merkle `decompInclProof`): inner and border node counts. */
function pathShape(index: number, size: number): string {
  const inner = (BigInt(index) ^ BigInt(size - 1)).toString(2).replace(/^0+/, '').length;
  const border = (BigInt(index) >> BigInt(inner)).toString(2).replaceAll('0', '').length;
  return `${inner}/${border}`;
}

const isSize = (value: number): boolean => Number.isSafeInteger(value) && value > 0;

interface InclusionCase {
  readonly note: string;
  /** The size of the tree the valid proof was made in. */
  readonly origin: number;
  /** A changed size whose proof has the same shape: indistinguishable without the signed head. */
  readonly sameShape: boolean;
  readonly leaf: Uint8Array;
  readonly index: number;
  readonly size: number;
  readonly path: Uint8Array[];
  readonly root: Uint8Array;
}

function inclusionCorpus(): InclusionCase[] {
  const cases: InclusionCase[] = [];
  for (const size of SIZES) {
    const leaves = MAX_LEAVES.slice(0, size);
    const root = rootOf(size);
    for (const index of [...new Set([0, 1, Math.floor(size / 2), size - 2, size - 1])].filter((i) => i >= 0 && i < size)) {
      const leaf = merkleLeafHash(leaves[index] as Uint8Array);
      const path = inclusionProof(index, leaves);
      const valid = { leaf, index, size, path, root, origin: size, sameShape: false };
      const at = `size ${size} index ${index}`;
      for (const mutant of pathMutants(path)) cases.push({ ...valid, note: `${at}: path ${mutant.note}`, path: mutant.path });
      for (const bit of [0, 100, 255]) {
        cases.push({ ...valid, note: `${at}: leaf bit ${bit} flipped`, leaf: flipBit(leaf, bit) });
        cases.push({ ...valid, note: `${at}: root bit ${bit} flipped`, root: flipBit(root, bit) });
      }
      for (const other of [size - 1, size + 1, size * 2].filter((s) => s > 0)) cases.push({ ...valid, note: `${at}: the root of size ${other}`, root: rootOf(other) });
      if (bytesToHex(leaf) !== bytesToHex(root)) cases.push({ ...valid, note: `${at}: the leaf hash as root, the root as leaf`, leaf: root, root: leaf });
      if (size > 1) cases.push({ ...valid, note: `${at}: another leaf's hash`, leaf: merkleLeafHash(leaves[(index + 1) % size] as Uint8Array) });
      cases.push({ ...valid, note: `${at}: the raw leaf instead of its hash`, leaf: leaves[index] as Uint8Array });
      for (const mutated of sizeMutants(size)) {
        const sameShape = isSize(mutated) && index < mutated && pathShape(index, mutated) === pathShape(index, size);
        cases.push({ ...valid, note: `${at}: tree size ${mutated}`, size: mutated, sameShape });
      }
      for (const mutated of [index + 1, index - 1, size, size + 5, -1, 0.5, 2 ** 53].filter((i) => i !== index)) cases.push({ ...valid, note: `${at}: index ${mutated}`, index: mutated });
    }
  }
  return cases;
}

interface ConsistencyCase {
  readonly note: string;
  readonly origin: { readonly m: number; readonly n: number };
  /** A changed second size for which the proof has the same shape (transparency-dev/merkle: the inclusion shape of leaf m-1). */
  readonly sameShape: boolean;
  readonly m: number;
  readonly n: number;
  readonly rootM: Uint8Array;
  readonly rootN: Uint8Array;
  readonly path: Uint8Array[];
}

function consistencyCorpus(): ConsistencyCase[] {
  const cases: ConsistencyCase[] = [];
  for (const n of SIZES) {
    for (const m of [...new Set([1, 2, Math.floor(n / 2), n - 1, n])].filter((value) => value >= 1 && value <= n)) {
      const path = consistencyProof(m, n, MAX_LEAVES);
      const valid = { m, n, rootM: rootOf(m), rootN: rootOf(n), path, origin: { m, n }, sameShape: false };
      const at = `m ${m} n ${n}`;
      for (const mutant of pathMutants(path)) cases.push({ ...valid, note: `${at}: path ${mutant.note}`, path: mutant.path });
      for (const bit of [0, 255]) {
        cases.push({ ...valid, note: `${at}: first root bit ${bit} flipped`, rootM: flipBit(valid.rootM, bit) });
        cases.push({ ...valid, note: `${at}: second root bit ${bit} flipped`, rootN: flipBit(valid.rootN, bit) });
      }
      if (m !== n) cases.push({ ...valid, note: `${at}: roots swapped`, rootM: valid.rootN, rootN: valid.rootM });
      for (const other of [m - 1, m + 1].filter((s) => s > 0 && s !== m)) cases.push({ ...valid, note: `${at}: first root of size ${other}`, rootM: rootOf(other) });
      for (const other of [n - 1, n + 1].filter((s) => s > 0 && s !== n)) cases.push({ ...valid, note: `${at}: second root of size ${other}`, rootN: rootOf(other) });
      for (const mutated of sizeMutants(m)) cases.push({ ...valid, note: `${at}: first size ${mutated}`, m: mutated });
      for (const mutated of sizeMutants(n)) {
        const sameShape = m < n && isSize(mutated) && m < mutated && pathShape(m - 1, mutated) === pathShape(m - 1, n);
        cases.push({ ...valid, note: `${at}: second size ${mutated}`, n: mutated, sameShape });
      }
    }
  }
  return cases;
}

const INCLUSION = inclusionCorpus();
const CONSISTENCY = consistencyCorpus();

describe('mutated proof corpus', () => {
  it('given the valid proofs the corpus is made from, then they verify (the corpus starts from the truth)', () => {
    for (const size of SIZES) {
      const leaves = MAX_LEAVES.slice(0, size);
      for (let index = 0; index < size; index++) {
        expect(verifyInclusion(merkleLeafHash(leaves[index] as Uint8Array), index, size, inclusionProof(index, leaves), rootOf(size))).toBe(true);
      }
      for (let m = 1; m <= size; m++) expect(verifyConsistency(m, size, rootOf(m), rootOf(size), consistencyProof(m, size, MAX_LEAVES))).toBe(true);
    }
  });

  it(`given ${INCLUSION.length} mutated inclusion proofs (flipped bits, truncated or padded paths, wrong or swapped roots, sizes ±1 ×2 ÷2, indices out of range), then libs/crypto rejects every one but the same-shape sizes`, () => {
    const accepted = INCLUSION.filter((c) => verifyInclusion(c.leaf, c.index, c.size, c.path, c.root)).map((c) => c.note);
    expect(accepted).toEqual(INCLUSION.filter((c) => c.sameShape).map((c) => c.note));
    expect(INCLUSION.length).toBeGreaterThan(1_000);
  });

  it(`given the same ${INCLUSION.length} mutants as bundle proofs against the signed head's size, then the bundle check rejects every one`, () => {
    // A bundle names the leaf through the receipt's hash: the receipt is the leaf input whose hash is the mutant's leaf (when there is one).
    const rawOf = new Map(MAX_LEAVES.map((raw) => [bytesToHex(merkleLeafHash(raw)), raw]));
    const accepted = INCLUSION.filter((c) => {
      const raw = rawOf.get(bytesToHex(c.leaf));
      const receiptHash = raw === undefined ? sha256Hex(`no receipt hashes to this leaf: ${c.note}`) : bytesToHex(raw);
      const proof = { log_id: 'writ-receipts', leaf_index: c.index, tree_size: c.size, leaf_hash: bytesToHex(c.leaf), audit_path: c.path.map(bytesToHex) };
      return inclusionFailure(receiptHash, proof, { log_id: 'writ-receipts', tree_size: c.origin, root_hash: bytesToHex(c.root) }) === undefined;
    }).map((c) => c.note);
    expect(accepted).toEqual([]);
  });

  it(`given ${CONSISTENCY.length} mutated consistency proofs, then libs/crypto rejects every one but the same-shape sizes, and the bundle check rejects every one`, () => {
    const acceptedByCrypto = CONSISTENCY.filter((c) => verifyConsistency(c.m, c.n, c.rootM, c.rootN, c.path)).map((c) => c.note);
    const acceptedByCheck = CONSISTENCY.filter(
      (c) =>
        consistencyFailure(
          { log_id: 'writ-receipts', tree_size: c.origin.m, root_hash: bytesToHex(c.rootM) },
          { log_id: 'writ-receipts', tree_size: c.origin.n, root_hash: bytesToHex(c.rootN) },
          { log_id: 'writ-receipts', first_size: c.m, second_size: c.n, path: c.path.map(bytesToHex) },
        ) === undefined,
    ).map((c) => c.note);
    expect(acceptedByCrypto).toEqual(CONSISTENCY.filter((c) => c.sameShape).map((c) => c.note));
    expect(acceptedByCheck).toEqual([]);
    expect(CONSISTENCY.length).toBeGreaterThan(1_000);
  });
});
