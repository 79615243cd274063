import {
  ConsistencyProof,
  InclusionProof,
  SignedTreeHead,
  TransparencyLogEntryAppended,
  TransparencyLogReceiptRefused,
  TransparencyLogTreeHeadSigned,
  TreeHead,
  safeParseContract,
} from '@writ/contracts';
import { bytesToHex, hexToBytes, merkleLeafHash, verifyConsistency } from '@writ/crypto';
import type { z } from 'zod';
import { MerkleTree } from './merkle-tree.js';
import { TlogError } from './tlog-errors.js';

/** The event types of the log (`writ.evt.transparency_log.<log_id>`). */
export const TLOG_EVENTS = Object.freeze({
  entryAppended: 'tlog.entry_appended',
  treeHeadSigned: 'tlog.tree_head_signed',
  receiptRefused: 'tlog.receipt_refused',
});

/** The leaf hash of a receipt: SHA-256(0x00 ‖ the 32 bytes of its `receipt_hash`), hex. */
export function receiptLeafHash(receiptHash: string): string {
  return bytesToHex(merkleLeafHash(hexToBytes(receiptHash)));
}

/** A stored event of the log, as the fold reads it (the adapter has verified its hash chain). */
export interface TlogEvent {
  readonly event_type: string;
  readonly task_seq: number;
  readonly payload: unknown;
}

/** What the log needs of a `receipt.issued` event to make it a leaf. */
export interface IssuedReceipt {
  readonly receipt_id: string;
  readonly task_id: string;
  readonly receipt_hash: string;
  /** `event_id` of the `receipt.issued` event. */
  readonly receipt_event_id: string;
}

/** Where the last leaf came from: the sequencer resumes its scan of the task streams after that event. */
export interface LastLeaf {
  readonly task_id: string;
  readonly receipt_event_id: string;
}

/**
 * The receipt transparency log folded from its events: the Merkle tree of
 * the receipts in sequencing order, which receipt is which leaf, and the
 * signed tree heads published so far. Pure (no I/O, no clock): the keeper
 * feeds it events and asks it what to append next.
 *
 * `apply` re-checks everything a reader can recompute — leaf hashes, dense
 * indices, one leaf per receipt, heads matching the tree at their size and
 * never going backwards — and throws the TLOG_* code of the first break
 * without changing anything, so a tampered log is refused rather than served.
 */
export class TransparencyLog {
  readonly #tree = new MerkleTree();
  readonly #leafByReceipt = new Map<string, number>();
  readonly #headBySize = new Map<number, SignedTreeHead>();
  /** Refused `receipt.issued` events by event id, and the latest refusal of each receipt id they claimed. */
  readonly #refusalByEvent = new Map<string, TransparencyLogReceiptRefused>();
  readonly #refusalByReceipt = new Map<string, TransparencyLogReceiptRefused>();
  #latestHead: SignedTreeHead | undefined;
  #lastLeaf: LastLeaf | undefined;
  #seq = 0;

  constructor(readonly logId: string) {}

  /** Leaves so far. */
  get size(): number {
    return this.#tree.size;
  }

  /** `task_seq` of the last event folded (0 for a new log): the guard of the next append. */
  get seq(): number {
    return this.#seq;
  }

  get latestHead(): SignedTreeHead | undefined {
    return this.#latestHead;
  }

  get lastLeaf(): LastLeaf | undefined {
    return this.#lastLeaf;
  }

  /** The receipt's leaf index, if it is in the log. */
  leafIndexOf(receiptId: string): number | undefined {
    return this.#leafByReceipt.get(receiptId);
  }

  /** Refused `receipt.issued` events so far. */
  get refusals(): number {
    return this.#refusalByEvent.size;
  }

  /**
   * The latest refusal of a `receipt.issued` claiming this receipt id, if any.
   * Not an answer on its own: a forged event may claim a real receipt's id, so
   * a leaf of that id always wins (ask `leafIndexOf` first).
   */
  refusalOf(receiptId: string): TransparencyLogReceiptRefused | undefined {
    return this.#refusalByReceipt.get(receiptId);
  }

