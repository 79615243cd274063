import { equalBytes } from './bytes.js';
import { sha256 } from './digest.js';

/**
 * RFC 9162 section 2.1 inclusion-proof verification over WebCrypto's SHA-256,
 * for verifiers that have no synchronous hash (a browser). The algorithm is
 * the one of `@writ/crypto`'s `verifyInclusion` (which the services use on
 * Node's synchronous hash); a property test runs both over the same trees so
 * the two cannot drift. Never throws: malformed input simply fails.
 */

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;
const HASH_BYTES = 32;

function concat(prefix: number, ...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(1 + parts.reduce((size, part) => size + part.length, 0));
  out[0] = prefix;
  let at = 1;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** SHA-256(0x00 ‖ leaf). */
export function merkleLeafHash(leaf: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  return sha256(concat(LEAF_PREFIX, leaf));
}

/** SHA-256(0x01 ‖ left ‖ right). */
export function merkleNodeHash(left: Uint8Array, right: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  return sha256(concat(NODE_PREFIX, left, right));
}

const isTreeSize = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
const isHash = (h: unknown): h is Uint8Array => h instanceof Uint8Array && h.length === HASH_BYTES;
const isOdd = (n: number): boolean => n % 2 === 1;
const half = (n: number): number => Math.floor(n / 2);

/**
 * Does `proof` lead from `leafHash` (the leaf's hash, not its bytes) at `index`
 * to `root` in a tree of `treeSize` leaves? Take size and root together from
 * one signed tree head, never the size from the proof.
 */
export async function verifyInclusion(leafHash: Uint8Array, index: number, treeSize: number, proof: readonly Uint8Array[], root: Uint8Array): Promise<boolean> {
  if (!isTreeSize(index) || !isTreeSize(treeSize) || index >= treeSize) return false;
  if (!isHash(leafHash) || !isHash(root) || !Array.isArray(proof) || !proof.every(isHash)) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r: Uint8Array = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      r = await merkleNodeHash(p, r);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = await merkleNodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalBytes(r, root);
}
