import type { InclusionProof, TreeHead } from '@writ/contracts';
import { bytesToHex, hexToBytes, merkleLeafHash, verifyInclusion } from '@writ/crypto';

const HEX = /^[0-9a-f]{64}$/;

/** The RFC 9162 leaf hash of a receipt: SHA-256(0x00 ‖ the 32 bytes of its receipt_hash). */
export function receiptLeafHash(receiptHash: string): string {
  return bytesToHex(merkleLeafHash(hexToBytes(receiptHash)));
}

/**
 * Why `proof` does not show that the receipt with `receiptHash` is in the log
 * of `head`, or undefined when it does: same log and size as the head, the
 * leaf hash recomputed from the receipt, and the audit path leading to the
 * head's root (libs/crypto `verifyInclusion`, which never throws).
 */
export function inclusionFailure(receiptHash: unknown, proof: InclusionProof, head: Pick<TreeHead, 'log_id' | 'tree_size' | 'root_hash'>): string | undefined {
  if (typeof receiptHash !== 'string' || !HEX.test(receiptHash)) return 'the receipt has no receipt_hash to prove';
  if (proof.log_id !== head.log_id) return `the proof is for log ${proof.log_id}, the tree head for ${head.log_id}`;
  if (proof.tree_size !== head.tree_size) return `the proof is against a tree of ${proof.tree_size} leaves, the tree head has ${head.tree_size}`;
  const leaf = receiptLeafHash(receiptHash);
  if (proof.leaf_hash !== leaf) return 'leaf_hash is not SHA-256(0x00 ‖ receipt_hash)';
  if (![...proof.audit_path, head.root_hash].every((hash) => HEX.test(hash))) return 'a hash of the proof is not 32 bytes of hex';
  const ok = verifyInclusion(hexToBytes(leaf), proof.leaf_index, proof.tree_size, proof.audit_path.map(hexToBytes), hexToBytes(head.root_hash));
  return ok ? undefined : `the audit path of leaf ${proof.leaf_index} does not lead to the root of the tree head`;
}
