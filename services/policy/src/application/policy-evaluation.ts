import {
  LIMITS,
  PolicyEvaluated,
  hasErrorCode,
  parseContract,
  type ActionRequest,
  type EvaluatePolicy,
  type PolicyCapabilityScope,
  type PolicyResult,
  type RiskBand,
} from '@writ/contracts';
import { classifyRisk, evaluateParticipantPolicy, evaluatePolicy, knowledgeLimitsOf, participantScopeRef, toPolicyResult, type PolicyEvaluation } from '@writ/kernel';
import { PolicyServiceError } from './policy-service.errors.js';
import type { ParticipantSnapshot, ProfileLookup } from './ports.js';
import type { LoadedProfile } from './profile-documents.js';

/** Ids and the clock reading of one evaluation, derived by the caller from the attempt and its policy entry. */
export interface EvaluationMetadata {
  readonly policy_result_id: string;
  readonly decision_id: string;
  /** RFC 3339, read at the adapter edge. */
  readonly now: string;
  /** The policy engine's principal. */
  readonly evaluated_by: string;
}

/** The participant proposing the action, when it is one: its stream as folded, and the calls admitted before this action. */
export interface ParticipantContext {
  readonly snapshot: ParticipantSnapshot;
  readonly calls: number;
}

/** Failures of evaluation that are the request's or the task's fault: recorded as a deny, never a crash. */
const REFUSED_AS_DENY = ['POLICY_PROFILE_UNKNOWN', 'POLICY_PROFILE_INVALID', 'POLICY_FACTS_INVALID'] as const;
type RefusalCode = (typeof REFUSED_AS_DENY)[number];

const clip = (text: string, max: number = LIMITS.text) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/** A Ref-safe spelling of a requested profile name (no whitespace or control characters). */
function refToken(name: string): string {
  return name.replace(/[\s\x00-\x1f\x7f]/g, '_').slice(0, 128) || 'unnamed';
}

function riskOf(request: ActionRequest): RiskBand {
  try {
    return classifyRisk(request, { files_owned: [] }).band;
  } catch {
    return 'high';
  }
}

/**
 * A deny recorded for an evaluation that could not run: an unknown profile
 * (POLICY_PROFILE_UNKNOWN), an invalid one, or facts that reach outside the
 * workspace (POLICY_FACTS_INVALID). Deny by default; the code is the matched
 * rule (lowercase) and leads the reasoning.
 */
export function refusalResult(
  code: RefusalCode,
  message: string,
  command: EvaluatePolicy,
  request: ActionRequest,
  meta: EvaluationMetadata,
  profile?: LoadedProfile,
  participantScope?: string,
): PolicyResult {
  const rule = code.toLowerCase();
  return {
    policy_result_id: meta.policy_result_id,
    task_id: command.task_id,
    step_id: command.step_id,
    attempt_id: command.attempt_id,
    action_request_id: request.action_request_id,
    outcome: 'deny',
    action_class: request.action_class,
    risk_band: riskOf(request),
    action_summary: clip(`${request.action_class} of ${request.target_resources.join(', ')}: ${request.reason}`),
    risk_summary: 'not assessed: the policy could not be evaluated',
    policy_profile_ref: profile === undefined ? `${refToken(command.policy_profile)}@unknown` : `${profile.record.profile_id}@${profile.record.version}`,
    policy_version: profile?.record.version ?? 'unknown',
    affected_resources: [],
    reasoning_summary: clip(`${rule}: ${code}: ${message}; deny by default`),
    matched_rules: [rule],
    witness_required: false,
    revalidation_conditions: [],
    ...(participantScope === undefined ? {} : { participant_scope_ref: participantScope }),
    evaluated_at: meta.now,
    evaluated_by: meta.evaluated_by,
  };
}

/**
 * Evaluates one EvaluatePolicy command (Hermit 16.5): the task's profile by
 * id as the profile store holds it now (its content version is recorded in
 * the result: `policy_version`, `policy_profile_ref` = `<id>@<version>`), the
 * kernel's pure `evaluatePolicy` with the task's files_owned and Sacred Scope
 * exceptions, `toPolicyResult`, and the Decision that records it (decision
 * class `safety`: whether an action may run). A downgrade carries its
 * rewritten request. Total for a valid command: a profile or facts policy
 * cannot use become a recorded deny.
 *
 * An action of a participant (a spawned seed) is evaluated against its
 * manifest scope first (`evaluateParticipantPolicy`: default deny outside
 * its capabilities, status, TTL and resource limits), in addition to the
 * profile; the result names the scope it was checked against
 * (`participant_scope_ref` = `participant:<seed_id>@<manifest_hash>`).
 */
