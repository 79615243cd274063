import {
  PolicyResult,
  WITNESS_REQUIRED_ACTION_CLASSES,
  safeParseActionRequest,
  toContractIssues,
  type ActionClass,
  type ActionParams,
  type ActionRequest,
  type ExecutionMode,
  type PolicyOutcome,
  type RiskBand,
} from '@writ/contracts';
import { compileGlob, type CompiledGlob } from '../shared/glob.js';
import type { PolicyDecision } from '../attempt/attempt.events.js';
import { APPROVER_ROLE } from '../approval/approval.decider.js';
import { assessRisk, riskRank, sensitiveGlobs, type RiskFactor } from './classify-risk.js';
import type { CommandFinding } from './destructive-commands.js';
import { egressAllowed, intersectEgress, urlHost } from './egress.js';
import { DEFAULT_DRAFT_DIR, preparePolicyProfile, type DowngradeTarget, type PolicyProfile, type PolicyProfileInput, type PreparedPolicyProfile } from './policy-profile.js';
import { PolicyError } from './policy.errors.js';
import { distinct } from './distinct.js';
import { coveredBy, insideFilesOwned, touches, viewRequest, type PolicyFacts, type RequestView } from './request-view.js';

/** One coded reason behind an outcome; `code` doubles as a matched rule name. */
export interface PolicyReason {
  readonly code: string;
  readonly outcome: PolicyOutcome;
  readonly message: string;
}

export interface PolicyDowngradeResult {
  /** The lower-risk request the attempt continues with (Hermit 11.4). */
  readonly action_request: ActionRequest;
  readonly restricted_mode?: ExecutionMode;
  readonly summary: string;
}

/** The outcome of evaluating one request (Hermit 16.5), before ids and timestamps make it a `PolicyResult`. */
export interface PolicyEvaluation {
  readonly outcome: PolicyOutcome;
  readonly action_class: ActionClass;
  readonly risk_band: RiskBand;
  readonly risk_factors: readonly RiskFactor[];
  /** Every rule that fired, strictest first; the first one decided the outcome. */
  readonly reasons: readonly PolicyReason[];
  /** Codes of the reasons that decided the outcome. */
  readonly matched_rules: readonly string[];
  readonly profile_id: string;
  readonly profile_version: string;
  /** Normalized paths and URLs the request touches. */
  readonly affected_resources: readonly string[];
  readonly destructive_findings: readonly CommandFinding[];
  /** A state witness must be captured now and revalidated before a delayed execution (Hermit 16.8). */
  readonly witness_required: boolean;
  readonly approver_roles?: readonly string[];
  readonly approval_expires_in_seconds?: number;
  readonly downgrade?: PolicyDowngradeResult;
  /** What a grant for this request may encode at most (files_owned and the narrowed ceilings). */
  readonly capability_scope: CapabilityScope;
}

const STRICTNESS: Readonly<Record<PolicyOutcome, number>> = { allow: 0, downgrade: 1, require_approval: 2, deny: 3 };

const BY_STRICTNESS: readonly PolicyOutcome[] = ['deny', 'require_approval', 'downgrade', 'allow'];

const RULE_CODE: Readonly<Record<PolicyOutcome, string>> = {
  allow: 'action_class_allowed',
  require_approval: 'action_class_requires_approval',
  deny: 'action_class_denied',
  downgrade: 'action_class_downgraded',
};

function strictest(reasons: readonly PolicyReason[]): PolicyOutcome {
  return reasons.reduce<PolicyOutcome>((outcome, reason) => (STRICTNESS[reason.outcome] > STRICTNESS[outcome] ? reason.outcome : outcome), 'allow');
}

/**
 * The scope a grant for this request may encode (Hermit 16.6): the task's
 * write globs and the profile's ceilings, narrowed (never widened) by facts.
 */
export interface CapabilityScope {
  /** files_owned, as the task gave it. */
  readonly write_paths: readonly string[];
  /** Egress patterns (`*`, `host`, `*.host`, with optional `:port`); `*` is a policy pattern only, grants list concrete hosts. */
  readonly egress_hosts: readonly string[];
  readonly secret_handles: readonly string[];
  readonly max_wall_clock_ms: number;
}

