import { WritError } from '@writ/contracts';

/** Codes of the receipt transparency log (docs/governed-path.md → Transparency log). */
export type TlogErrorCode =
  /** A `tlog.entry_appended` whose `leaf_hash` is not SHA-256(0x00 ‖ receipt_hash): the log was tampered with. */
  | 'TLOG_LEAF_HASH_MISMATCH'
  /** Leaf indices are not 0, 1, 2… in the order of the log (a gap, a repeat, or a reorder). */
  | 'TLOG_LEAF_INDEX_INVALID'
  /** One receipt is a leaf twice. */
  | 'TLOG_RECEIPT_DUPLICATED'
  /** An event of the log names another `log_id`, is of an unknown type, or its payload breaks the contract. */
  | 'TLOG_EVENT_INVALID'
  /** A signed tree head in the log does not match the tree at its size, or is smaller than an earlier one. */
  | 'TLOG_TREE_HEAD_INVALID'
  /** The log's event chain does not verify (an event was altered, dropped, reordered or forked). */
  | 'TLOG_CHAIN_BROKEN'
  /** The log failed verification earlier (see the cause) or is closing: no proof is served from it. */
  | 'TLOG_UNAVAILABLE'
  /** The receipt is not (yet) a leaf of the log: the sequencer has not reached it; ask again shortly. */
  | 'RECEIPT_NOT_IN_LOG'
  /** The receipt is not a leaf, and a `receipt.issued` claiming its id was refused (`tlog.receipt_refused`: details.refusal holds its code). */
  | 'TLOG_RECEIPT_REFUSED'
  /** A requested tree size is larger than the log, smaller than the leaf it should include, or `first_size` > `second_size`. */
  | 'TLOG_TREE_SIZE_INVALID'
  /** No signed tree head was published at the requested size: ask without `tree_size`, or with the size of a published head. */
  | 'TLOG_TREE_HEAD_NOT_FOUND';

export class TlogError extends WritError<TlogErrorCode> {
  constructor(code: TlogErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'TlogError';
  }
}