export function evaluateCommand(
  command: EvaluatePolicy,
  request: ActionRequest,
  meta: EvaluationMetadata,
  profiles: ProfileLookup,
  participant?: ParticipantContext,
): PolicyEvaluated {
  let result: PolicyResult;
  let rewritten: ActionRequest | undefined;
  let scope: PolicyCapabilityScope | undefined;
  const profile = profiles.get(command.policy_profile);
  const seed = participant?.snapshot.state;
  const participantRef = seed === undefined ? undefined : participantScopeRef(seed.seed_id, seed.manifest_hash);
  try {
    if (profile === undefined) {
      throw new PolicyServiceError('POLICY_PROFILE_UNKNOWN', `the profile store holds no policy profile ${JSON.stringify(command.policy_profile)}`, {
        details: { profile_id: command.policy_profile },
      });
    }
    const facts = {
      files_owned: command.files_owned,
      ...(command.sacred_exceptions === undefined ? {} : { sacred_exceptions: command.sacred_exceptions }),
    };
    const evaluation: PolicyEvaluation =
      participant === undefined
        ? evaluatePolicy(request, profile.prepared, facts)
        : evaluateParticipantPolicy(request, profile.prepared, facts, {
            scope: participant.snapshot.scope,
            manifest_hash: participant.snapshot.state.manifest_hash,
            status: participant.snapshot.state.status,
            now: meta.now,
            // Writ does not meter tokens (max_tokens is not enforced here); calls are the log's.
            usage: { calls: participant.calls, tokens: 0 },
          });
    rewritten = evaluation.downgrade?.action_request;
    // The ceiling the approval service narrows the grant to (egress, secret handles, wall clock).
    scope = {
      write_paths: [...evaluation.capability_scope.write_paths],
      egress_hosts: [...evaluation.capability_scope.egress_hosts],
      secret_handles: [...evaluation.capability_scope.secret_handles],
      max_wall_clock_ms: evaluation.capability_scope.max_wall_clock_ms,
    };
    result = toPolicyResult(evaluation, request, {
      policy_result_id: meta.policy_result_id,
      task_id: command.task_id,
      step_id: command.step_id,
      attempt_id: command.attempt_id,
      evaluated_at: meta.now,
      evaluated_by: meta.evaluated_by,
      policy_profile_ref: `${profile.record.profile_id}@${profile.record.version}`,
      ...(rewritten === undefined ? {} : { rewritten_action_request_ref: `action_request:${rewritten.action_request_id}` }),
      ...(participantRef === undefined ? {} : { participant_scope_ref: participantRef }),
    });
  } catch (error) {
    const code = REFUSED_AS_DENY.find((c) => hasErrorCode(error, c));
    if (code === undefined) throw error;
    rewritten = undefined;
    scope = undefined;
    result = refusalResult(code, (error as Error).message, command, request, meta, profile, participantRef);
  }
  return parseContract('PolicyEvaluated', PolicyEvaluated, {
    policy_result: result,
    decision: {
      decision_id: meta.decision_id,
      task_id: command.task_id,
      step_id: command.step_id,
      attempt_id: command.attempt_id,
      decision_type: 'safety',
      summary: clip(`policy ${result.outcome}: ${result.action_summary}`),
      rationale: clip(result.reasoning_summary, LIMITS.longText),
      evidence_refs: [],
      risk_level: result.risk_band,
      decided_by: meta.evaluated_by,
      // A policy decision is revisited by re-entering policy before any side effect.
      reversible: true,
      created_at: meta.now,
    },
    ...(rewritten === undefined ? {} : { rewritten_action_request: rewritten }),
    ...(scope === undefined ? {} : { capability_scope: scope }),
    // The profile's knowledge bounds, recorded so the orchestrator sizes the task's working state and packs from the log (issue 17).
    ...(profile === undefined ? {} : { knowledge: knowledgeLimitsOf(profile.prepared.profile) }),
  });
}
