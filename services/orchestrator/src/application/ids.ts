import { sha256Hex } from '@writ/crypto';

/** First 32 hex of SHA-256 over `parts` joined by `:`. */
function digest(...parts: readonly (string | number)[]): string {
  return sha256Hex(parts.join(':')).slice(0, 32);
}

/**
 * The Approval an attempt waits for after its `entry`-th policy evaluation:
 * the same attempt and entry always name the same approval, so a re-handled
 * `policy.evaluated` never opens a second one.
 */
export function approvalIdFor(taskId: string, attemptId: string, entry: number): string {
  return `apv-${digest(taskId, attemptId, entry)}`;
}

/** Event id of an event the orchestrator appends, from its idempotency key (unique per task). */
export function eventIdFor(taskId: string, idempotencyKey: string): string {
  return `orc-${digest(taskId, idempotencyKey)}`;
}

/** The verify run of a done claim: its ActionRequest, step and attempt ids (one per claim, whoever plans it). */
export function verifyIdsFor(taskId: string, claimId: string): { readonly actionRequestId: string; readonly stepId: string; readonly attemptId: string } {
  const hash = digest(taskId, claimId, 'verify');
  return { actionRequestId: `vfy-${hash}`, stepId: `stp-${hash}`, attemptId: `att-${hash}` };
}

/**
 * The rollback a failed file-ownership audit proposes for one receipt: its
 * ActionRequest (`arb-`, not the `rb-` of `writ rollback`, so an agent's own
 * submission never dedupes against it), step and attempt ids.
 */
export function auditRollbackIdsFor(taskId: string, receiptId: string): { readonly actionRequestId: string; readonly stepId: string; readonly attemptId: string } {
  const hash = digest(taskId, receiptId, 'audit-rollback');
  return { actionRequestId: `arb-${hash}`, stepId: `stp-${hash}`, attemptId: `att-${hash}` };
}

/** A Decision the orchestrator records, from what it decides on (`<claim_id>:refused`, `ownership-audit`). */
export function decisionIdFor(taskId: string, key: string): string {
  return `dec-${digest(taskId, key)}`;
}

/** The inbox question a legal block raises. */
export function questionIdFor(taskId: string, claimId: string): string {
  return `qst-${digest(taskId, claimId)}`;
}

/** A claim's id: `<prefix>-` + the first 32 hex of SHA-256 over its compact JWS, so the same signed claim is the same claim. */
export function claimIdFor(prefix: 'dcl' | 'bcl' | 'cor', jws: string): string {
  return `${prefix}-${sha256Hex(jws).slice(0, 32)}`;
}
