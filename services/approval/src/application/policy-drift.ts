import { Name, type EventEnvelope } from '@writ/contracts';
import type { ApprovalRecord, PolicyVersions } from '@writ/kernel';
import type { PolicyProfiles } from './ports.js';
import { findPolicyEvaluation } from './task-history.js';

/**
 * The profile id a PolicyResult's `policy_profile_ref` names: `local_edit_allowed`,
 * `policy:local_edit_allowed` or `local_edit_allowed@<version>`; undefined when what is left
 * is not a profile name (such a profile cannot be stored, so it counts as gone).
 */
export function profileIdOf(ref: string): string | undefined {
  const bare = ref.replace(/^(?:policy_profile|policy):/, '');
  const at = bare.indexOf('@');
  const id = at > 0 ? bare.slice(0, at) : bare;
  return Name.safeParse(id).success ? id : undefined;
}

/**
 * The versions the kernel compares before a grant (Hermit 19.6): the `policy_version` of the
 * PolicyResult the approval answers, as `policy.evaluated` recorded it, and the current version
 * of that profile in the policy service's bucket. A result missing from the log is unknown
 * (null): the kernel then invalidates, and policy evaluates again. The bucket being unavailable
 * throws (APPROVAL_POLICY_UNAVAILABLE): nothing is decided and the approval stays pending.
 */
export async function policyVersions(events: readonly EventEnvelope[], state: ApprovalRecord, profiles: PolicyProfiles): Promise<PolicyVersions> {
  const resultId = state.policy_result_ref?.replace(/^policy_result:/, '');
  const result = resultId === undefined ? undefined : findPolicyEvaluation(events, resultId)?.policy_result;
  if (result === undefined || result.attempt_id !== state.attempt_id) return { evaluated: null, current: null };
  const profileId = profileIdOf(result.policy_profile_ref);
  return { evaluated: result.policy_version, current: profileId === undefined ? null : await profiles.currentVersion(profileId) };
}
