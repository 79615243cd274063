import { z } from 'zod';
import { Id, Sha256Hex, Timestamp } from '../ids.js';
import { Text } from '../text.js';

/**
 * The receipt transparency log (Hermit 18.3 `signed_with_inclusion_proof`):
 * an append-only Merkle tree with RFC 9162 hashing whose leaves are receipts,
 * in the order the receipt service sequenced them. Its events go to
 * `writ.evt.transparency_log.<log_id>`; the tree is rebuilt from them alone.
 *
 * Leaf input: the 32 bytes of a receipt's `receipt_hash` (SHA-256 of the
 * receipt's RFC 8785 body), so `leaf_hash` = SHA-256(0x00 ‖ receipt_hash bytes)
 * and anyone holding the receipt recomputes it.
 */

/** `writ.qry.receipt.*` proofs cover trees of at most this many leaves. */
const TreeSize = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** A Merkle audit or consistency path: at most one hash per tree level. */
const MerklePath = z.array(Sha256Hex).max(64);

/** `JWS` `typ` of a signed tree head. */
export const TREE_HEAD_JWS_TYPE = 'writ-tree-head+jws';

/** The log's state at one size: what a signed tree head signs (its RFC 8785 form is the JWS payload). */
export const TreeHead = z.strictObject({
  log_id: Id,
  tree_size: TreeSize,
  /** RFC 9162 root hash (hex); for size 0, SHA-256 of the empty string. */
  root_hash: Sha256Hex,
  timestamp: Timestamp,
});
export type TreeHead = z.infer<typeof TreeHead>;

/** A tree head signed by the receipt service: `jws` is a compact EdDSA JWS (`typ` TREE_HEAD_JWS_TYPE, `kid` = signer_ref) whose payload is the canonical TreeHead. */
export const SignedTreeHead = TreeHead.extend({
  signer_ref: z.string().min(1).max(128),
  jws: z.string().min(1).max(4096),
});
export type SignedTreeHead = z.infer<typeof SignedTreeHead>;

/** `tlog.entry_appended`: one receipt became leaf `leaf_index` (0-based; indices are dense and never reused). */
export const TransparencyLogEntryAppended = z.strictObject({
  log_id: Id,
  leaf_index: TreeSize,
  receipt_id: Id,
  task_id: Id,
  receipt_hash: Sha256Hex,
  leaf_hash: Sha256Hex,
  /** `event_id` of the `receipt.issued` event on the task stream. */
  receipt_event_id: Id,
});
export type TransparencyLogEntryAppended = z.infer<typeof TransparencyLogEntryAppended>;

/**
 * Why the receipt service refused to make a `receipt.issued` a leaf (DESIGN
 * invariant 9: a receipt is not trusted for merely being in the log). Closed;
 * readers branch on the code.
 */
export const TlogRefusalCode = z.enum([
  /** The payload is not a `ReceiptIssued` carrying a valid Receipt. */
  'TLOG_RECEIPT_INVALID',
  /** `receipt_hash` is not SHA-256 of the receipt's RFC 8785 body. */
  'TLOG_RECEIPT_HASH_MISMATCH',
  /** No `signature` or `signer_ref`. */
  'TLOG_RECEIPT_UNSIGNED',
  /** Signed by a kid the receipt service principal never had (as its stream in the log says). */
  'TLOG_RECEIPT_KEY_UNKNOWN',
  /** A key of the receipt service principal, but not valid at the receipt's `created_at` (added later, or revoked before). */
  'TLOG_RECEIPT_KEY_NOT_VALID',
  /** The signature does not verify, signs another body, or is not the one `signer_ref` names. */
  'TLOG_RECEIPT_SIGNATURE_INVALID',
  /** The receipt names another task than the stream it was appended to. */
  'TLOG_RECEIPT_TASK_MISMATCH',
]);
export type TlogRefusalCode = z.infer<typeof TlogRefusalCode>;

/**
 * `tlog.receipt_refused`: a `receipt.issued` of a task stream that the log
 * will never make a leaf, and why. One per refused `receipt.issued` event, in
 * the stream order the sequencer met it (sequencing goes on past it).
 */
export const TransparencyLogReceiptRefused = z.strictObject({
  log_id: Id,
  task_id: Id,
  /** `event_id` of the refused `receipt.issued`. */
  receipt_event_id: Id,
  /** The receipt id the event claims, when it has a readable one (not trusted: it may be another receipt's). */
  receipt_id: Id.nullable(),
  code: TlogRefusalCode,
  reason: Text,
});
export type TransparencyLogReceiptRefused = z.infer<typeof TransparencyLogReceiptRefused>;

/** `tlog.tree_head_signed`: a signed tree head was published. */
export const TransparencyLogTreeHeadSigned = SignedTreeHead;
export type TransparencyLogTreeHeadSigned = z.infer<typeof TransparencyLogTreeHeadSigned>;

/** RFC 9162 section 2.1.3 inclusion proof of one leaf in the tree of `tree_size` leaves. */
export const InclusionProof = z.strictObject({
  log_id: Id,
  leaf_index: TreeSize,
  tree_size: TreeSize,
  leaf_hash: Sha256Hex,
  audit_path: MerklePath,
});
export type InclusionProof = z.infer<typeof InclusionProof>;

/** RFC 9162 section 2.1.4 consistency proof between two sizes of the same log. */
export const ConsistencyProof = z.strictObject({
  log_id: Id,
  first_size: TreeSize,
  second_size: TreeSize,
  path: MerklePath,
});
export type ConsistencyProof = z.infer<typeof ConsistencyProof>;

/** `writ.qry.receipt.tree-head` (request/reply): the latest signed tree head (signing one first when the log grew since the last). */
export const GetTreeHead = z.strictObject({});
export type GetTreeHead = z.infer<typeof GetTreeHead>;

/**
 * `writ.qry.receipt.inclusion-proof` (request/reply): the proof that a receipt
 * is in the log, against `tree_size` (default: the latest signed tree head,
 * which the reply carries). RECEIPT_NOT_IN_LOG while the receipt is not yet
 * sequenced.
 */
export const GetInclusionProof = z.strictObject({ receipt_id: Id, tree_size: TreeSize.optional() });
export type GetInclusionProof = z.infer<typeof GetInclusionProof>;

export const InclusionProofReply = z.strictObject({ proof: InclusionProof, tree_head: SignedTreeHead });
export type InclusionProofReply = z.infer<typeof InclusionProofReply>;

/** `writ.qry.receipt.consistency-proof` (request/reply): proof that the tree of `first_size` is a prefix of the tree of `second_size` (default: the latest signed tree head). */
export const GetConsistencyProof = z.strictObject({ first_size: TreeSize, second_size: TreeSize.optional() });
export type GetConsistencyProof = z.infer<typeof GetConsistencyProof>;

export const ConsistencyProofReply = z.strictObject({ proof: ConsistencyProof, tree_head: SignedTreeHead });
export type ConsistencyProofReply = z.infer<typeof ConsistencyProofReply>;
