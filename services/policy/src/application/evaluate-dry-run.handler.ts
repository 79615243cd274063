import { type EvaluatePolicyDryRun, type EvaluatePolicyDryRunReply } from '@writ/contracts';
import { evaluatePolicy, type PolicyEvaluation, type PolicyReason, type PreparedPolicyProfile } from '@writ/kernel';
import { PolicyServiceError } from './policy-service.errors.js';
import type { ProfileLookup } from './ports.js';
import { prepareDocument, validateDocument } from './profile-documents.js';

const clip = (text: string): string => (text.length > 4_096 ? text.slice(0, 4_096) : text);

/** `"profile_id":…,"policy_version":…,` of a prepared profile, serialized once (a profile is immutable once prepared). */
const fragments = new WeakMap<PreparedPolicyProfile, string>();

function profileFragment(prepared: PreparedPolicyProfile): string {
  let fragment = fragments.get(prepared);
  if (fragment === undefined) {
    fragment = `"profile_id":${JSON.stringify(prepared.profile.id)},"policy_version":${JSON.stringify(prepared.profile.version)},`;
    fragments.set(prepared, fragment);
  }
  return fragment;
}

/** Candidate documents prepared recently, by version: a simulation sends the same candidate many times. */
const CANDIDATE_CACHE_SIZE = 32;

/**
 * `<root>.qry.policy.evaluate` (request/reply): evaluates one ActionRequest
 * with the kernel, against a stored profile (`profile_id`, as the store holds
 * it now) or an inline candidate `document`, and answers the outcome and why.
 * Appends nothing, changes nothing: simulations and benchmarks use it.
 */
export class EvaluateDryRunHandler {
  readonly #candidates = new Map<string, PreparedPolicyProfile>();

  constructor(private readonly profiles: ProfileLookup) {}

  evaluate(request: EvaluatePolicyDryRun): EvaluatePolicyDryRunReply {
    const evaluation = this.#evaluationWith(request, this.#profileFor(request));
    const downgrade = evaluation.downgrade;
    return {
      outcome: evaluation.outcome,
      action_class: evaluation.action_class,
      risk_band: evaluation.risk_band,
      matched_rules: [...evaluation.matched_rules],
      profile_id: evaluation.profile_id,
      policy_version: evaluation.profile_version,
      reasons: evaluation.reasons.map((reason) => ({ code: reason.code, outcome: reason.outcome, message: reason.message.slice(0, 4_096) })),
      witness_required: evaluation.witness_required,
      ...(evaluation.approver_roles === undefined ? {} : { approver_roles: [...evaluation.approver_roles] }),
      ...(downgrade === undefined
        ? {}
        : {
            downgrade: {
              action_request: downgrade.action_request,
              ...(downgrade.restricted_mode === undefined ? {} : { restricted_mode: downgrade.restricted_mode }),
              summary: downgrade.summary.slice(0, 4_096),
            },
          }),
    };
  }

  /**
   * The reply of `evaluate`, serialized: the same JSON text as
   * `JSON.stringify(evaluate(request))`, written straight from the
   * evaluation (no reply object copied on the way), with the profile's
   * fragment serialized once per prepared profile. The responder's hot path.
   */
  evaluateToJson(request: EvaluatePolicyDryRun): string {
    const prepared = this.#profileFor(request);
    const evaluation = this.#evaluationWith(request, prepared);
    let json = `{"outcome":"${evaluation.outcome}","action_class":"${evaluation.action_class}","risk_band":"${evaluation.risk_band}","matched_rules":${JSON.stringify(evaluation.matched_rules)},`;
    json += profileFragment(prepared);
    json += '"reasons":[';
    const reasons = evaluation.reasons;
    for (let i = 0; i < reasons.length; i += 1) {
      const reason = reasons[i] as PolicyReason;
      json += `${i === 0 ? '' : ','}{"code":${JSON.stringify(reason.code)},"outcome":"${reason.outcome}","message":${JSON.stringify(clip(reason.message))}}`;
    }
    json += `],"witness_required":${evaluation.witness_required}`;
    if (evaluation.approver_roles !== undefined) json += `,"approver_roles":${JSON.stringify(evaluation.approver_roles)}`;
    const downgrade = evaluation.downgrade;
    if (downgrade !== undefined) {
      json += `,"downgrade":{"action_request":${JSON.stringify(downgrade.action_request)}`;
      if (downgrade.restricted_mode !== undefined) json += `,"restricted_mode":"${downgrade.restricted_mode}"`;
      json += `,"summary":${JSON.stringify(clip(downgrade.summary))}}`;
    }
    return `${json}}`;
  }

  #evaluationWith(request: EvaluatePolicyDryRun, prepared: PreparedPolicyProfile): PolicyEvaluation {
    return evaluatePolicy(request.action_request, prepared, {
      files_owned: request.files_owned,
      ...(request.sacred_exceptions === undefined ? {} : { sacred_exceptions: request.sacred_exceptions }),
    });
  }

  #profileFor(request: EvaluatePolicyDryRun): PreparedPolicyProfile {
    if (request.profile_id !== undefined) {
      const loaded = this.profiles.get(request.profile_id);
      if (loaded === undefined) {
        throw new PolicyServiceError('POLICY_PROFILE_UNKNOWN', `the profile store holds no policy profile ${request.profile_id}`, { details: { profile_id: request.profile_id } });
      }
      return loaded.prepared;
    }
    const { document, version } = validateDocument(request.document);
    let prepared = this.#candidates.get(version);
    if (prepared === undefined) {
      prepared = prepareDocument(document, version);
      if (this.#candidates.size >= CANDIDATE_CACHE_SIZE) this.#candidates.delete(this.#candidates.keys().next().value as string);
      this.#candidates.set(version, prepared);
    }
    return prepared;
  }
}
