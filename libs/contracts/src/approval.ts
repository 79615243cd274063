import { z } from 'zod';
import { Id, Name, Ref, Timestamp } from './ids.js';
import { isPresent, withRules } from './rules.js';
import { ApprovalStatus } from './states.js';
import { Text } from './text.js';

/**
 * A pause in the task graph pending a human or policy-authorized resolution,
 * attached to one attempt (Hermit 8.9, 12.4). `resolved_at` and `resolved_by`
 * are null while pending.
 */
export const Approval = withRules(
  z.strictObject({
    approval_id: Id,
    task_id: Id,
    step_id: Id,
    attempt_id: Id,
    status: ApprovalStatus,
    approval_type: Name.describe('What is being approved: action, policy_override, memory_promotion, rollback, ...'),
    requested_action_ref: Ref.describe('The ActionRequest awaiting approval.'),
    approval_packet_ref: Ref.describe('The approval.packet artifact shown to approvers.'),
    requested_at: Timestamp,
    resolved_at: Timestamp.nullable(),
    resolved_by: Id.nullable().describe('principal_id of the resolver; the system principal for expiry and invalidation.'),
    expires_at: Timestamp.optional(),
    constraints_ref: Ref.optional(),
    state_witness_ref: Ref.optional(),
    policy_result_ref: Ref.optional(),
    resolution_note: Text.optional().describe("The resolver's comment or the reason for expiry, cancellation or invalidation."),
  }),
  (approval, report) => {
    if (approval.status === 'pending') {
      if (isPresent(approval.resolved_at)) report(['resolved_at'], 'must be null while pending');
      if (isPresent(approval.resolved_by)) report(['resolved_by'], 'must be null while pending');
    } else if (typeof approval.status === 'string') {
      if (!isPresent(approval.resolved_at)) report(['resolved_at'], 'is required once resolved');
      if (!isPresent(approval.resolved_by)) report(['resolved_by'], 'is required once resolved');
    }
  },
).meta({ title: 'Approval', description: 'A pause pending a human or policy-authorized resolution (Hermit 8.9).' });
export type Approval = z.infer<typeof Approval>;
