import { z } from 'zod';
import { RowId, RowInstant, RowRef, RowText, RowVersion } from './row-fields.js';

/**
 * `<root>.proj.decisions.<decision_id>`: one decision of a task's timeline
 * (the Decision of `policy.evaluated` or of `decision.recorded`), free text
 * redacted as the timeline is. Keyed by (task_id, task_seq) in its table.
 */
export const DecisionRowSchema = z.strictObject({
  task_id: RowId,
  task_seq: z.int().min(0),
  decision_id: RowId,
  /** `policy.evaluated` or `decision.recorded`. */
  source: z.string(),
  step_id: RowRef,
  attempt_id: RowRef,
  /** Hermit 16.1 class: `safety`, `execution`, ... */
  decision_type: RowText,
  summary: RowText,
  rationale: RowText,
  risk_level: RowText,
  decided_by: RowRef,
  reversible: z.boolean().nullable(),
  evidence_refs: z.array(z.unknown()),
  /** policy.evaluated: the policy result and what it said. */
  policy_result_id: RowRef,
  policy_outcome: RowText,
  policy_profile: RowText,
  policy_version: RowText,
  /** decision.recorded: what was decided on (`approval:<id>`) and the event it was appended with. */
  subject_ref: RowText,
  outcome_event: RowText,
  stream_seq: z.int().min(1),
  created_at: RowInstant,
  row_version: RowVersion,
});
export type DecisionRow = z.infer<typeof DecisionRowSchema>;