export function capabilityScope(profile: PolicyProfile, facts: PolicyFacts): CapabilityScope {
  const ceilings = profile.ceilings;
  const narrowHandles = facts.secret_handles;
  return {
    write_paths: [...facts.files_owned],
    egress_hosts: intersectEgress(ceilings.egress_hosts, facts.egress_hosts),
    secret_handles: narrowHandles === undefined ? [...ceilings.secret_handles] : ceilings.secret_handles.filter((handle) => narrowHandles.includes(handle)),
    max_wall_clock_ms: Math.min(ceilings.max_wall_clock_ms, facts.max_wall_clock_ms ?? ceilings.max_wall_clock_ms),
  };
}

/** Checks of one request against the profile; a downgrade rule is reported, not applied. */
function judge(view: RequestView, prepared: PreparedPolicyProfile, facts: PolicyFacts, scope: CapabilityScope): PolicyReason[] {
  const { profile } = prepared;
  const request = view.request;
  const reasons: PolicyReason[] = [];
  const rule = profile.action_classes[request.action_class];
  if (rule === undefined) {
    reasons.push({ code: 'action_class_not_permitted', outcome: 'deny', message: `${profile.id} does not permit ${request.action_class} (deny by default)` });
  } else {
    reasons.push({ code: RULE_CODE[rule.outcome], outcome: rule.outcome, message: `${profile.id} sets ${request.action_class} to ${rule.outcome}` });
  }

  // Paths: files_owned is the hard write boundary; secrets are never touched; Sacred Scopes need both exceptions.
  const outsideOutcome: PolicyOutcome = profile.files_owned === 'enforce' ? 'deny' : 'require_approval';
  // A rollback's steps only put back what an action of this same task replaced (the executor checks the receipt
  // in the task's log): on a Sacred Scope or outside files_owned it restores the scope rather than breaching it,
  // so it is not denied there but always goes to a director (who also sees a rollback of a rollback re-applying).
  const isRollback = request.action_class === 'rollback';
  for (const path of view.paths) {
    if (!path.normalized.ok) {
      reasons.push({ code: 'path_invalid', outcome: 'deny', message: `${path.raw} (${path.source}) is refused: ${path.normalized.reason}` });
      continue;
    }
    const where = path.placeable ? path.normalized.path : `${path.raw} (location unknown after cd, -C or an expansion)`;
    if (touches(prepared.secret, path)) {
      reasons.push({ code: 'secret_path', outcome: 'deny', message: `${where} holds secrets and is never read or written` });
      continue;
    }
    if (!path.write) continue;
    const owned = insideFilesOwned(view, path);
    if (touches(prepared.sacred, path)) {
      const byProfile = coveredBy(prepared.sacredExceptions, path);
      const byTask = coveredBy(view.taskSacredExceptions, path);
      if (byProfile && byTask && owned) {
        reasons.push({ code: 'sacred_path_excepted', outcome: 'allow', message: `${where} is a Sacred Scope written under the exception both ${profile.id} and the task name` });
      } else {
        const missing = [byProfile ? null : `${profile.id}'s sacred_exceptions`, byTask ? null : "the task's sacred_exceptions"].filter((part) => part !== null);
        const why = missing.length > 0 ? `not named by ${missing.join(' nor ')}` : 'named by both exceptions but outside files_owned';
        if (isRollback) {
          reasons.push({ code: 'rollback_restores_sacred_path', outcome: 'require_approval', message: `${where} is a Sacred Scope (${why}); a rollback only puts back what an action of this task replaced there, so a director decides` });
        } else {
          reasons.push({ code: 'sacred_path', outcome: 'deny', message: `${where} is a Sacred Scope (${why})` });
        }
      }
      continue;
    }
    if (!owned && isRollback) {
      reasons.push({ code: 'rollback_restores_outside_files_owned', outcome: 'require_approval', message: `${where} is outside files_owned; a rollback only puts back what an action of this task replaced there, so a director decides` });
    } else if (!owned) {
      const code = path.source === 'command' ? 'command_writes_outside_files_owned' : 'write_outside_files_owned';
      reasons.push({ code, outcome: outsideOutcome, message: `${where} is outside files_owned` });
    }
  }
  for (const resource of view.misplaced) {
    reasons.push({ code: 'resource_not_a_path', outcome: 'deny', message: `${resource} is not a local path for ${request.action_class}` });
  }

  // A rollback runs exactly the steps its params name: they must be a receipt's steps, each inside what the grant will cover.
  if (view.rollback !== null) {
    if (view.rollback.problem !== undefined) {
      reasons.push({ code: 'rollback_params_invalid', outcome: 'deny', message: `a rollback names a receipt and its steps (receipt_id, receipt_hash, steps): ${view.rollback.problem}` });
    }
    for (const path of view.rollback.untargeted) {
      reasons.push({ code: 'rollback_step_not_targeted', outcome: 'deny', message: `${path} is a rollback step but no target resource names or contains it (the grant and the state witness cover target_resources only)` });
    }
  }

  // A command naming a URL gets network in its cell, and with network it can write (curl -X POST):
  // it is judged as a network write too. A downgrade cannot rewrite a command, so it counts as a deny.
  if (request.action_class === 'execute_command' && view.urls.length > 0) {
    const network = profile.action_classes.network_write;
    const outcome: PolicyOutcome = network === undefined || network.outcome === 'downgrade' ? 'deny' : network.outcome;
    reasons.push({ code: 'command_network_access', outcome, message: `a command reaching ${view.urls.join(', ')} is judged as network_write, which ${profile.id} sets to ${network?.outcome ?? 'deny (not listed)'}` });
  }

  // Capability ceilings: egress, secret handles, wall clock.
  for (const url of view.urls) {
    const host = urlHost(url);
    if (host === undefined) {
      reasons.push({ code: 'egress_host_not_allowed', outcome: 'deny', message: `the host of ${url} cannot be determined (only http(s) URLs with a host are reachable)` });
    } else if (!egressAllowed(profile.ceilings.egress_hosts, host)) {
      reasons.push({ code: 'egress_host_not_allowed', outcome: 'deny', message: `${host} is outside the egress ceiling of ${profile.id} (${profile.ceilings.egress_hosts.join(', ') || 'no network'})` });
    } else if (facts.egress_hosts !== undefined && !egressAllowed(facts.egress_hosts, host)) {
      reasons.push({ code: 'egress_host_not_allowed', outcome: 'deny', message: `${host} is outside the task's egress list (${facts.egress_hosts.join(', ') || 'no network'})` });
    }
  }
  for (const field of view.secretHandles.malformed) {
    reasons.push({ code: 'secret_handle_not_allowed', outcome: 'deny', message: `${field} must be a handle name (or a list of them)` });
  }
  for (const handle of view.secretHandles.names) {
    if (!scope.secret_handles.includes(handle)) {
      const owner = profile.ceilings.secret_handles.includes(handle) ? "the task's secret handles" : `the secret handles of ${profile.id}`;
      reasons.push({ code: 'secret_handle_not_allowed', outcome: 'deny', message: `secret handle ${JSON.stringify(handle)} is not among ${owner}` });
    }
  }
  if (view.timeoutMs !== undefined && view.timeoutMs > scope.max_wall_clock_ms) {
    reasons.push({ code: 'wall_clock_exceeds_ceiling', outcome: 'deny', message: `params.timeout_ms ${view.timeoutMs} is above the wall-clock ceiling of ${scope.max_wall_clock_ms} ms` });
  }

  const findings = view.command?.findings ?? [];
  if (findings.length > 0) {
    const outcome: PolicyOutcome = profile.destructive_commands;
    const ids: string[] = [];
    for (const finding of findings) ids.push(finding.pattern_id);
    reasons.push({ code: 'destructive_command', outcome, message: `destructive command (${distinct(ids).join(', ')}): ${outcome === 'deny' ? 'denied by' : 'needs approval under'} ${profile.id}` });
  }
  return reasons;
}

