import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from './hex.js';
import {
  consistencyProof,
  emptyTreeRoot,
  inclusionProof,
  merkleLeafHash,
  merkleNodeHash,
  merkleRoot,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js';

// The reference tree of Certificate Transparency (RFC 6962 / RFC 9162 hashing), as used by
// certificate-transparency and transparency-dev/merkle: eight leaves, published roots for sizes 1..8,
// and published inclusion and consistency proofs.
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(hexToBytes);
const EMPTY_ROOT = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const rootOfSize = (size: number): Uint8Array => hexToBytes(ROOTS[size - 1] ?? '');

const INCLUSION_VECTORS: { index: number; size: number; proof: string[] }[] = [
  { index: 0, size: 1, proof: [] },
  {
    index: 0,
    size: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    size: 8,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { index: 2, size: 3, proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    index: 1,
    size: 5,
    proof: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];

const CONSISTENCY_VECTORS: { m: number; n: number; proof: string[] }[] = [
  { m: 1, n: 1, proof: [] },
  {
    m: 1,
    n: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    m: 6,
    n: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    m: 2,
    n: 5,
    proof: [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
  {
    m: 6,
    n: 7,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

const SOME_HASH = hexToBytes('abacaba000000000000000000000000000000000000000000060061e00123456');

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const copy = new Uint8Array(bytes);
  const at = Math.floor(bit / 8) % copy.length;
  copy[at] = (copy[at] ?? 0) ^ (1 << bit % 8);
  return copy;
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

describe('merkle hashing (RFC 9162 section 2.1.1)', () => {
  it('given no leaves, then the root is SHA-256 of the empty string', () => {
    expect(bytesToHex(merkleRoot([]))).toBe(EMPTY_ROOT);
    expect(bytesToHex(emptyTreeRoot())).toBe(EMPTY_ROOT);
  });

  it('given the empty leaf, then its hash is SHA-256(0x00)', () => {
    expect(bytesToHex(merkleLeafHash(new Uint8Array()))).toBe(ROOTS[0]);
  });

  it('given two leaf hashes, then the node hash prefixes 0x01 (the size-2 reference root)', () => {
    const [a, b] = LEAVES.slice(0, 2).map(merkleLeafHash) as [Uint8Array, Uint8Array];
    expect(bytesToHex(merkleNodeHash(a, b))).toBe(ROOTS[1]);
  });

  it.each(ROOTS.map((root, i) => [i + 1, root] as const))('given the first %i reference leaves, then the root is %s', (size, root) => {
    expect(bytesToHex(merkleRoot(LEAVES.slice(0, size)))).toBe(root);
  });
});

describe('inclusion proofs (RFC 9162 section 2.1.3)', () => {
  it.each(INCLUSION_VECTORS)('given leaf $index of a tree of $size, then the proof is the published one and verifies', ({ index, size, proof }) => {
    const leaves = LEAVES.slice(0, size);
    const leafHash = merkleLeafHash(LEAVES[index] as Uint8Array);

    const generated = inclusionProof(index, leaves);

    expect(generated.map(bytesToHex)).toEqual(proof);
    expect(verifyInclusion(leafHash, index, size, generated, rootOfSize(size))).toBe(true);
  });

  // Mutations in the style of transparency-dev/merkle's corruptInclusionProof.
  it.each(INCLUSION_VECTORS.filter((v) => v.proof.length > 0))(
    'given a corrupted variant of the proof for leaf $index of $size, then verification fails',
    ({ index, size, proof }) => {
      const root = rootOfSize(size);
      const leafHash = merkleLeafHash(LEAVES[index] as Uint8Array);
      const path = proof.map(hexToBytes);
      const probes: [string, () => boolean][] = [
        ['index - 1', () => verifyInclusion(leafHash, index - 1, size, path, root)],
        ['index + 1', () => verifyInclusion(leafHash, index + 1, size, path, root)],
        ['index ^ 2', () => verifyInclusion(leafHash, index ^ 2, size, path, root)],
        ['size * 2', () => verifyInclusion(leafHash, index, size * 2, path, root)],
        ['size / 2', () => verifyInclusion(leafHash, index, Math.floor(size / 2), path, root)],
        ['wrong leaf', () => verifyInclusion(new TextEncoder().encode('WrongLeaf'), index, size, path, root)],
        ['empty root', () => verifyInclusion(leafHash, index, size, path, emptyTreeRoot())],
        ['some root', () => verifyInclusion(leafHash, index, size, path, SOME_HASH)],
        ['trailing empty', () => verifyInclusion(leafHash, index, size, [...path, new Uint8Array()], root)],
        ['trailing root', () => verifyInclusion(leafHash, index, size, [...path, root], root)],
        ['preceding empty', () => verifyInclusion(leafHash, index, size, [new Uint8Array(), ...path], root)],
        ['preceding root', () => verifyInclusion(leafHash, index, size, [root, ...path], root)],
        ['removed component', () => verifyInclusion(leafHash, index, size, path.slice(0, -1), root)],
        ['raw leaf instead of leaf hash', () => verifyInclusion(LEAVES[index] as Uint8Array, index, size, path, root)],
        ...path.map((_, i): [string, () => boolean] => [
          `proof[${String(i)}] bit 3 flipped`,
          () => verifyInclusion(leafHash, index, size, path.map((p, j) => (j === i ? flipBit(p, 3) : p)), root),
        ]),
      ];
      if (path.length > 1) {
        probes.push(['inserted component', () => verifyInclusion(leafHash, index, size, [path[0] as Uint8Array, SOME_HASH, ...path.slice(1)], root)]);
      }

      const wronglyAccepted = probes.filter(([, probe]) => probe()).map(([name]) => name);

      expect(wronglyAccepted).toEqual([]);
    },
  );

  it('given a proof checked against another tree size of the same path shape, then it verifies: the size is bound only through the root, so callers take size and root from one signed tree head', () => {
    // given leaf 0 of 13 leaves: its path has 4 inner nodes, as it has in a tree of 12 (and 9..16)
    const leaves = Array.from({ length: 13 }, (_, i) => Uint8Array.of(i));
    const root13 = merkleRoot(leaves);
    const path = inclusionProof(0, leaves);
    // when it is checked as if the tree had 12 leaves, with the root of 13
    const asTwelve = verifyInclusion(merkleLeafHash(leaves[0] as Uint8Array), 0, 12, path, root13);
    // then the computation is the same one and it verifies; against the real root of 12 it does not
    expect(asTwelve).toBe(true);
    expect(verifyInclusion(merkleLeafHash(leaves[0] as Uint8Array), 0, 12, path, merkleRoot(leaves.slice(0, 12)))).toBe(false);
  });

  it('given a single-leaf tree, then the leaf hash is the root and the proof is empty', () => {
    const hash = merkleLeafHash(new TextEncoder().encode('data'));
    expect(verifyInclusion(hash, 0, 1, [], hash)).toBe(true);
    expect(verifyInclusion(new Uint8Array(), 0, 1, [], hash)).toBe(false);
    expect(verifyInclusion(hash, 0, 1, [], new Uint8Array())).toBe(false);
    expect(verifyInclusion(new Uint8Array(), 0, 1, [], new Uint8Array())).toBe(false);
  });

  it.each([
    [0, 0],
    [1, 0],
    [2, 1],
    [-1, 1],
    [0.5, 1],
    [Number.NaN, 1],
  ])('given index %s in a tree of size %s, then verification fails without throwing', (index, size) => {
    expect(verifyInclusion(SOME_HASH, index, size, [], emptyTreeRoot())).toBe(false);
  });

  it.each([
    [-1, 3],
    [3, 3],
    [0, 0],
    [1.5, 3],
  ])('given index %s of %s leaves, when a proof is requested, then MERKLE_INDEX_OUT_OF_RANGE', (index, size) => {
    expect(codeOf(() => inclusionProof(index, LEAVES.slice(0, size)))).toBe('MERKLE_INDEX_OUT_OF_RANGE');
  });
});

describe('consistency proofs (RFC 9162 section 2.1.4)', () => {
  it.each(CONSISTENCY_VECTORS)('given sizes $m and $n, then the proof is the published one and verifies', ({ m, n, proof }) => {
    const generated = consistencyProof(m, n, LEAVES);

    expect(generated.map(bytesToHex)).toEqual(proof);
    expect(verifyConsistency(m, n, rootOfSize(m), rootOfSize(n), generated)).toBe(true);
  });

  // Mutations in the style of transparency-dev/merkle's corruptConsistencyProof.
  it.each(CONSISTENCY_VECTORS.filter((v) => v.proof.length > 0))(
    'given a corrupted variant of the proof from $m to $n, then verification fails',
    ({ m, n, proof }) => {
      const rootM = rootOfSize(m);
      const rootN = rootOfSize(n);
      const path = proof.map(hexToBytes);
      const wrongRoot = new TextEncoder().encode('WrongRoot');
      const probes: [string, () => boolean][] = [
        ['m - 1', () => verifyConsistency(m - 1, n, rootM, rootN, path)],
        ['m + 1', () => verifyConsistency(m + 1, n, rootM, rootN, path)],
        ['m ^ 2', () => verifyConsistency(m ^ 2, n, rootM, rootN, path)],
        ['n * 2', () => verifyConsistency(m, n * 2, rootM, rootN, path)],
        ['n / 2', () => verifyConsistency(m, Math.floor(n / 2), rootM, rootN, path)],
        ['wrong rootM', () => verifyConsistency(m, n, wrongRoot, rootN, path)],
        ['wrong rootN', () => verifyConsistency(m, n, rootM, wrongRoot, path)],
        ['swapped roots', () => verifyConsistency(m, n, rootN, rootM, path)],
        ['empty proof', () => verifyConsistency(m, n, rootM, rootN, [])],
        ['trailing empty', () => verifyConsistency(m, n, rootM, rootN, [...path, new Uint8Array()])],
        ['trailing rootM', () => verifyConsistency(m, n, rootM, rootN, [...path, rootM])],
        ['trailing rootN', () => verifyConsistency(m, n, rootM, rootN, [...path, rootN])],
        ['preceding empty', () => verifyConsistency(m, n, rootM, rootN, [new Uint8Array(), ...path])],
        ['preceding rootM', () => verifyConsistency(m, n, rootM, rootN, [rootM, ...path])],
        ['preceding rootN', () => verifyConsistency(m, n, rootM, rootN, [rootN, ...path])],
        ['preceding proof[0]', () => verifyConsistency(m, n, rootM, rootN, [path[0] as Uint8Array, ...path])],
        ['truncated', () => verifyConsistency(m, n, rootM, rootN, path.slice(0, -1))],
        ...path.map((_, i): [string, () => boolean] => [
          `proof[${String(i)}] bit 4 flipped`,
          () => verifyConsistency(m, n, rootM, rootN, path.map((p, j) => (j === i ? flipBit(p, 4) : p))),
        ]),
      ];

      const wronglyAccepted = probes.filter(([, probe]) => probe()).map(([name]) => name);

      expect(wronglyAccepted).toEqual([]);
    },
  );

  it('given the edges the RFC leaves to the verifier, then equal sizes need equal roots and size 0 needs the empty root', () => {
    const empty = emptyTreeRoot();
    const root1 = rootOfSize(1);
    expect(verifyConsistency(0, 0, empty, empty, [])).toBe(true);
    expect(verifyConsistency(0, 1, empty, root1, [])).toBe(true);
    expect(verifyConsistency(1, 1, root1, root1, [])).toBe(true);
    expect(verifyConsistency(0, 0, empty, root1, [])).toBe(false);
    expect(verifyConsistency(0, 1, root1, root1, [])).toBe(false);
    expect(verifyConsistency(1, 1, root1, rootOfSize(2), [])).toBe(false);
    expect(verifyConsistency(1, 1, root1, root1, [empty])).toBe(false);
    expect(verifyConsistency(0, 1, empty, root1, [empty])).toBe(false);
    expect(verifyConsistency(1, 0, root1, empty, [])).toBe(false);
    expect(verifyConsistency(2, 1, rootOfSize(2), root1, [])).toBe(false);
    expect(verifyConsistency(1, 2, root1, rootOfSize(2), [])).toBe(false);
  });

  it('given m of 0 or m equal to n, then the generated proof is empty', () => {
    expect(consistencyProof(0, 8, LEAVES)).toEqual([]);
    expect(consistencyProof(5, 5, LEAVES)).toEqual([]);
  });

  it.each([
    [3, 2],
    [-1, 2],
    [1, 9],
    [1.5, 4],
  ])('given m=%s n=%s over 8 leaves, when a proof is requested, then MERKLE_INDEX_OUT_OF_RANGE', (m, n) => {
    expect(codeOf(() => consistencyProof(m, n, LEAVES))).toBe('MERKLE_INDEX_OUT_OF_RANGE');
  });
});

describe('merkle proofs: properties', () => {
  const leaf = fc.uint8Array({ maxLength: 24 });

  it('for random trees of 1..200 leaves, every inclusion proof and every consistency proof m <= n verifies', () => {
    fc.assert(
      fc.property(fc.array(leaf, { minLength: 1, maxLength: 200, size: 'max' }), (leaves) => {
        const n = leaves.length;
        const root = merkleRoot(leaves);
        for (let index = 0; index < n; index++) {
          expect(verifyInclusion(merkleLeafHash(leaves[index] as Uint8Array), index, n, inclusionProof(index, leaves), root)).toBe(true);
        }
        for (let m = 0; m <= n; m++) {
          expect(verifyConsistency(m, n, merkleRoot(leaves.slice(0, m)), root, consistencyProof(m, n, leaves))).toBe(true);
        }
      }),
      // Each run is O(n^2) hashing; the sampled properties below cover many more tree shapes.
      { numRuns: 5 },
    );
  });

  it('for random trees of 1..200 leaves, an inclusion proof verifies and a flipped bit in leaf, proof or root does not', () => {
    fc.assert(
      fc.property(fc.array(leaf, { minLength: 1, maxLength: 200, size: 'max' }), fc.nat(), fc.nat(), (leaves, pick, bit) => {
        const index = pick % leaves.length;
        const root = merkleRoot(leaves);
        const proof = inclusionProof(index, leaves);
        const target = leaves[index] as Uint8Array;
        const leafHash = merkleLeafHash(target);

        expect(verifyInclusion(leafHash, index, leaves.length, proof, root)).toBe(true);
        const alteredLeaf = target.length === 0 ? Uint8Array.of(1 << bit % 8) : flipBit(target, bit);
        expect(verifyInclusion(merkleLeafHash(alteredLeaf), index, leaves.length, proof, root)).toBe(false);
        expect(verifyInclusion(flipBit(leafHash, bit), index, leaves.length, proof, root)).toBe(false);
        expect(verifyInclusion(leafHash, index, leaves.length, proof, flipBit(root, bit))).toBe(false);
        if (proof.length > 0) {
          const at = bit % proof.length;
          const tampered = proof.map((p, i) => (i === at ? flipBit(p, bit) : p));
          expect(verifyInclusion(leafHash, index, leaves.length, tampered, root)).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('for random trees of 1..200 leaves, a consistency proof m <= n verifies and a flipped bit in a root or the proof does not', () => {
    fc.assert(
      fc.property(fc.array(leaf, { minLength: 1, maxLength: 200, size: 'max' }), fc.nat(), fc.nat(), (leaves, pick, bit) => {
        const n = leaves.length;
        const m = pick % (n + 1);
        const rootM = merkleRoot(leaves.slice(0, m));
        const rootN = merkleRoot(leaves);
        const proof = consistencyProof(m, n, leaves);

        expect(verifyConsistency(m, n, rootM, rootN, proof)).toBe(true);
        expect(verifyConsistency(m, n, flipBit(rootM, bit), rootN, proof)).toBe(false);
        if (m > 0) expect(verifyConsistency(m, n, rootM, flipBit(rootN, bit), proof)).toBe(false);
        if (proof.length > 0) {
          const at = bit % proof.length;
          const tampered = proof.map((p, i) => (i === at ? flipBit(p, bit) : p));
          expect(verifyConsistency(m, n, rootM, rootN, tampered)).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });
});
