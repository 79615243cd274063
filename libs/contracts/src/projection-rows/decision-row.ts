import { z } from 'zod';
import { RowCount, RowId, RowTimestamp } from './row-fields.js';

/** One decision of a task's decision timeline: the `decisions` view, free text redacted like the timeline. */
export const DecisionRow = z
  .strictObject({
    task_id: RowId,
    task_seq: RowCount,
    decision_id: RowId,
    source: z.string().describe('policy.evaluated or decision.recorded.'),
    step_id: RowId.nullable(),
    attempt_id: RowId.nullable(),
    decision_type: z.string().nullable().describe('Hermit 16.1 class: safety, execution, ...'),
    summary: z.string().nullable(),
    rationale: z.string().nullable(),
    risk_level: z.string().nullable(),
    decided_by: z.string().nullable(),
    reversible: z.boolean().nullable(),
    evidence_refs: z.array(z.unknown()),
    policy_result_id: RowId.nullable().describe('policy.evaluated: the policy result and what it said.'),
    policy_outcome: z.string().nullable(),
    policy_profile: z.string().nullable(),
    policy_version: z.string().nullable(),
    subject_ref: z.string().nullable().describe('decision.recorded: what was decided on (approval:<id>).'),
    outcome_event: z.string().nullable().describe('decision.recorded: the event it was appended with.'),
    stream_seq: RowCount,
    created_at: RowTimestamp,
  })
  .meta({ title: 'DecisionRow', description: "One decision of a task's decision timeline (the decisions view)." });
export type DecisionRow = z.infer<typeof DecisionRow>;
