import type { ConsistencyProof, TreeHead } from '@writ/contracts';
import { hexToBytes, verifyConsistency } from '@writ/crypto';

const HEX = /^[0-9a-f]{64}$/;

type Head = Pick<TreeHead, 'log_id' | 'tree_size' | 'root_hash'>;

/**
 * Why `proof` does not show that the log of `older` is a prefix of the log of
 * `newer` (the log did not fork or rewrite history between them), or
 * undefined when it does: one log, the proof's sizes are the heads' sizes, and
 * the RFC 9162 path reconciles both roots (libs/crypto `verifyConsistency`).
 */
export function consistencyFailure(older: Head, newer: Head, proof: ConsistencyProof): string | undefined {
  if (older.log_id !== newer.log_id || proof.log_id !== newer.log_id) return `the heads and the proof are not of one log (${older.log_id}, ${newer.log_id}, ${proof.log_id})`;
  if (proof.first_size !== older.tree_size || proof.second_size !== newer.tree_size) {
    return `the proof is between sizes ${proof.first_size} and ${proof.second_size}, the heads have ${older.tree_size} and ${newer.tree_size}`;
  }
  if (older.tree_size > newer.tree_size) return `the later head (${newer.tree_size} leaves) is smaller than the earlier (${older.tree_size})`;
  if (![older.root_hash, newer.root_hash, ...proof.path].every((hash) => HEX.test(hash))) return 'a hash of the heads or the proof is not 32 bytes of hex';
  const ok = verifyConsistency(older.tree_size, newer.tree_size, hexToBytes(older.root_hash), hexToBytes(newer.root_hash), proof.path.map(hexToBytes));
  return ok ? undefined : `the consistency path does not reconcile the root of size ${older.tree_size} with the root of size ${newer.tree_size}: the log forked or was rewritten`;
}
