import { type EvaluatePolicyDryRun, type EvaluatePolicyDryRunReply } from '@writ/contracts';
import { evaluatePolicy, type PreparedPolicyProfile } from '@writ/kernel';
import { PolicyServiceError } from './policy-service.errors.js';
import type { ProfileLookup } from './ports.js';
import { prepareDocument, validateDocument } from './profile-documents.js';

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
    const prepared = this.#profileFor(request);
    const evaluation = evaluatePolicy(request.action_request, prepared, {
      files_owned: request.files_owned,
      ...(request.sacred_exceptions === undefined ? {} : { sacred_exceptions: request.sacred_exceptions }),
    });
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
