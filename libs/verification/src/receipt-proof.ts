import { TREE_HEAD_JWS_TYPE, TreeHead, type InclusionProof, type SignedTreeHead } from '@writ/contracts';
import { bytesToHex, fromUtf8, hexToBytes } from './bytes.js';
import { canonicalJson } from './canonical-json.js';
import { verifyCompactJws } from './compact-jws.js';
import type { PublicKeySet } from './ed25519-keys.js';
import { merkleLeafHash, verifyInclusion } from './merkle.js';

/**
 * The transparency-log half of a receipt's verification, as `writ tlog prove`
 * does it, with nothing taken on the server's word:
 * - `tree_head`: the head is signed (typ writ-tree-head+jws) by a trusted key
 *   whose kid is its `signer_ref`, over exactly the RFC 8785 form of its four fields;
 * - `leaf`: the proof's leaf hash is SHA-256(0x00 ‖ the receipt hash recomputed
 *   from the receipt's body), not whatever hash the receipt claims;
 * - `inclusion`: the audit path leads from that leaf to the signed root (RFC 9162),
 *   the proof being for the head's log and size.
 */

export type ProofCheckName = 'tree_head' | 'leaf' | 'inclusion';

export type ProofCheckCode =
  /** The head's JWS does not verify with a trusted key, or signs another head, or another key than its signer_ref. */
  | 'TLOG_TREE_HEAD_INVALID'
  /** The proof's leaf is not this receipt's body. */
  | 'TLOG_LEAF_MISMATCH'
  /** The audit path does not lead to the signed root (or is for another log or size). */
  | 'TLOG_INCLUSION_INVALID';

export interface ProofCheck {
  readonly name: ProofCheckName;
  readonly result: 'pass' | 'fail' | 'skip';
  readonly code?: ProofCheckCode;
  readonly message: string;
}

export async function checkTreeHead(head: SignedTreeHead, keys: PublicKeySet): Promise<ProofCheck> {
  const fail = (message: string): ProofCheck => ({ name: 'tree_head', result: 'fail', code: 'TLOG_TREE_HEAD_INVALID', message });
  const summary = `log ${head.log_id}, ${head.tree_size} leaves, root ${head.root_hash}, ${head.timestamp}`;
  let payload: string;
  let kid: string;
  try {
    const verified = await verifyCompactJws(head.jws, keys, { typ: TREE_HEAD_JWS_TYPE });
    payload = fromUtf8(verified.payload);
    kid = verified.kid;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    return fail(`${summary}: the signature does not verify with a trusted key (${typeof code === 'string' ? code : 'JWS_INVALID'})`);
  }
  const parsed = TreeHead.safeParse({ log_id: head.log_id, tree_size: head.tree_size, root_hash: head.root_hash, timestamp: head.timestamp });
  if (!parsed.success || payload !== canonicalJson(parsed.data)) return fail(`${summary}: the JWS signs another head than this one`);
  if (kid !== head.signer_ref) return fail(`${summary}: signed by ${kid}, not its signer_ref ${head.signer_ref}`);
  return { name: 'tree_head', result: 'pass', message: `${summary}; signed by ${kid}` };
}

/**
 * The leaf and inclusion checks for a receipt whose body hashes to
 * `recomputedHash` (`verifyReceiptDocument`'s, never the claimed one).
 */
export async function checkInclusion(recomputedHash: string | null, proof: InclusionProof, head: SignedTreeHead): Promise<ProofCheck[]> {
  const receiptHash = recomputedHash === null ? undefined : hexToBytes(recomputedHash);
  if (receiptHash === undefined) {
    return [
      { name: 'leaf', result: 'fail', code: 'TLOG_LEAF_MISMATCH', message: 'the receipt body cannot be hashed, so it is no leaf' },
      { name: 'inclusion', result: 'skip', message: 'needs the leaf' },
    ];
  }
  const leaf = bytesToHex(await merkleLeafHash(receiptHash));
  const leafCheck: ProofCheck =
    leaf === proof.leaf_hash
      ? { name: 'leaf', result: 'pass', message: `leaf ${proof.leaf_index} is SHA-256(0x00 ‖ ${recomputedHash}), the hash of this receipt's body` }
      : { name: 'leaf', result: 'fail', code: 'TLOG_LEAF_MISMATCH', message: `the proof's leaf ${proof.leaf_hash} is not SHA-256(0x00 ‖ ${recomputedHash}): the log holds another receipt body` };
  const audit = proof.audit_path.map(hexToBytes);
  const root = hexToBytes(head.root_hash);
  const included =
    proof.log_id === head.log_id &&
    proof.tree_size === head.tree_size &&
    root !== undefined &&
    audit.every((hash) => hash !== undefined) &&
    (await verifyInclusion(await merkleLeafHash(receiptHash), proof.leaf_index, head.tree_size, audit as Uint8Array[], root));
  const inclusionCheck: ProofCheck = included
    ? { name: 'inclusion', result: 'pass', message: `leaf ${proof.leaf_index} of ${head.tree_size}: the audit path of ${proof.audit_path.length} hash(es) leads to the signed root` }
    : { name: 'inclusion', result: 'fail', code: 'TLOG_INCLUSION_INVALID', message: `leaf ${proof.leaf_index} of ${proof.tree_size}: the audit path does not lead to the signed root of ${head.log_id} at ${head.tree_size} leaves` };
  return [leafCheck, inclusionCheck];
}