function deriveId(id: string, facts: PolicyFacts): string {
  if (facts.rewritten_action_request_id !== undefined) return facts.rewritten_action_request_id;
  return `${id.slice(0, 125)}-dg`;
}

/** What a publication draft keeps of the request: never headers or secret handle names. */
function draftOf(request: ActionRequest): string {
  const { headers: _headers, secret_handle: _handle, secret_handles: _handles, ...params } = request.params;
  const draft = {
    draft_of: 'publication',
    action_request_id: request.action_request_id,
    target_resources: request.target_resources,
    params,
    expected_effects: request.expected_effects,
    reason: request.reason,
  };
  return `${JSON.stringify(draft, null, 2)}\n`;
}

/** The rewritten, lower-risk request of a downgrade, or undefined when it cannot be built. */
export function rewriteRequest(request: ActionRequest, target: DowngradeTarget, facts: PolicyFacts): ActionRequest | undefined {
  const params = request.params;
  const id = deriveId(request.action_request_id, facts);
  let rewrittenParams: ActionParams;
  let targets: string[];
  let effects: string[] = [];
  if (target.action_class === request.action_class) {
    rewrittenParams = params;
    targets = [...request.target_resources];
    effects = [...request.expected_effects];
  } else if (target.action_class === 'read_local' && typeof params.path === 'string') {
    rewrittenParams = { path: params.path };
    targets = [params.path];
  } else if (target.action_class === 'network_read' && typeof params.url === 'string') {
    rewrittenParams = { url: params.url, method: 'GET', ...(params.timeout_ms === undefined ? {} : { timeout_ms: params.timeout_ms }) };
    targets = [params.url];
  } else if (target.action_class === 'write_local' && request.action_class === 'publication') {
    const path = `${(target.draft_dir ?? DEFAULT_DRAFT_DIR).replace(/\/+$/, '')}/${id}.publication.json`;
    rewrittenParams = { path, content: draftOf(request) };
    targets = [path];
    effects = [`a draft of the publication is written to ${path}; nothing is published`];
  } else {
    return undefined;
  }
  const reason = `downgraded by policy from ${request.action_class}: ${request.reason}`.slice(0, 4_096);
  const parsed = safeParseActionRequest({
    ...request,
    action_request_id: id,
    action_class: target.action_class,
    target_resources: targets,
    params: rewrittenParams,
    expected_effects: effects,
    reversibility_hint: target.action_class === request.action_class ? request.reversibility_hint : 'reversible',
    reason,
  });
  return parsed.ok ? parsed.value : undefined;
}

