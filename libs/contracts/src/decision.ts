import { z } from 'zod';
import { EvidenceRef } from './evidence-ref.js';
import { Id, Ref, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { RiskBand } from './risk-band.js';
import { LongText, Text } from './text.js';

/** Decision classes (Hermit 16.1). */
export const DecisionClass = z.enum(['planning', 'execution', 'safety', 'memory', 'publishing', 'rollback', 'uncertainty_resolution']);
export type DecisionClass = z.infer<typeof DecisionClass>;

/** A consequential judgment made by the system or a human (Hermit 8.8). */
export const Decision = z
  .strictObject({
    decision_id: Id,
    task_id: Id,
    step_id: Id.nullable().describe('null for a task-level decision.'),
    attempt_id: Id.nullable().describe('null when no attempt applies.'),
    decision_type: DecisionClass,
    summary: Text,
    rationale: LongText,
    evidence_refs: z.array(EvidenceRef).max(LIMITS.listItems),
    risk_level: RiskBand,
    decided_by: Id,
    reversible: z.boolean(),
    created_at: Timestamp,
    alternatives_considered: z.array(Text).max(LIMITS.shortListItems).optional(),
    policy_override_ref: Ref.optional(),
    effective_until: Timestamp.optional(),
    constraints_ref: Ref.optional(),
  })
  .meta({ title: 'Decision', description: 'A consequential judgment made by the system or a human (Hermit 8.8).' });
export type Decision = z.infer<typeof Decision>;
