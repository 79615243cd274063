import { z } from 'zod';
import { ActionClass } from './action-class.js';
import { ExecutionMode } from './execution-mode.js';
import { Id, Name, Ref, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { RiskBand } from './risk-band.js';
import { isPresent, withRules } from './rules.js';
import { ResourceName, Text } from './text.js';

/** Policy results (Hermit 16.5): evaluation returns exactly one. */
export const PolicyOutcome = z.enum(['allow', 'require_approval', 'deny', 'downgrade']);
export type PolicyOutcome = z.infer<typeof PolicyOutcome>;

/**
 * What a `downgrade` turns the request into (Hermit 11.4): a rewritten
 * lower-risk request, or an explicit restricted execution mode, or both.
 */
export const PolicyDowngrade = withRules(
  z.strictObject({
    rewritten_action_request_ref: Ref.optional().describe('The lower-risk ActionRequest, stored as an action.request artifact.'),
    restricted_mode: ExecutionMode.optional().describe('The execution mode the action is restricted to.'),
    summary: Text.describe('What was downgraded and why, e.g. "network_write downgraded to network_read".'),
  }),
  (downgrade, report) => {
    if (!isPresent(downgrade.rewritten_action_request_ref) && !isPresent(downgrade.restricted_mode)) {
      report(['restricted_mode'], 'a downgrade needs rewritten_action_request_ref or restricted_mode');
    }
  },
);
export type PolicyDowngrade = z.infer<typeof PolicyDowngrade>;

/** The outcome of evaluating one ActionRequest against the task's policy profile (Hermit 16.5). */
export const PolicyResult = withRules(
  z.strictObject({
    policy_result_id: Id,
    task_id: Id,
    step_id: Id,
    attempt_id: Id,
    action_request_id: Id,
    outcome: PolicyOutcome,
    action_class: ActionClass.describe('The class policy assigned, which may differ from the proposed one.'),
    risk_band: RiskBand,
    action_summary: Text,
    risk_summary: Text,
    policy_profile_ref: Ref,
    policy_version: z.string().min(1).max(128).describe('Version (content hash) of the policy profile evaluated.'),
    affected_resources: z.array(ResourceName).max(LIMITS.listItems),
    reasoning_summary: Text,
    matched_rules: z.array(Name).max(LIMITS.listItems).describe('Ids of the policy rules that decided the outcome.'),
    witness_required: z.boolean().describe('Whether a state witness must be captured and revalidated before execution.'),
    revalidation_conditions: z.array(Text).max(LIMITS.shortListItems).describe('Conditions to recheck before a delayed execution.'),
    approver_roles: z.array(Name).max(LIMITS.shortListItems).optional().describe('Roles that may approve (require_approval only).'),
    downgrade: PolicyDowngrade.optional().describe('Present exactly when outcome is downgrade.'),
    participant_scope_ref: Ref.optional().describe(
      'For an action of a participant (a spawned seed): `participant:<seed_id>@<manifest_hash>`, the manifest scope it was checked against.',
    ),
    evaluated_at: Timestamp,
    evaluated_by: Id.describe('principal_id of the policy engine.'),
  }),
  (result, report) => {
    const outcome = result.outcome;
    if (outcome === 'downgrade' && !isPresent(result.downgrade)) report(['downgrade'], 'is required when outcome is downgrade');
    if (typeof outcome === 'string' && outcome !== 'downgrade' && isPresent(result.downgrade)) report(['downgrade'], 'must be absent unless outcome is downgrade');
  },
).meta({ title: 'PolicyResult', description: 'The outcome of evaluating one ActionRequest against a policy profile (Hermit 16.5).' });
export type PolicyResult = z.infer<typeof PolicyResult>;
