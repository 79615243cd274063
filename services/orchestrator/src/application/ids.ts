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