function affected(view: RequestView): string[] {
  const out: string[] = [];
  for (const path of view.paths) if (path.normalized.ok) out.push(path.normalized.path);
  for (const url of view.urls) out.push(url);
  return distinct(out);
}

/** The sensitive globs of a prepared profile (its sacred and secret paths and the defaults), without duplicates, built once per profile. */
const riskGlobsOf = new WeakMap<PreparedPolicyProfile, readonly CompiledGlob[]>();

function riskGlobs(prepared: PreparedPolicyProfile, extra: readonly string[] | undefined): readonly CompiledGlob[] {
  let base = riskGlobsOf.get(prepared);
  if (base === undefined) {
    const bySource = new Map<string, CompiledGlob>();
    for (const glob of [...prepared.sacred, ...prepared.secret, ...sensitiveGlobs()]) bySource.set(glob.segments.join('/'), glob);
    base = Object.freeze([...bySource.values()]);
    riskGlobsOf.set(prepared, base);
  }
  if (extra === undefined || extra.length === 0) return base;
  return [...base, ...extra.map((pattern) => compileGlob(pattern)).filter((glob): glob is CompiledGlob => glob !== undefined)];
}

function evaluateOnce(request: ActionRequest, prepared: PreparedPolicyProfile, facts: PolicyFacts, scope: CapabilityScope) {
  const view = viewRequest(request, facts);
  const risk = assessRisk(view, riskGlobs(prepared, facts.sensitive_paths));
  const reasons = judge(view, prepared, facts, scope);
  const rule = prepared.profile.action_classes[request.action_class];
  if (rule?.deny_at_or_above !== undefined && riskRank(risk.band) >= riskRank(rule.deny_at_or_above)) {
    reasons.push({ code: 'risk_denied', outcome: 'deny', message: `risk ${risk.band} is at or above ${rule.deny_at_or_above}` });
  }
  if (rule?.approval_at_or_above !== undefined && riskRank(risk.band) >= riskRank(rule.approval_at_or_above)) {
    reasons.push({ code: 'risk_requires_approval', outcome: 'require_approval', message: `risk ${risk.band} is at or above ${rule.approval_at_or_above}` });
  }
  return { view, risk, reasons, rule };
}