  /** The signed tree head published at `treeSize`, if any. */
  headAt(treeSize: number): SignedTreeHead | undefined {
    return this.#headBySize.get(treeSize);
  }

  /** Root hash (hex) of the tree of the first `treeSize` leaves. */
  rootHash(treeSize: number = this.size): string {
    return bytesToHex(this.#tree.root(treeSize));
  }

  /** Folds the next event of the log (`task_seq` = seq + 1); throws a TLOG_* corruption code and changes nothing if it does not hold. */
  apply(event: TlogEvent): void {
    if (event.task_seq !== this.#seq + 1) {
      throw new TlogError('TLOG_CHAIN_BROKEN', `event task_seq ${event.task_seq} of log ${this.logId} does not follow ${this.#seq}`, {
        details: { log_id: this.logId, task_seq: event.task_seq, expected: this.#seq + 1 },
      });
    }
    if (event.event_type === TLOG_EVENTS.entryAppended) this.#applyEntry(this.#parse(TransparencyLogEntryAppended, event));
    else if (event.event_type === TLOG_EVENTS.treeHeadSigned) this.#applyHead(this.#parse(TransparencyLogTreeHeadSigned, event));
    else if (event.event_type === TLOG_EVENTS.receiptRefused) this.#applyRefusal(this.#parse(TransparencyLogReceiptRefused, event));
    else {
      throw new TlogError('TLOG_EVENT_INVALID', `event ${event.event_type} at task_seq ${event.task_seq} does not belong in transparency log ${this.logId}`, {
        details: { log_id: this.logId, task_seq: event.task_seq, event_type: event.event_type },
      });
    }
    this.#seq = event.task_seq;
  }

  /** The entry that makes `receipt` the next leaf, or null when it already is a leaf (sequencing is idempotent per receipt). */
  planEntry(receipt: IssuedReceipt): TransparencyLogEntryAppended | null {
    if (this.#leafByReceipt.has(receipt.receipt_id)) return null;
    return {
      log_id: this.logId,
      leaf_index: this.size,
      receipt_id: receipt.receipt_id,
      task_id: receipt.task_id,
      receipt_hash: receipt.receipt_hash,
      leaf_hash: receiptLeafHash(receipt.receipt_hash),
      receipt_event_id: receipt.receipt_event_id,
    };
  }

  /**
   * The record of a refused `receipt.issued`, or null when that event is
   * already recorded as refused (refusing is idempotent per event). A refusal
   * never blocks a leaf: the receipt of another, valid `receipt.issued` with
   * the same id is still sequenced.
   */
  planRefusal(refusal: Omit<TransparencyLogReceiptRefused, 'log_id'>): TransparencyLogReceiptRefused | null {
    if (this.#refusalByEvent.has(refusal.receipt_event_id)) return null;
    return { log_id: this.logId, ...refusal };
  }

  /**
   * The tree head to sign at `now` (RFC 3339), or null when the tree has not
   * grown since the latest head. Before anything is signed, the new tree is
   * proven consistent with the latest head (RFC 9162 consistency proof,
   * verified): a head never contradicts an earlier one. Its timestamp never
   * goes back either (another instance's clock may run ahead).
   */
  planTreeHead(now: string): TreeHead | null {
    const latest = this.#latestHead;
    if (latest !== undefined && this.size <= latest.tree_size) return null;
    const root = this.#tree.root();
    if (latest !== undefined) {
      const proof = this.#tree.consistencyPath(latest.tree_size, this.size);
      if (!verifyConsistency(latest.tree_size, this.size, hexToBytes(latest.root_hash), root, proof)) {
        throw new TlogError('TLOG_TREE_HEAD_INVALID', `the tree of ${this.size} leaves is not consistent with the head of ${latest.tree_size} leaves; nothing was signed`, {
          details: { log_id: this.logId, tree_size: this.size, previous_size: latest.tree_size },
        });
      }
    }
    const timestamp = latest !== undefined && Date.parse(latest.timestamp) > Date.parse(now) ? latest.timestamp : now;
    return { log_id: this.logId, tree_size: this.size, root_hash: bytesToHex(root), timestamp };
  }

  /** RFC 9162 inclusion proof of the receipt in the tree of `treeSize` leaves. */
  inclusionProof(receiptId: string, treeSize: number): InclusionProof {
    const leafIndex = this.#leafByReceipt.get(receiptId);
    if (leafIndex === undefined) throw receiptNotInLog(this.logId, receiptId, this.size);
    if (!Number.isSafeInteger(treeSize) || treeSize <= leafIndex || treeSize > this.size) {
      throw new TlogError('TLOG_TREE_SIZE_INVALID', `tree_size ${treeSize} must be above the receipt's leaf index ${leafIndex} and at most the log's size ${this.size}`, {
        details: { log_id: this.logId, receipt_id: receiptId, leaf_index: leafIndex, tree_size: treeSize, log_size: this.size },
      });
    }
    return {
      log_id: this.logId,
      leaf_index: leafIndex,
      tree_size: treeSize,
      leaf_hash: bytesToHex(this.#tree.leafHash(leafIndex)),
      audit_path: this.#tree.inclusionPath(leafIndex, treeSize).map(bytesToHex),
    };
  }

  /** RFC 9162 consistency proof between the trees of `firstSize` and `secondSize` leaves. */
  consistencyProof(firstSize: number, secondSize: number): ConsistencyProof {
    if (!Number.isSafeInteger(firstSize) || !Number.isSafeInteger(secondSize) || firstSize < 0 || firstSize > secondSize || secondSize > this.size) {
      throw new TlogError('TLOG_TREE_SIZE_INVALID', `need 0 <= first_size (${firstSize}) <= second_size (${secondSize}) <= the log's size (${this.size})`, {
        details: { log_id: this.logId, first_size: firstSize, second_size: secondSize, log_size: this.size },
      });
    }
    return { log_id: this.logId, first_size: firstSize, second_size: secondSize, path: this.#tree.consistencyPath(firstSize, secondSize).map(bytesToHex) };
  }

  #applyEntry(entry: TransparencyLogEntryAppended): void {
    this.#checkLogId(entry.log_id, 'entry');
    if (entry.leaf_index !== this.size) {
      throw new TlogError('TLOG_LEAF_INDEX_INVALID', `leaf ${entry.leaf_index} of log ${this.logId} arrives where leaf ${this.size} belongs`, {
        details: { log_id: this.logId, leaf_index: entry.leaf_index, expected: this.size, receipt_id: entry.receipt_id },
      });
    }
    if (this.#leafByReceipt.has(entry.receipt_id)) {
      throw new TlogError('TLOG_RECEIPT_DUPLICATED', `receipt ${entry.receipt_id} is already leaf ${String(this.#leafByReceipt.get(entry.receipt_id))} of log ${this.logId}`, {
        details: { log_id: this.logId, receipt_id: entry.receipt_id, leaf_index: entry.leaf_index },
      });
    }
    const recomputed = receiptLeafHash(entry.receipt_hash);
    if (recomputed !== entry.leaf_hash) {
      throw new TlogError('TLOG_LEAF_HASH_MISMATCH', `leaf ${entry.leaf_index} of log ${this.logId} (receipt ${entry.receipt_id}) has leaf_hash ${entry.leaf_hash}, but its receipt_hash gives ${recomputed}`, {
        details: { log_id: this.logId, leaf_index: entry.leaf_index, receipt_id: entry.receipt_id },
      });
    }
    this.#tree.append(hexToBytes(recomputed));
    this.#leafByReceipt.set(entry.receipt_id, entry.leaf_index);
    this.#lastLeaf = { task_id: entry.task_id, receipt_event_id: entry.receipt_event_id };
  }

  #applyHead(head: SignedTreeHead): void {
    this.#checkLogId(head.log_id, 'tree head');
    const latest = this.#latestHead;
    const invalid = (reason: string): TlogError =>
      new TlogError('TLOG_TREE_HEAD_INVALID', `the tree head of size ${head.tree_size} in log ${this.logId} ${reason}`, {
        details: { log_id: this.logId, tree_size: head.tree_size, log_size: this.size },
      });
    if (head.tree_size > this.size) throw invalid(`names more leaves than the log held when it was signed (${this.size})`);
    if (latest !== undefined && head.tree_size < latest.tree_size) throw invalid(`goes back from the earlier head of size ${latest.tree_size}`);
    if (latest !== undefined && Date.parse(head.timestamp) < Date.parse(latest.timestamp)) throw invalid(`is dated before the earlier head (${latest.timestamp})`);
    if (this.rootHash(head.tree_size) !== head.root_hash) throw invalid('does not match the root of the tree at that size');
    this.#headBySize.set(head.tree_size, head);
    this.#latestHead = head;
  }

  /** A refusal changes no leaf and no head; a second one of the same event keeps the first. */
  #applyRefusal(refusal: TransparencyLogReceiptRefused): void {
    this.#checkLogId(refusal.log_id, 'refusal');
    if (this.#refusalByEvent.has(refusal.receipt_event_id)) return;
    this.#refusalByEvent.set(refusal.receipt_event_id, refusal);
    if (refusal.receipt_id !== null) this.#refusalByReceipt.set(refusal.receipt_id, refusal);
  }

  #checkLogId(logId: string, what: string): void {
    if (logId !== this.logId) {
      throw new TlogError('TLOG_EVENT_INVALID', `a ${what} of log ${logId} is stored in log ${this.logId}`, { details: { log_id: this.logId, found: logId } });
    }
  }

  #parse<S extends z.ZodType>(schema: S, event: TlogEvent): z.output<S> {
    const parsed = safeParseContract(event.event_type, schema, event.payload);
    if (!parsed.ok) {
      throw new TlogError('TLOG_EVENT_INVALID', `${event.event_type} at task_seq ${event.task_seq} of log ${this.logId} breaks its contract`, {
        cause: parsed.error,
        details: { log_id: this.logId, task_seq: event.task_seq },
      });
    }
    return parsed.value;
  }
}

/** RECEIPT_NOT_IN_LOG: not a leaf (yet); the sequencer reaches a receipt shortly after it is issued. */
export function receiptNotInLog(logId: string, receiptId: string, size: number): TlogError {
  return new TlogError('RECEIPT_NOT_IN_LOG', `receipt ${receiptId} is not in transparency log ${logId} (yet): it is sequenced shortly after it is issued; ask again`, {
    details: { log_id: logId, receipt_id: receiptId, tree_size: size },
  });
}

/** TLOG_RECEIPT_REFUSED: a `receipt.issued` claiming this receipt id was refused, and no valid one is a leaf. */
export function receiptRefused(logId: string, receiptId: string, refusal: TransparencyLogReceiptRefused): TlogError {
  return new TlogError('TLOG_RECEIPT_REFUSED', `a receipt.issued claiming receipt ${receiptId} (event ${refusal.receipt_event_id} of task ${refusal.task_id}) was refused by transparency log ${logId}: ${refusal.code}: ${refusal.reason}`, {
    details: { log_id: logId, receipt_id: receiptId, refusal: refusal.code, receipt_event_id: refusal.receipt_event_id, task_id: refusal.task_id },
  });
}

/** A TreeHead exactly as signed: the contract's fields, nothing else (its RFC 8785 form is the JWS payload). */
export function treeHeadOf(head: TreeHead | SignedTreeHead): TreeHead {
  return { log_id: head.log_id, tree_size: head.tree_size, root_hash: head.root_hash, timestamp: head.timestamp };
}
