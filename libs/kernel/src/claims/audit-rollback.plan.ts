import { LIMITS, type ReceiptRollback, type RollbackStep } from '@writ/contracts';
import type { ExecutedChange } from './file-ownership.audit.js';

/** What the log says of the receipt that closed the action behind one execution. */
export interface ReceiptedExecution {
  readonly receipt_id: string;
  /** Its receipt_hash; a rollback is bound to it (absent: the receipt cannot be named by a rollback). */
  readonly receipt_hash: string | null;
  /** Its rollback metadata (absent on receipts older than rollback metadata). */
  readonly rollback: ReceiptRollback | null;
  /** Where `receipt.issued` sits in the task's order. */
  readonly seq: number;
}

/** One rollback the audit asks for: a receipt's own rollback, as `writ rollback` would submit it. */
export interface AuditRollback {
  readonly receipt_id: string;
  readonly receipt_hash: string;
  readonly steps: readonly RollbackStep[];
  /** The flagged paths this rollback puts back (its steps may name more: a receipt's rollback undoes its whole action). */
  readonly paths: readonly string[];
}

/** A flagged path Writ cannot put back, and why. */
export interface UnrollableChange {
  readonly path: string;
  readonly receipt_id: string | null;
  readonly reason: string;
}

export interface AuditRollbackPlan {
  /** Latest receipt first: each rollback expects the path as its action left it, so later changes are undone first. */
  readonly rollbacks: readonly AuditRollback[];
  readonly unrollable: readonly UnrollableChange[];
}

const NO_RECEIPT = 'no receipt closes the execution that changed it, so no rollback can be named';

/**
 * The rollbacks a failed file-ownership audit proposes (seed 003: a Sacred
 * Scope modification is rolled back). For every flagged change, the receipt
 * of the action that made it: when that receipt names
 * `compensating_local_actions`, its rollback is proposed (once per receipt,
 * latest receipt first, because each step expects the path to hold what its
 * own action left); when it names none, the path is listed as unrollable
 * with the receipt's own statement. A receipt that changed one flagged path
 * it cannot undo still has its rollback proposed for the others; a path is
 * unrollable as soon as one change of it cannot be undone, since the
 * rollbacks after it would not reach the bytes the task started from (and a
 * receipt left with only such paths is not proposed).
 */
export function planAuditRollback(flagged: readonly ExecutedChange[], receiptOf: (executionEventId: string) => ReceiptedExecution | undefined): AuditRollbackPlan {
  const byReceipt = new Map<string, { receipt: ReceiptedExecution; hash: string; steps: readonly RollbackStep[]; paths: Set<string> }>();
  const unrollable = new Map<string, UnrollableChange>();
  for (const change of flagged) {
    const receipt = receiptOf(change.execution_event_id);
    const blocked = (reason: string) => {
      if (!unrollable.has(change.path)) unrollable.set(change.path, { path: change.path, receipt_id: receipt?.receipt_id ?? null, reason: clip(reason) });
    };
    if (receipt === undefined) {
      blocked(NO_RECEIPT);
      continue;
    }
    const rollback = receipt.rollback;
    if (rollback === null || rollback.method !== 'compensating_local_actions' || receipt.receipt_hash === null) {
      blocked(`receipt ${receipt.receipt_id} names no rollback method: ${rollback?.statement ?? 'it predates rollback metadata'}`);
      continue;
    }
    if (!rollback.steps.some((step) => step.path === change.path)) {
      blocked(`receipt ${receipt.receipt_id}'s rollback has no step for this path`);
      continue;
    }
    const entry = byReceipt.get(receipt.receipt_id) ?? { receipt, hash: receipt.receipt_hash, steps: rollback.steps, paths: new Set<string>() };
    entry.paths.add(change.path);
    byReceipt.set(receipt.receipt_id, entry);
  }
  const rollbacks = [...byReceipt.values()]
    .sort((a, b) => b.receipt.seq - a.receipt.seq)
    .slice(0, LIMITS.listItems)
    .map((entry) => ({ receipt_id: entry.receipt.receipt_id, receipt_hash: entry.hash, steps: entry.steps, paths: [...entry.paths].filter((path) => !unrollable.has(path)) }))
    // A receipt whose flagged paths are all unrollable anyway would only move them between two states the task left.
    .filter((rollback) => rollback.paths.length > 0);
  return { rollbacks, unrollable: [...unrollable.values()] };
}

function clip(text: string): string {
  return text.length <= LIMITS.text ? text : `${text.slice(0, LIMITS.text - 3)}...`;
}