/** Strictest first, gathering order kept within one outcome (what a stable sort by strictness gives), without a comparator sort. */
function sortReasons(reasons: readonly PolicyReason[]): PolicyReason[] {
  const out: PolicyReason[] = [];
  for (const outcome of BY_STRICTNESS) for (const reason of reasons) if (reason.outcome === outcome) out.push(reason);
  return out;
}

/**
 * Evaluates one ActionRequest against a policy profile and the task's facts
 * (Hermit 16.5): exactly one of allow / require_approval / deny / downgrade,
 * with coded reasons, the risk band and the profile version. Pure and total
 * for any valid request: deny by default, the strictest rule wins
 * (deny > require_approval > downgrade > allow). A downgrade is returned only
 * when the rewritten request is itself allowed by the same profile. Rules, in
 * the order reasons are gathered: the class rule; paths (refused spellings,
 * secrets, Sacred Scopes and their exception pair, files_owned); misplaced
 * resources; a command's network access; the capability ceilings (egress,
 * secret handles, wall clock); destructive commands; then the risk rules
 * (`deny_at_or_above`, `approval_at_or_above`). Throws only for malformed
 * facts or profiles (POLICY_FACTS_INVALID, POLICY_PROFILE_INVALID), never
 * for a valid request.
 */
export function evaluatePolicy(request: ActionRequest, profile: PolicyProfileInput | PreparedPolicyProfile, facts: PolicyFacts): PolicyEvaluation {
  const prepared = preparePolicyProfile(profile);
  const { id: profileId, version } = prepared.profile;
  const scope = capabilityScope(prepared.profile, facts);
  const first = evaluateOnce(request, prepared, facts, scope);
  const common = {
    capability_scope: scope,
    action_class: request.action_class,
    risk_band: first.risk.band,
    risk_factors: first.risk.factors,
    profile_id: profileId,
    profile_version: version,
    affected_resources: affected(first.view),
    destructive_findings: first.view.command?.findings ?? [],
  };
  let outcome = strictest(first.reasons);
  let reasons = sortReasons(first.reasons);
  let downgrade: PolicyDowngradeResult | undefined;

  if (first.rule?.outcome === 'downgrade' && first.rule.downgrade_to !== undefined) {
    // The original request will not run: only the rewritten one is judged (its paths, secrets, scope).
    const target = first.rule.downgrade_to;
    reasons = reasons.filter((reason) => reason.code === RULE_CODE.downgrade);
    outcome = 'downgrade';
    const rewritten = rewriteRequest(request, target, facts);
    if (rewritten === undefined) {
      outcome = 'deny';
      reasons = [{ code: 'downgrade_unsupported', outcome: 'deny', message: `${request.action_class} cannot be rewritten to ${target.action_class}` }, ...reasons];
    } else {
      const second = evaluateOnce(rewritten, prepared, facts, scope);
      // A same-class downgrade (restricted mode only) meets its own rule again: that rule is what is being applied.
      const secondReasons = second.reasons.filter((reason) => reason.code !== RULE_CODE.downgrade);
      const secondOutcome = strictest(secondReasons);
      if (secondOutcome === 'allow') {
        const summary = `${request.action_class} downgraded to ${rewritten.action_class}${target.restricted_mode === undefined ? '' : ` in ${target.restricted_mode} mode`}`;
        downgrade = { action_request: rewritten, ...(target.restricted_mode === undefined ? {} : { restricted_mode: target.restricted_mode }), summary };
        reasons = [...reasons, ...secondReasons.filter((reason) => reason.code !== RULE_CODE.allow)];
      } else {
        outcome = 'deny';
        reasons = [
          { code: 'downgrade_not_allowed', outcome: 'deny', message: `the downgraded ${rewritten.action_class} request is not plainly allowed (${secondOutcome})` },
          ...sortReasons(secondReasons),
          ...reasons,
        ];
      }
    }
  }

  const codes: string[] = [];
  for (const reason of reasons) if (reason.outcome === outcome) codes.push(reason.code);
  const matched = distinct(codes);
  const witnessRequired =
    outcome === 'require_approval' &&
    (WITNESS_REQUIRED_ACTION_CLASSES.includes(request.action_class) || common.destructive_findings.length > 0) &&
    !(prepared.profile.witness_waived_for ?? []).includes(request.action_class);
  return {
    ...common,
    outcome,
    reasons,
    matched_rules: matched,
    witness_required: witnessRequired,
    ...(outcome === 'require_approval' ? { approver_roles: [APPROVER_ROLE], approval_expires_in_seconds: prepared.profile.approval.expires_in_seconds } : {}),
    ...(downgrade === undefined ? {} : { downgrade }),
  };
}

