import { receiptCanonicalBody } from './receipt-verification.js';
import { sha256Hex } from './digest.js';

/**
 * The per-task receipt hash chain around one receipt: its `prev_receipt_hash`
 * must be the hash of the receipt issued just before it in the task (null for
 * the first), recomputed from that receipt's body, never read from its
 * `receipt_hash` (the bundle check `receipt.chain` of `writ verify`).
 */

export type ChainCheckCode = 'RECEIPT_CHAIN_BROKEN' | 'RECEIPT_NOT_IN_TASK';

export interface ChainCheck {
  readonly name: 'chain';
  readonly result: 'pass' | 'fail';
  readonly code?: ChainCheckCode;
  readonly message: string;
}

/**
 * `taskReceipts`: the task's receipts in the order their `receipt.issued`
 * events stand in the task's log (the timeline), as the log holds them.
 */
export async function checkReceiptChain(receipt: Readonly<Record<string, unknown>>, taskReceipts: readonly Readonly<Record<string, unknown>>[]): Promise<ChainCheck> {
  const position = taskReceipts.findIndex((candidate) => candidate['receipt_id'] === receipt['receipt_id']);
  if (position < 0) return { name: 'chain', result: 'fail', code: 'RECEIPT_NOT_IN_TASK', message: `no receipt.issued of ${String(receipt['receipt_id'])} in task ${String(receipt['task_id'])}'s timeline` };
  const previous = position === 0 ? undefined : taskReceipts[position - 1];
  const previousBody = previous === undefined ? undefined : receiptCanonicalBody(previous);
  const previousHash = previousBody === undefined ? null : await sha256Hex(previousBody);
  const link = (receipt['prev_receipt_hash'] as string | null | undefined) ?? null;
  if (previous !== undefined && previousHash === null) {
    return { name: 'chain', result: 'fail', code: 'RECEIPT_CHAIN_BROKEN', message: `the previous receipt ${String(previous['receipt_id'])} cannot be hashed` };
  }
  if (link !== previousHash) {
    return { name: 'chain', result: 'fail', code: 'RECEIPT_CHAIN_BROKEN', message: `prev_receipt_hash is ${link ?? 'null'}, the previous receipt's hash is ${previousHash ?? 'null (none)'}` };
  }
  return {
    name: 'chain',
    result: 'pass',
    message: previousHash === null ? 'the first receipt of the task: prev_receipt_hash is null' : `prev_receipt_hash links to the previous receipt ${String(previous?.['receipt_id'])} (${previousHash})`,
  };
}
