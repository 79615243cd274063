import { z } from 'zod';
import { ActionClass } from './action-class.js';
import { EvidenceRef } from './evidence-ref.js';
import { Id, Ref, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { RiskBand } from './risk-band.js';
import { LongText, ResourceName, Text } from './text.js';

/**
 * What an approver sees (Hermit 16.7). Stored as an approval.packet artifact;
 * if anything policy-relevant changes, a new packet is required, never a silent reuse.
 */
export const ApprovalPacket = z
  .strictObject({
    task_id: Id,
    step_id: Id,
    attempt_id: Id,
    action_request_id: Id,
    action_class: ActionClass,
    action_summary: Text,
    risk_band: RiskBand,
    risk_summary: Text,
    decision_rationale: LongText,
    evidence_refs: z.array(EvidenceRef).max(LIMITS.listItems),
    expected_effects: z.array(Text).max(LIMITS.shortListItems),
    impacted_resources: z.array(ResourceName).max(LIMITS.listItems),
    rollback_available: z.boolean(),
    expires_at: Timestamp.describe('After this instant the approval request expires.'),
    state_witness_ref: Ref.optional().describe('The state.witness artifact captured for a delayed high-risk action.'),
    policy_result_ref: Ref,
  })
  .meta({ title: 'ApprovalPacket', description: 'The inspectable packet an approver decides on (Hermit 16.7).' });
export type ApprovalPacket = z.infer<typeof ApprovalPacket>;