/** What the StepAttempt keeps of an evaluation (`record-policy-result`). */
export function toPolicyDecision(evaluation: PolicyEvaluation, policyResultId: string): PolicyDecision {
  return {
    policy_result_id: policyResultId,
    outcome: evaluation.outcome,
    risk_band: evaluation.risk_band,
    profile_id: evaluation.profile_id,
    policy_version: evaluation.profile_version,
    witness_required: evaluation.witness_required,
  };
}

export interface PolicyResultMetadata {
  readonly policy_result_id: string;
  readonly task_id: string;
  readonly step_id: string;
  readonly attempt_id: string;
  readonly evaluated_at: string;
  readonly evaluated_by: string;
  /** Defaults to `<profile_id>@<version>`. */
  readonly policy_profile_ref?: string;
  /** Where the rewritten request of a downgrade is stored (an action.request artifact). */
  readonly rewritten_action_request_ref?: string;
  /** For an action of a participant: `participant:<seed_id>@<manifest_hash>`, the scope it was checked against. */
  readonly participant_scope_ref?: string;
}

const clip = (text: string) => (text.length > 4_096 ? `${text.slice(0, 4_093)}...` : text);

/** Turns an evaluation into the `PolicyResult` contract (Hermit 16.5), or POLICY_RESULT_INVALID. */
export function toPolicyResult(evaluation: PolicyEvaluation, request: ActionRequest, meta: PolicyResultMetadata): PolicyResult {
  const candidate = {
    policy_result_id: meta.policy_result_id,
    task_id: meta.task_id,
    step_id: meta.step_id,
    attempt_id: meta.attempt_id,
    action_request_id: request.action_request_id,
    outcome: evaluation.outcome,
    action_class: evaluation.action_class,
    risk_band: evaluation.risk_band,
    action_summary: clip(`${request.action_class} of ${request.target_resources.join(', ')}: ${request.reason}`),
    risk_summary: clip(evaluation.risk_factors.map((factor) => `${factor.band}: ${factor.message}`).join('; ')),
    policy_profile_ref: meta.policy_profile_ref ?? `${evaluation.profile_id}@${evaluation.profile_version}`,
    policy_version: evaluation.profile_version,
    affected_resources: evaluation.affected_resources.slice(0, 256),
    reasoning_summary: clip(evaluation.reasons.map((reason) => `${reason.code}: ${reason.message}`).join('; ')),
    matched_rules: evaluation.matched_rules,
    witness_required: evaluation.witness_required,
    revalidation_conditions: evaluation.witness_required
      ? ['target resource fingerprints match the captured state witness', 'the approval has not expired', 'the policy version is unchanged']
      : [],
    ...(evaluation.approver_roles === undefined ? {} : { approver_roles: [...evaluation.approver_roles] }),
    ...(evaluation.downgrade === undefined
      ? {}
      : {
          downgrade: {
            ...(meta.rewritten_action_request_ref === undefined ? {} : { rewritten_action_request_ref: meta.rewritten_action_request_ref }),
            ...(evaluation.downgrade.restricted_mode === undefined ? {} : { restricted_mode: evaluation.downgrade.restricted_mode }),
            summary: evaluation.downgrade.summary,
          },
        }),
    ...(meta.participant_scope_ref === undefined ? {} : { participant_scope_ref: meta.participant_scope_ref }),
    evaluated_at: meta.evaluated_at,
    evaluated_by: meta.evaluated_by,
  };
  const parsed = PolicyResult.safeParse(candidate);
  if (!parsed.success) {
    const issues = toContractIssues(parsed.error);
    throw new PolicyError('POLICY_RESULT_INVALID', `the evaluation does not make a valid PolicyResult: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      cause: parsed.error,
      details: { issues },
    });
  }
  return parsed.data;
}
