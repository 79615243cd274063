import { z } from 'zod';
import { parseContract, safeParseContract, type ParseResult } from './contract-error.js';
import { Id, Sha256Hex } from './ids.js';
import { LIMITS } from './limits.js';
import { RollbackStep } from './receipt.js';
import { withRules } from './rules.js';

/**
 * The largest pre-image a rollback restores (64 MiB, the executor's largest
 * file artifact): the executor fetches it from the artifact store and writes
 * it back inside the cell. A receipt names no method for a larger one.
 */
export const ROLLBACK_RESTORE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * `params` of an ActionRequest of class `rollback` (Hermit 18.6): the receipt
 * whose rollback it runs, bound by its `receipt_hash`, and that receipt's
 * `rollback.steps` exactly as the receipt names them. The executor checks the
 * task's log holds that receipt with those steps, that every path still holds
 * what the rolled-back action left (`expected_sha256`), and only then applies
 * them: all of them or none.
 */
export const RollbackParams = withRules(
  z.strictObject({
    receipt_id: Id.describe('The receipt of the action rolled back (same task).'),
    receipt_hash: Sha256Hex.describe('Its receipt_hash: the rollback is bound to that exact receipt.'),
    steps: z.array(RollbackStep).min(1).max(LIMITS.listItems).describe("The receipt's rollback.steps, unchanged."),
  }),
  (params, report) => {
    const steps = params.steps;
    if (!Array.isArray(steps)) return;
    const seen = new Set<unknown>();
    steps.forEach((step: unknown, index) => {
      if (typeof step !== 'object' || step === null) return;
      const { action_class: cls, path, expected_sha256: expected, restore_artifact_ref: ref, restore_sha256: restore } = step as Record<string, unknown>;
      if (seen.has(path)) report(['steps', index, 'path'], 'names a path an earlier step already names');
      seen.add(path);
      if (cls === 'write_local' && (ref === undefined || restore === undefined)) report(['steps', index], 'a write_local step needs restore_artifact_ref and restore_sha256');
      if (cls === 'delete_local' && (ref !== undefined || restore !== undefined)) report(['steps', index], 'a delete_local step restores nothing: no restore_artifact_ref nor restore_sha256');
      if (cls === 'delete_local' && expected === null) report(['steps', index, 'expected_sha256'], 'a delete_local step removes a file that must be there');
    });
  },
).meta({ title: 'RollbackParams', description: 'params of a rollback ActionRequest: the receipt rolled back and its steps (Hermit 18.6).' });
export type RollbackParams = z.infer<typeof RollbackParams>;

/** Parses rollback params, throwing a `ContractError` (CONTRACT_INVALID) listing every offending path. */
export function parseRollbackParams(input: unknown): RollbackParams {
  return parseContract('RollbackParams', RollbackParams, input);
}

/** Parses rollback params without throwing. */
export function safeParseRollbackParams(input: unknown): ParseResult<RollbackParams> {
  return safeParseContract('RollbackParams', RollbackParams, input);
}
