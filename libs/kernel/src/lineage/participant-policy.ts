import type { ActionRequest, ParticipantStatus, ParticipantUsage } from '@writ/contracts';
import { distinct } from '../policy/distinct.js';
import { intersectEgress, isEgressHostPattern } from '../policy/egress.js';
import { evaluatePolicy, type PolicyEvaluation, type PolicyReason } from '../policy/evaluate-policy.js';
import type { PolicyProfileInput, PreparedPolicyProfile } from '../policy/policy-profile.js';
import type { PolicyFacts } from '../policy/request-view.js';
import { tryInstantMs } from '../shared/instant.js';
import { checkParticipantAction, type ParticipantActionCheck, type ParticipantScope } from './participant-scope.js';

/** What policy knows of the participant proposing an action, folded from `writ.evt.participant.<seed_id>`. */
export interface ParticipantPolicyFacts {
  /** `participantScope(manifest)` of the manifest in force. */
  readonly scope: ParticipantScope;
  /** The manifest's payload hash: the version of the scope. */
  readonly manifest_hash: string;
  readonly status: ParticipantStatus;
  /** RFC 3339: the evaluator's clock reading (TTL and wall clock are judged against it). */
  readonly now: string;
  /** Calls admitted before this action; tokens are not metered by Writ (0 unless the caller counts them). */
  readonly usage: ParticipantUsage;
}

/** An evaluation of a participant's action: the profile's, with the manifest scope applied first. */
export interface ParticipantPolicyEvaluation extends PolicyEvaluation {
  readonly participant: {
    readonly seed_id: string;
    readonly manifest_hash: string;
    /** `participant:<seed_id>@<manifest_hash>` (PolicyResult.participant_scope_ref). */
    readonly scope_ref: string;
    /** The manifest scope's verdict (on the rewritten request too, for a downgrade). */
    readonly check: ParticipantActionCheck;
  };
}

/** The rule recorded when the manifest scope admits the action. */
export const PARTICIPANT_SCOPE_ALLOWED = 'participant_scope_allowed';

export function participantScopeRef(seedId: string, manifestHash: string): string {
  return `participant:${seedId}@${manifestHash}`;
}

/** The wall clock the participant has left, in whole milliseconds (undefined: none, or an unreadable clock). */
function remainingWallClockMs(scope: ParticipantScope, now: string): number | undefined {
  const nowMs = tryInstantMs(now);
  const startMs = tryInstantMs(scope.started_at);
  if (nowMs === undefined || startMs === undefined) return undefined;
  const left = Math.floor(startMs + scope.limits.max_wallclock_seconds * 1_000 - nowMs);
  return left >= 1 ? left : undefined;
}

/**
 * The task's facts narrowed by the manifest: egress to the hosts `net`
 * lists (intersected with the task's own list), wall clock to what the
 * participant has left. Narrowing only, so the capability scope a grant may
 * encode never exceeds the manifest.
 */
function narrowedFacts(facts: PolicyFacts, participant: ParticipantPolicyFacts): PolicyFacts {
  const net = participant.scope.net.filter(isEgressHostPattern);
  const left = remainingWallClockMs(participant.scope, participant.now);
  return {
    ...facts,
    egress_hosts: facts.egress_hosts === undefined ? net : intersectEgress(facts.egress_hosts, net),
    ...(left === undefined ? {} : { max_wall_clock_ms: Math.min(left, facts.max_wall_clock_ms ?? left) }),
  };
}

/**
 * Evaluates one action of a participant (a spawned seed): its manifest scope
 * first — `checkParticipantAction`, deny by default (capabilities, status,
 * TTL, `max_calls`, `max_wallclock_seconds`) — then, in addition, the task's
 * profile through `evaluatePolicy` with the facts narrowed by the manifest.
 * A scope refusal is a deny whatever the profile says, its code (lowercase,
 * e.g. `participant_path_denied`) leading the reasons and the matched rules;
 * the profile's own reasons follow for the record. A downgrade's rewritten
 * request must lie within the scope too. An admitted action keeps the
 * profile's outcome, with `participant_scope_allowed` among the reasons.
 * Pure; throws only what `evaluatePolicy` throws (malformed facts or profile).
 * `evaluatePolicy` itself is unchanged for everyone else.
 */
export function evaluateParticipantPolicy(
  request: ActionRequest,
  profile: PolicyProfileInput | PreparedPolicyProfile,
  facts: PolicyFacts,
  participant: ParticipantPolicyFacts,
): ParticipantPolicyEvaluation {
  const { scope } = participant;
  const context = { status: participant.status, now: participant.now, usage: participant.usage };
  const base = evaluatePolicy(request, profile, narrowedFacts(facts, participant));
  let check = checkParticipantAction(scope, request, context);
  if (check.ok && base.downgrade !== undefined) check = checkParticipantAction(scope, base.downgrade.action_request, context);
  const about = { seed_id: scope.seed_id, manifest_hash: participant.manifest_hash, scope_ref: participantScopeRef(scope.seed_id, participant.manifest_hash), check };
  const where = `seed ${scope.seed_id} (manifest ${participant.manifest_hash})`;

  if (!check.ok) {
    const refusal: PolicyReason = { code: check.code.toLowerCase(), outcome: 'deny', message: `${where}: ${check.message}` };
    const reasons = [refusal, ...base.reasons];
    const matched: string[] = [];
    for (const reason of reasons) if (reason.outcome === 'deny') matched.push(reason.code);
    const { downgrade: _downgrade, approver_roles: _roles, approval_expires_in_seconds: _expiry, ...rest } = base;
    return { ...rest, outcome: 'deny', reasons, matched_rules: distinct(matched), witness_required: false, participant: about };
  }
  const admitted: PolicyReason = { code: PARTICIPANT_SCOPE_ALLOWED, outcome: 'allow', message: `within the manifest scope of ${where}` };
  // Strictest first stays true: the admission goes before the profile's own allow reasons, after anything stricter.
  const stricter = base.reasons.filter((reason) => reason.outcome !== 'allow');
  const allows = base.reasons.filter((reason) => reason.outcome === 'allow');
  return {
    ...base,
    reasons: [...stricter, admitted, ...allows],
    matched_rules: base.outcome === 'allow' ? distinct([PARTICIPANT_SCOPE_ALLOWED, ...base.matched_rules]) : base.matched_rules,
    participant: about,
  };
}
