import {
  CancelApproval,
  EvaluatePolicy,
  ExecutionCompleted,
  GRANT_RENEWALS_MAX,
  IssueGrant,
  IssueReceipt,
  LIMITS,
  Name,
  RequestApproval,
  RunAction,
  STEP_TERMINAL_STATES,
  hasErrorCode,
  parseContract,
  type ActionRequest,
  type AttemptStatus,
  type EventDraft,
  type PolicyEvaluated,
  type PolicyResult,
} from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import {
  ATTEMPT_PRE_EXECUTION_STATES,
  approvalDecider,
  attemptDecider,
  grantDecider,
  isTaskTerminal,
  stepDecider,
  taskDecider,
  useSettlements,
  type ApprovalRecord,
  type AttemptCommand,
  type AttemptRecord,
  type CodedReason,
  type GrantCommand,
  type PolicyDecision,
  type ReplacedGrant,
  type StepCommand,
  type TaskCommand,
  type TaskRecord,
} from '@writ/kernel';
import { CloseCell, CloseCellReason, closeCellMsgId } from './close-cell.js';
import { planClaims, type ClaimPlanner, type FactDraft } from './plan-claims.js';
import { planMemoryCandidates } from './plan-memory-candidates.js';
import { approvalIdFor, eventIdFor } from './ids.js';
import { OrchestratorError } from './orchestrator.errors.js';
import type { AttemptView, Fact, GrantView, LoggedEvent, ReceiptFact, TaskView } from './task-view.js';

/** The commands the orchestrator issues (docs/governed-path.md, step 2). */
export type CommandName = 'policyEvaluate' | 'approvalRequest' | 'approvalIssueGrant' | 'approvalCancel' | 'executorRun' | 'receiptIssue' | 'executorCloseCell';

export type PlannedCommand =
  | { readonly command: 'policyEvaluate'; readonly payload: EvaluatePolicy; readonly msgId: string }
  | { readonly command: 'approvalRequest'; readonly payload: RequestApproval; readonly msgId: string }
  | { readonly command: 'approvalIssueGrant'; readonly payload: IssueGrant; readonly msgId: string }
  | { readonly command: 'approvalCancel'; readonly payload: CancelApproval; readonly msgId: string }
  | { readonly command: 'executorRun'; readonly payload: RunAction; readonly msgId: string }
  | { readonly command: 'receiptIssue'; readonly payload: IssueReceipt; readonly msgId: string }
  | { readonly command: 'executorCloseCell'; readonly payload: CloseCell; readonly msgId: string };

/** What one delivery of one task event leads to: events to append (in order), then commands to publish. */
export interface Plan {
  readonly events: readonly EventDraft[];
  readonly commands: readonly PlannedCommand[];
}

export interface PlanContext {
  /** The event being handled: its type picks the command (the table), its id is the causation of what follows. */
  readonly trigger: LoggedEvent;
  /** RFC 3339 clock reading taken at the adapter edge. */
  readonly now: string;
  /** The orchestrator's principal (`actor_id` of what it appends). */
  readonly actorId: string;
  /** Who grants are issued to: the executor fleet principal. */
  readonly executorPrincipalId: string;
}

type Transition =
  | {
      readonly aggregate: 'attempt';
      readonly id: string;
      readonly command: AttemptCommand;
      readonly key: string;
      /** What to do instead when the kernel refuses the command (an expected refusal turns into an outcome). */
      readonly refused?: (error: unknown) => Transition | undefined;
    }
  | { readonly aggregate: 'step'; readonly id: string; readonly attemptId: string; readonly command: StepCommand; readonly key: string }
  | { readonly aggregate: 'grant'; readonly id: string; readonly attemptId: string; readonly command: GrantCommand; readonly key: string }
  | { readonly aggregate: 'task'; readonly command: TaskCommand; readonly key: string };

type DecidedEvent = { readonly type: string; readonly data: Record<string, unknown> };

/** A reconcile that keeps producing transitions for one attempt is a bug: stop it. */
const MAX_TRANSITIONS_PER_ATTEMPT = 16;
/**
 * Runs of one attempt under one grant (the first and those after a use proven never started,
 * `not_run`): past it, a use that keeps not starting ends the attempt as errored (it did not
 * complete) instead of looping. Matches `RunAction.run_no`'s bound.
 */
export const MAX_RUNS_PER_GRANT = 4;

const clip = (text: string, max = LIMITS.text) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

function last<T>(items: readonly T[]): T | undefined {
  return items[items.length - 1];
}

/**
 * The task's policy profile name from `task.created`'s `policy_profile_ref`:
 * `local_edit_allowed`, `policy:local_edit_allowed` or `local_edit_allowed@1`.
 */
export function profileNameOf(ref: string): string {
  const bare = ref.replace(/^(?:policy_profile|policy):/, '');
  const at = bare.lastIndexOf('@');
  return at > 0 ? bare.slice(0, at) : bare;
}

/** What the attempt keeps of a PolicyResult (the kernel's PolicyDecision). */
export function policyDecisionOf(result: PolicyResult): PolicyDecision {
  const profile = profileNameOf(result.policy_profile_ref);
  return {
    policy_result_id: result.policy_result_id,
    outcome: result.outcome,
    risk_band: result.risk_band,
    profile_id: Name.safeParse(profile).success ? profile : 'unknown',
    policy_version: result.policy_version,
    witness_required: result.witness_required,
  };
}

/** Coded reasons of a deny, from its matched rules and the reasoning summary (`code: message; ...`). */
export function denyReasonsOf(result: PolicyResult): CodedReason[] {
  const segments = result.reasoning_summary.split('; ');
  const rules = result.matched_rules.length > 0 ? result.matched_rules : ['policy_denied'];
  return rules.slice(0, 32).map((rule) => {
    const code = Name.safeParse(rule).success ? rule : 'policy_denied';
    const segment = segments.find((s) => s.startsWith(`${rule}: `));
    return { code, message: clip(segment === undefined ? result.reasoning_summary : segment.slice(rule.length + 2) || result.reasoning_summary) };
  });
}

/**
 * Decides what one task event leads to, from the whole task folded (never
 * from the event alone), so that handling an event twice, late, or out of
 * order produces nothing new:
 *
 * 1. Reconcile every attempt with the facts other services appended
 *    (policy.evaluated, approval.*, grant.*, execution.completed,
 *    receipt.issued): each fact not yet reflected in the attempt becomes the
 *    kernel transition it implies, then the step and the task are closed
 *    once the attempt is over and receipted.
 * 2. Issue the command the handled event calls for (the table of
 *    docs/governed-path.md step 2), only while the attempt is still in the
 *    state that needs it and its answer is not in the log yet.
 *
 * Event ids and idempotency keys derive from the cause (attempt, policy
 * entry, grant, receipt), command msg ids likewise.
 */
export function planTask(view: TaskView, context: PlanContext): Plan {
  return new Planner(view, context).run();
}

class Planner {
  readonly #drafts: EventDraft[] = [];
  readonly #nowMs: number;

  constructor(
    private readonly view: TaskView,
    private readonly context: PlanContext,
  ) {
    this.#nowMs = Date.parse(context.now);
  }

  run(): Plan {
    if (this.view.task.status === 'initial') {
      throw new OrchestratorError('ORCHESTRATOR_TASK_UNKNOWN', `task ${this.view.taskId} has no task.created; its events cannot be placed`, {
        details: { task_id: this.view.taskId, event_type: this.context.trigger.event_type },
      });
    }
    // A forged or unauthorized director's decision resolves nothing (it was left out of the fold): its refusal goes on the record.
    this.#recordRefusals();
    // Newly bound input first: a superseded attempt must not move on (to a grant, to the executor) on facts it no longer answers.
    for (const attempt of [...this.view.attempts.values()]) this.#applySupersession(attempt);
    for (const attempt of [...this.view.attempts.values()]) this.#reconcile(attempt);
    // Claims (docs/task-claims.md): verdicts, the verify run, and closing a briefed task on its accepted done claim.
    planClaims(this.#claimPlanner());
    // A degraded memory_write's candidate goes to the task's working state (Hermit 6.3.1, issue 17).
    planMemoryCandidates(this.#claimPlanner());
    this.#closeTask();
    return { events: this.#drafts, commands: this.#commands() };
  }

  get #task(): TaskRecord {
    return this.view.task as TaskRecord;
  }

  // ---- resolutions without authority (DESIGN invariant 9) ---------------------------------------

  /**
   * Every director's decision the view left out for failing its authority check gets one
   * `approval.resolution_refused` (the kernel's refusal: the approval stays as it was), with
   * the check's code and message, once (its key derives from the refused event).
   */
  #recordRefusals(): void {
    for (const refusal of this.view.refusedResolutions.values()) {
      if (this.view.recordedRefusals.has(refusal.event_id)) continue;
      const approval = this.view.approvals.get(refusal.approval_id)?.state;
      if (approval === undefined || approval.status === 'initial') continue;
      const [event] = approvalDecider.decide(
        {
          type: 'refuse-resolution',
          data: { resolution_event_id: refusal.event_id, code: refusal.code, reason: clip(refusal.message), refused_by: this.context.actorId },
          metadata: this.#meta(),
        },
        approval,
      );
      if (event === undefined) continue;
      this.#fact({
        type: event.type,
        entityType: 'approval',
        entityId: refusal.approval_id,
        payload: event.data as Record<string, unknown>,
        key: `${refusal.event_id}:approval.resolution_refused`,
        stepId: approval.step_id,
        attemptId: approval.attempt_id,
      });
    }
  }

  // ---- newly bound input (Hermit 11.5, 16.7) ----------------------------------------------------

  /**
   * An attempt whose request `supersedes` an earlier request of the task ends
   * that request's attempt as superseded (cause `input_drift`) while it has
   * not started executing: its unused grants are revoked first (in the same
   * append, before the supersession), so the executor refuses a run already
   * on its way, and its pending approval is cancelled once the supersession is
   * in the log (`attempt.superseded` → `approval.cancel`). Never a silent
   * reuse of the old approval: the new attempt goes through policy itself.
   * The earlier attempt already executing (or executed) → the new attempt
   * fails `supersedes_too_late` before policy; unknown → `supersedes_unknown`
   * (ingress refuses both, this covers a race with it). An earlier attempt that
   * ended before running leaves nothing to supersede.
   */
  #applySupersession(successor: AttemptView): void {
    const state = successor.state;
    if (state.status === 'initial') return;
    const supersedes = state.submitted_request?.supersedes;
    if (supersedes === undefined) return;
    const key = `supersedes:${supersedes}`;
    const open = ATTEMPT_PRE_EXECUTION_STATES.includes(state.status);
    const earlier = this.view.attemptOfRequest(supersedes);
    if (earlier === undefined || earlier === successor || earlier.state.status === 'initial') {
      if (open) this.#perform(this.#fail(state, 'supersedes_unknown', `request ${supersedes} is not an earlier request of task ${this.view.taskId}; nothing was superseded`, key));
      return;
    }
    const superseded = earlier.state;
    if (superseded.status === 'superseded') return;
    if (this.#executed(earlier)) {
      if (open) {
        this.#perform(
          this.#fail(state, 'supersedes_too_late', `attempt ${superseded.attempt_id} of request ${supersedes} has already started executing; the revised request was not run`, key),
        );
      }
      return;
    }
    if (!ATTEMPT_PRE_EXECUTION_STATES.includes(superseded.status)) return;
    const reason = clip(`request ${supersedes} was superseded by request ${state.submitted_request?.action_request_id ?? state.attempt_id} (attempt ${state.attempt_id})`);
    for (const grant of this.view.grantsOf(superseded.attempt_id)) {
      if (grant.state.status !== 'issued' || grant.state.uses.length > 0 || grant.first_use_at !== null) continue;
      this.#perform({
        aggregate: 'grant',
        id: grant.grant_id,
        attemptId: superseded.attempt_id,
        command: { type: 'revoke-grant', data: { revoked_by: this.context.actorId, reason }, metadata: this.#meta() },
        key: `${grant.grant_id}:revoke:superseded`,
      });
    }
    this.#perform(
      this.#attempt(
        superseded,
        { type: 'report-drift', data: { cause: 'input_drift', recovery: 'supersede', superseded_by_attempt_id: state.attempt_id, note: reason } },
        `superseded-by:${state.attempt_id}`,
      ),
    );
  }

  /** Whether an effect of the attempt may have started: a state past authorization, an outcome, or a claimed grant use. */
  #executed(attempt: AttemptView): boolean {
    const state = attempt.state;
    if (state.status === 'initial') return false;
    if ((EXECUTED_STATES as readonly string[]).includes(state.status) || state.execution_outcome !== null || attempt.executions.length > 0) return true;
    return this.view.grantsOf(state.attempt_id).some((grant) => grant.first_use_at !== null || (grant.state.status !== 'initial' && grant.state.uses.length > 0));
  }

  // ---- reconcile --------------------------------------------------------------------------------

  #reconcile(attempt: AttemptView): void {
    for (let i = 0; i < MAX_TRANSITIONS_PER_ATTEMPT; i++) {
      const transition = this.#next(attempt);
      if (transition === undefined) return;
      this.#perform(transition);
    }
    throw new OrchestratorError('ORCHESTRATOR_TRANSITION_REFUSED', `attempt ${attempt.attempt_id} does not settle; refusing to plan further`, {
      details: { attempt_id: attempt.attempt_id },
    });
  }

  #next(attempt: AttemptView): Transition | undefined {
    const state = attempt.state;
    if (state.status === 'initial') return undefined;
    switch (state.status) {
      case 'awaiting_policy':
        return this.#afterPolicy(attempt, state);
      case 'awaiting_approval':
        return this.#afterApproval(state);
      case 'authorized':
        return this.#afterAuthorization(attempt, state);
      case 'executing':
        return this.#afterExecution(attempt, state);
      case 'observing':
        return this.#afterObservation(attempt, state);
      case 'receipt_pending': {
        const receipt = receiptAfter(attempt, attempt.status_seq);
        if (receipt === undefined) return undefined;
        return this.#attempt(state, { type: 'record-receipt', data: { receipt_ref: `receipt:${receipt.receipt_id}` } }, `receipt:${receipt.receipt_id}`);
      }
      case 'succeeded':
      case 'failed':
      case 'cancelled':
      case 'superseded':
        return this.#closeStep(attempt, state);
      default:
        // created, leased, compiling_context, reasoning: ingress (or the engine) moves these.
        return undefined;
    }
  }

  #afterPolicy(attempt: AttemptView, state: AttemptRecord): Transition | undefined {
    const fact = last(attempt.policy.filter((p) => p.seq > attempt.entry_seq));
    if (fact === undefined) return undefined;
    const result = fact.value.policy_result;
    const policy = policyDecisionOf(result);
    const entry = state.policy_entries;
    const key = `policy:${entry}`;
    switch (result.outcome) {
      case 'allow':
        return this.#attempt(state, { type: 'record-policy-result', data: { policy } }, key);
      case 'require_approval':
        return this.#attempt(state, { type: 'record-policy-result', data: { policy, approval_id: approvalIdFor(this.view.taskId, state.attempt_id, entry) } }, key);
      case 'deny':
        return this.#attempt(state, { type: 'record-policy-result', data: { policy, reasons: denyReasonsOf(result) } }, key);
      case 'downgrade': {
        const rewritten = rewrittenRequestOf(fact.value);
        const unavailable = (why: string) => this.#fail(state, 'downgrade_unavailable', `policy downgraded the request, but ${why}; the attempt cannot continue`, key);
        if (rewritten === undefined) return unavailable('policy.evaluated carries no rewritten request matching its rewritten_action_request_ref');
        const mode = result.downgrade?.restricted_mode;
        return this.#attempt(
          state,
          {
            type: 'record-policy-result',
            data: { policy, rewritten_request: rewritten, ...(mode === undefined ? {} : { restricted_mode: mode }), ...(result.downgrade === undefined ? {} : { summary: result.downgrade.summary }) },
          },
          key,
          // The kernel refuses a rewritten request it cannot take (another task's, malformed): no continuation, a clear failure.
          (error) => (hasErrorCode(error, 'ATTEMPT_REQUEST_INVALID') ? unavailable('the kernel refused the rewritten request') : undefined),
        );
      }
      default:
        return undefined;
    }
  }

  #afterApproval(state: AttemptRecord): Transition | undefined {
    const approvalId = state.approval_id;
    const approval = approvalId === null ? undefined : this.view.approvals.get(approvalId)?.state;
    if (approvalId === null || approval === undefined || approval.status === 'initial' || approval.status === 'pending') return undefined;
    const key = `approval:${approvalId}`;
    const resolution = approval.status;
    const data =
      resolution === 'granted'
        ? { approval_id: approvalId, resolution, witness_validated: approval.witness_validated }
        : { approval_id: approvalId, resolution };
    return this.#attempt(state, { type: 'record-approval-resolution', data }, key, (error) =>
      // The kernel refuses to authorize a delayed high-risk action whose state witness was not revalidated (Hermit 12.4).
      hasErrorCode(error, 'ATTEMPT_WITNESS_NOT_VALIDATED')
        ? this.#fail(state, 'witness_not_validated', `approval ${approvalId} was granted without revalidating the state witness policy required`, key)
        : undefined,
    );
  }

  #afterAuthorization(attempt: AttemptView, state: AttemptRecord): Transition | undefined {
    const latest = last(this.#grantsSinceEntry(attempt));
    if (state.grant === null) return latest === undefined ? undefined : this.#attachOrRenew(attempt, state, latest);
    const grant = this.view.grants.get(state.grant.grant_id);
    if (grant === undefined) return undefined;
    if (grant.first_use_at !== null) {
      // Executing since the executor claimed the use through the log: decided at the claim's instant.
      return this.#attempt(state, { type: 'start-execution', data: { grant_id: grant.grant_id } }, `execute:${grant.grant_id}`, undefined, grant.first_use_at);
    }
    // The attached grant expired unused and its renewal was issued: the renewal takes its place.
    if (latest !== undefined && latest.issued_seq > grant.issued_seq && this.#expiredUnused(attempt, grant, true)) return this.#attachOrRenew(attempt, state, latest);
    if (grant.refusal !== null) {
      if (this.#renewable(attempt, grant, true)) return undefined; // its renewal is asked for (#renewalCommands)
      const renewals = this.#grantsSinceEntry(attempt).length - 1;
      const renewed = renewals === 0 || grant.refusal.code !== 'GRANT_EXPIRED' ? '' : ` (renewed ${renewals} time(s), the limit; no use of any started)`;
      return this.#fail(state, 'grant_refused', `the executor refused grant ${grant.grant_id}: ${grant.refusal.code}: ${grant.refusal.message}${renewed}`, `refused:${grant.grant_id}`);
    }
    return undefined;
  }

  /** Attaches a grant issued for the attempt, unless it expired before that (then it is renewed, or the attempt fails). */
  #attachOrRenew(attempt: AttemptView, state: AttemptRecord, grant: GrantView): Transition | undefined {
    const expiresAt = new Date(grant.claims.exp * 1000).toISOString();
    const key = `grant:${grant.grant_id}`;
    if (grant.claims.exp * 1000 > this.#nowMs) return this.#attempt(state, { type: 'attach-grant', data: { grant_id: grant.grant_id, expires_at: expiresAt } }, key);
    if (this.#renewable(attempt, grant, false)) return undefined; // its renewal is asked for (#renewalCommands)
    const renewals = this.#grantsSinceEntry(attempt).length - 1;
    const renewed = renewals === 0 ? '' : ` (renewed ${renewals} time(s), the limit)`;
    return this.#fail(state, 'grant_expired', `grant ${grant.grant_id} expired at ${expiresAt} before it was attached${renewed}`, key);
  }

  /** The attempt's grants since its latest entry into policy (one authority: its policy result, its approval), in issue order. */
  #grantsSinceEntry(attempt: AttemptView): GrantView[] {
    return this.view
      .grantsOf(attempt.attempt_id)
      .filter((grant) => grant.issued_seq > attempt.entry_seq)
      .sort((a, b) => a.issued_seq - b.issued_seq);
  }

  /**
   * True when no use of `grant` ever ran and none can: every use claimed of it was proven never
   * started (released, `not_run`; a grant never used has none), it expired (an executor refused
   * it `GRANT_EXPIRED` after its last such use, or, never attached so never sent to one, its `exp`
   * passed on this clock), and it was not revoked. Such a grant says nothing about the action: it
   * is renewed (issue 13), whether the attempt is still authorized or was executing on it.
   */
  #expiredUnused(attempt: AttemptView, grant: GrantView, attached: boolean): boolean {
    if (grant.state.status !== 'issued' || !this.#nothingRan(attempt, grant)) return false;
    if (grant.refusal !== null) return grant.refusal.code === 'GRANT_EXPIRED' && this.#refusedAfterUses(attempt, grant);
    return !attached && grant.claims.exp * 1000 <= this.#nowMs;
  }

  /** An expired grant nothing ran under that is the attempt's latest, with renewals left (GRANT_RENEWALS_MAX). */
  #renewable(attempt: AttemptView, grant: GrantView, attached: boolean): boolean {
    const grants = this.#grantsSinceEntry(attempt);
    return last(grants)?.grant_id === grant.grant_id && grants.length - 1 < GRANT_RENEWALS_MAX && this.#expiredUnused(attempt, grant, attached);
  }

  /** The grant's claimed uses and how each stands (kernel `useSettlements`): released ones are `not_run`. */
  #replaced(attempt: AttemptView, grant: GrantView): ReplacedGrant {
    const completions = attempt.executions.filter((e) => e.value.grant_id === grant.grant_id).map((e) => ({ use_no: e.value.use_no, outcome: e.value.outcome }));
    const uses = grant.state.status === 'initial' ? [] : useSettlements(grant.state, completions);
    return { grant_id: grant.grant_id, revoked: grant.state.status === 'revoked', uses };
  }

  /** Every use claimed of the grant was proven never started (true for a grant never used): nothing of the action ran under it. */
  #nothingRan(attempt: AttemptView, grant: GrantView): boolean {
    return this.#replaced(attempt, grant).uses.every((use) => use.settlement === 'not_run');
  }

  /** The executor's last refusal of the grant came after the last execution recorded under it. */
  #refusedAfterUses(attempt: AttemptView, grant: GrantView): boolean {
    if (grant.refusal === null) return false;
    const execution = last(attempt.executions.filter((e) => e.value.grant_id === grant.grant_id));
    return (grant.refused_seq ?? 0) > (execution?.seq ?? 0);
  }

  #afterExecution(attempt: AttemptView, state: AttemptRecord): Transition | undefined {
    const grantId = state.grant?.grant_id;
    const grant = grantId === undefined ? undefined : this.view.grants.get(grantId);
    const execution = last(attempt.executions.filter((e) => e.value.grant_id === grantId));
    if (execution !== undefined && execution.value.outcome !== 'not_run') {
      const outputRefs = execution.value.artifacts.map((artifact) => `artifact:${artifact.artifact_id}`).slice(0, LIMITS.listItems);
      return this.#attempt(state, { type: 'report-execution-outcome', data: { outcome: execution.value.outcome, output_refs: outputRefs } }, `observe:${grantId}`);
    }
    // Nothing of the action has a result under the held grant: each use of it was proven never
    // started (not_run, released), or none is settled yet (one in flight, or a renewal's run
    // command on its way). A use in flight is waited for: it may be running.
    if (grant === undefined || !this.#nothingRan(attempt, grant)) return undefined;
    if (this.#refusedAfterUses(attempt, grant)) return this.#afterRefusalNothingRan(attempt, state, grant);
    if (execution === undefined) return undefined;
    // Not a result of the action (issue 13): its use never started and was released; the attempt
    // stays executing while the next run (`#commandFor`, execution.completed) claims a new use.
    // Only when that cannot happen does it end, as errored (it did not complete), never as "ran".
    if (this.#notRun(attempt, grantId).length < MAX_RUNS_PER_GRANT) return undefined;
    return this.#notCompleted(state, grantId);
  }

  /**
   * The executor refused the held grant when nothing of the action had run under it (issue 13:
   * its uses were proven never started, or, for a renewal, none was claimed). Refused as expired
   * (a run command that waited in a backlog longer than the grant lived) and not revoked, it is
   * renewed on the same authority: the renewal is asked for on the refusal (`#renewalCommands`),
   * and attached here in its place once issued (kernel `attach-renewal`, which checks again that
   * no use may have run), decided at the refusal's instant or later (the executor's clock found
   * the grant expired). Refused otherwise, or with renewals spent, the attempt ends as not
   * completed (errored): its receipt says the action was not run, and why.
   */
  #afterRefusalNothingRan(attempt: AttemptView, state: AttemptRecord, grant: GrantView): Transition | undefined {
    const latest = last(this.#grantsSinceEntry(attempt));
    if (latest !== undefined && latest.issued_seq > grant.issued_seq && this.#expiredUnused(attempt, grant, true)) {
      if (latest.claims.exp * 1000 > this.#nowMs) {
        const refusedAt = grant.refusal?.at ?? null;
        const now = refusedAt !== null && Date.parse(refusedAt) > this.#nowMs ? refusedAt : this.context.now;
        const expiresAt = new Date(latest.claims.exp * 1000).toISOString();
        const data = { grant_id: latest.grant_id, expires_at: expiresAt, replaces: this.#replaced(attempt, grant) };
        return this.#attempt(state, { type: 'attach-renewal', data }, `renewal:${latest.grant_id}`, undefined, now);
      }
      if (this.#renewable(attempt, latest, false)) return undefined; // the renewal expired before it was attached: the next one is asked for (#renewalCommands)
      return this.#notCompleted(state, grant.grant_id);
    }
    if (this.#renewable(attempt, grant, true)) return undefined; // its renewal is asked for (#renewalCommands)
    return this.#notCompleted(state, grant.grant_id);
  }

  /** Ends an executing attempt nothing of which ran as not completed (errored); never "ran and failed". */
  #notCompleted(state: AttemptRecord, grantId: string | undefined): Transition {
    return this.#attempt(state, { type: 'report-execution-outcome', data: { outcome: 'errored', output_refs: [] } }, `observe:${grantId}:not-run`);
  }

  /** The attempt's executions under `grantId` proven never to have started (`not_run`), in log order. */
  #notRun(attempt: AttemptView, grantId: string | undefined): Fact<ExecutionCompleted>[] {
    return attempt.executions.filter((e) => e.value.grant_id === grantId && e.value.outcome === 'not_run');
  }

  #afterObservation(attempt: AttemptView, state: AttemptRecord): Transition | undefined {
    const grantId = state.grant?.grant_id;
    if (!state.outcome_uncertain) {
      const execution = last(attempt.executions.filter((e) => e.value.grant_id === grantId))?.value;
      const succeeded = execution !== undefined && execution.outcome === 'completed' && execution.exit_code === 0 && !execution.timed_out;
      return this.#attempt(
        state,
        { type: 'settle-observation', data: { result_code: succeeded ? 'succeeded' : 'failed', evidence_refs: [...state.output_refs] } },
        `settle:${grantId}`,
      );
    }
    // Unknown outcome (Hermit 19.4): never re-run; receipt it as uncertain and stay observing until resolved on evidence.
    if (state.unknown_outcome_receipt_ref !== null) {
      // A director's resolution of this very execution settles it: the resolution event and the unknown receipt are the evidence.
      const execution = last(attempt.executions.filter((e) => e.value.grant_id === grantId));
      const resolution = execution === undefined ? undefined : attempt.resolutions.find((r) => r.value.execution_event_id === execution.event_id);
      if (resolution === undefined) return undefined;
      return this.#attempt(
        state,
        {
          type: 'settle-observation',
          data: {
            result_code: resolution.value.outcome,
            resolved_by: resolution.value.resolved_by,
            evidence_refs: [`event:${resolution.event_id}`, state.unknown_outcome_receipt_ref, ...state.output_refs].slice(0, LIMITS.listItems),
          },
        },
        `resolve:${resolution.event_id}`,
      );
    }
    const receipt = receiptAfter(attempt, attempt.status_seq);
    if (receipt === undefined) return undefined;
    return this.#attempt(
      state,
      { type: 'record-unknown-outcome-receipt', data: { receipt_ref: `receipt:${receipt.receipt_id}` } },
      `unknown-outcome-receipt:${receipt.receipt_id}`,
    );
  }

  /** Closes the attempt on its step once it is over (and receipted), then ends a step no retry will resume. */
  #closeStep(attempt: AttemptView, state: AttemptRecord): Transition | undefined {
    const step = this.view.steps.get(state.step_id);
    if (step === undefined || step.status === 'initial') return undefined;
    const ended = state.status === 'failed' || state.status === 'cancelled';
    if (step.active_attempt_id === state.attempt_id) {
      // A failure or cancellation is receipted too; the step closes once the receipt is in the log.
      if (ended && state.receipt_ref === null && receiptAfter(attempt, 0) === undefined) return undefined;
      const outcome = state.status as 'succeeded' | 'failed' | 'cancelled' | 'superseded';
      return this.#step(step.step_id, state.attempt_id, { type: 'close-attempt', data: { attempt_id: state.attempt_id, outcome } }, `close:${state.attempt_id}`);
    }
    // A step whose last attempt a request of another step superseded (newly bound input) is superseded by that step.
    if (state.status === 'superseded' && step.status === 'ready' && last(step.attempts)?.attempt_id === state.attempt_id) {
      const successorId = state.superseded_by_attempt_id;
      const successor = successorId === null ? undefined : this.view.attempts.get(successorId)?.state;
      if (successor === undefined || successor.status === 'initial' || successor.step_id === step.step_id) return undefined;
      const reason = clip(`attempt ${state.attempt_id} was superseded by attempt ${successor.attempt_id} of step ${successor.step_id}`);
      return this.#step(step.step_id, state.attempt_id, { type: 'supersede-step', data: { reason, superseded_by_step_id: successor.step_id } }, `supersede:${state.attempt_id}`);
    }
    // No automatic retry yet: the step ends with its last attempt.
    if (ended && step.status === 'ready' && last(step.attempts)?.attempt_id === state.attempt_id) {
      const reason = clip(state.failure?.message ?? `attempt ${state.attempt_id} ${state.status}`);
      const command: StepCommand =
        state.status === 'failed' ? { type: 'fail-step', data: { reason }, metadata: this.#meta() } : { type: 'cancel-step', data: { reason }, metadata: this.#meta() };
      return this.#step(step.step_id, state.attempt_id, command, `end:${state.attempt_id}`);
    }
    return undefined;
  }

  /**
   * A running task whose steps are all over completes (every step succeeded, or was superseded by one) or fails.
   * A task created from a brief never closes this way: absence of done.json is not success (seed 003); its accepted done claim closes it.
   */
  #closeTask(): void {
    if (this.view.task.status !== 'running' || this.#task.brief !== null) return;
    const steps = [...this.view.steps.values()].filter((step) => step.status !== 'initial');
    if (steps.length === 0 || steps.some((step) => !STEP_TERMINAL_STATES.includes(step.status))) return;
    // A superseded step handed its work to the step that superseded it, which is judged on its own.
    const unsuccessful = steps.find((step) => step.status !== 'succeeded' && step.status !== 'superseded');
    if (unsuccessful === undefined) {
      this.#perform({ aggregate: 'task', command: { type: 'complete-task', data: {}, metadata: this.#meta() }, key: 'complete' });
      return;
    }
    const reason = clip(unsuccessful.reason ?? `a step of task ${this.view.taskId} did not succeed`);
    this.#perform({ aggregate: 'task', command: { type: 'fail-task', data: { reason }, metadata: this.#meta() }, key: 'fail' });
  }

  #claimPlanner(): ClaimPlanner {
    return { view: this.view, now: this.context.now, actorId: this.context.actorId, fact: (draft) => this.#fact(draft), perform: (transition) => this.#perform(transition) };
  }

  /** Appends a fact the orchestrator itself decides (claims, questions, the ownership audit, decisions), folded at once. */
  #fact(fact: FactDraft): void {
    const taskId = this.view.taskId;
    const draft: EventDraft = {
      event_id: eventIdFor(taskId, fact.key),
      schema_version: 1,
      event_type: fact.type,
      entity_type: fact.entityType,
      entity_id: fact.entityId,
      ...(fact.stepId === undefined ? {} : { step_id: fact.stepId }),
      ...(fact.attemptId === undefined ? {} : { attempt_id: fact.attemptId }),
      occurred_at: this.context.now,
      actor_type: 'service',
      actor_id: this.context.actorId,
      payload: fact.payload,
      causation_id: this.context.trigger.event_id,
      correlation_id: taskId,
      idempotency_key: fact.key,
    };
    this.#drafts.push(draft);
    this.view.apply({ ...draft, task_seq: this.view.headSeq + 1 });
  }

  #meta(now = this.context.now): { now: string } {
    return { now };
  }

  #attempt(
    state: AttemptRecord,
    command: { type: AttemptCommand['type']; data: unknown },
    key: string,
    refused?: (error: unknown) => Transition | undefined,
    now?: string,
  ): Transition {
    return {
      aggregate: 'attempt',
      id: state.attempt_id,
      command: { ...command, metadata: this.#meta(now) } as AttemptCommand,
      key: `${state.attempt_id}:${key}`,
      ...(refused === undefined ? {} : { refused }),
    };
  }

  /** Ends an attempt that has not executed (the kernel only allows it before any side effect). */
  #fail(state: AttemptRecord, reasonCode: string, reason: string, key: string): Transition {
    return this.#attempt(state, { type: 'fail-attempt', data: { reason_code: reasonCode, reason: clip(reason) } }, `${key}:fail`);
  }

  #step(stepId: string, attemptId: string, command: { type: StepCommand['type']; data: unknown }, key: string): Transition {
    return { aggregate: 'step', id: stepId, attemptId, command: { ...command, metadata: this.#meta() } as StepCommand, key: `${stepId}:${key}` };
  }

  #perform(transition: Transition): void {
    let events: DecidedEvent[];
    try {
      events = this.#decide(transition) as DecidedEvent[];
    } catch (error) {
      const instead = transition.aggregate === 'attempt' ? transition.refused?.(error) : undefined;
      if (instead !== undefined) return this.#perform(instead);
      throw new OrchestratorError('ORCHESTRATOR_TRANSITION_REFUSED', `the kernel refused ${transition.command.type} (${transition.key})`, {
        cause: error,
        details: { key: transition.key, command: transition.command.type, code: hasErrorCode(error) ? error.code : null },
      });
    }
    for (const event of events) this.#draft(transition, event);
  }

  #decide(transition: Transition): unknown[] {
    switch (transition.aggregate) {
      case 'attempt':
        return attemptDecider.decide(transition.command, this.view.attempt(transition.id).state);
      case 'step': {
        const step = this.view.steps.get(transition.id) ?? stepDecider.initialState();
        return stepDecider.decide(transition.command, step);
      }
      case 'task':
        return taskDecider.decide(transition.command, this.view.task);
      case 'grant': {
        const grant = this.view.grants.get(transition.id);
        return grantDecider.decide(transition.command, grant === undefined ? grantDecider.initialState() : grant.state);
      }
    }
  }

  #draft(transition: Transition, event: DecidedEvent): void {
    const taskId = this.view.taskId;
    const key = `${transition.key}:${event.type}`;
    // An attempt being created has no state yet: its step is in the event (create-attempt).
    const stepOf = (attemptId: string) => {
      const state = this.view.attempt(attemptId).state;
      return state.status === 'initial' ? String(event.data['step_id']) : state.step_id;
    };
    const where =
      transition.aggregate === 'attempt'
        ? { entity_type: 'attempt' as const, entity_id: transition.id, step_id: stepOf(transition.id), attempt_id: transition.id }
        : transition.aggregate === 'step'
          ? { entity_type: 'step' as const, entity_id: transition.id, step_id: transition.id, attempt_id: transition.attemptId }
          : transition.aggregate === 'grant'
            ? { entity_type: 'grant' as const, entity_id: transition.id, step_id: stepOf(transition.attemptId), attempt_id: transition.attemptId }
            : { entity_type: 'task' as const, entity_id: taskId };
    const draft: EventDraft = {
      event_id: eventIdFor(taskId, key),
      schema_version: 1,
      event_type: event.type,
      ...where,
      occurred_at: this.context.now,
      actor_type: 'service',
      actor_id: this.context.actorId,
      payload: event.data,
      causation_id: this.context.trigger.event_id,
      correlation_id: taskId,
      idempotency_key: key,
    };
    this.#drafts.push(draft);
    // Fold it now, exactly as a reader of the log will, so the next decision sees it.
    this.view.apply({ ...draft, task_seq: this.view.headSeq + 1 });
  }

  // ---- commands ---------------------------------------------------------------------------------

  #commands(): PlannedCommand[] {
    const trigger = this.context.trigger;
    if (CloseCellReason.safeParse(trigger.event_type).success) return this.#taskEnded(trigger.event_type);
    if (trigger.event_type.startsWith('approval.')) return this.#approvalCommands(trigger);
    if (trigger.event_type === 'execution.completed') return this.#rerunCommands(trigger);
    if (trigger.event_type === 'grant.refused' || trigger.event_type === 'grant.issued') return this.#renewalCommands(trigger);
    if (!trigger.event_type.startsWith('attempt.')) return [];
    const attemptId = trigger.attempt_id ?? (trigger.entity_type === 'attempt' ? trigger.entity_id : undefined);
    const attempt = attemptId === undefined ? undefined : this.view.attempts.get(attemptId);
    if (attempt === undefined || attempt.state.status === 'initial') return [];
    const state = attempt.state;
    const command = this.#commandFor(trigger.event_type, attempt, state);
    return command === undefined ? [] : [command];
  }

  #commandFor(eventType: string, attempt: AttemptView, state: AttemptRecord): PlannedCommand | undefined {
    const ids = { task_id: this.view.taskId, step_id: state.step_id, attempt_id: state.attempt_id };
    const msgId = (suffix: string) => `${state.attempt_id}:cmd:${suffix}`;
    const unreceipted = receiptAfter(attempt, 0) === undefined;
    switch (eventType) {
      case 'attempt.awaiting_policy':
      case 'attempt.policy_reentered':
        if (state.status !== 'awaiting_policy' || attempt.policy.some((p) => p.seq > attempt.entry_seq)) return undefined;
        return {
          command: 'policyEvaluate',
          msgId: msgId(`policy.evaluate:${state.policy_entries}`),
          payload: parseContract('EvaluatePolicy', EvaluatePolicy, {
            ...ids,
            action_request: requestOf(state),
            policy_profile: profileNameOf(this.#task.policy_profile_ref),
            files_owned: [...this.#task.files_owned],
            ...(this.#sacredExceptions.length === 0 ? {} : { sacred_exceptions: [...this.#sacredExceptions] }),
          }),
        };
      case 'attempt.awaiting_approval': {
        const approvalId = state.approval_id;
        const requested = approvalId !== null && (this.view.approvals.get(approvalId)?.state.status ?? 'initial') !== 'initial';
        if (state.status !== 'awaiting_approval' || approvalId === null || requested) return undefined;
        const policy = policyOf(state);
        const result = last(attempt.policy.filter((p) => p.value.policy_result.policy_result_id === policy.policy_result_id))?.value.policy_result;
        return {
          command: 'approvalRequest',
          msgId: msgId(`approval.request:${approvalId}`),
          payload: parseContract('RequestApproval', RequestApproval, {
            ...ids,
            approval_id: approvalId,
            policy_result_id: policy.policy_result_id,
            action_request: requestOf(state),
            requested_by: requestOf(state).proposed_by,
            risk_band: policy.risk_band,
            reason: clip(result?.reasoning_summary ?? `policy ${policy.profile_id}@${policy.policy_version} requires approval`),
          }),
        };
      }
      case 'attempt.authorized':
      case 'attempt.downgraded': {
        const issued = this.#grantsSinceEntry(attempt).length > 0;
        if (state.status !== 'authorized' || state.grant !== null || issued) return undefined;
        return this.#issueGrant(state);
      }
      case 'attempt.grant_attached':
      case 'attempt.grant_renewed': {
        // A grant attached before execution, or a renewal in place of one nothing ran under (issue 13): its first run.
        const grant = state.grant === null ? undefined : this.view.grants.get(state.grant.grant_id);
        const waiting = eventType === 'attempt.grant_attached' ? 'authorized' : 'executing';
        if (state.status !== waiting || grant === undefined || grant.first_use_at !== null || grant.refusal !== null) return undefined;
        if (grant.jws === null) {
          throw new OrchestratorError('ORCHESTRATOR_GRANT_JWS_MISSING', `grant.issued for ${grant.grant_id} carries no JWS; the executor could not verify it`, {
            details: { grant_id: grant.grant_id },
          });
        }
        return {
          command: 'executorRun',
          msgId: msgId(`executor.run:${grant.grant_id}`),
          payload: parseContract('RunAction', RunAction, { ...ids, grant_id: grant.grant_id, grant_jws: grant.jws, action_request: requestOf(state) }),
        };
      }
      case 'attempt.observing':
        if (state.status !== 'observing' || !state.outcome_uncertain || state.unknown_outcome_receipt_ref !== null) return undefined;
        if (receiptAfter(attempt, attempt.status_seq) !== undefined) return undefined;
        return this.#receipt(ids, 'settled', msgId('receipt.issue:settled:unknown_outcome'));
      case 'attempt.receipt_pending':
        if (state.status !== 'receipt_pending' || receiptAfter(attempt, attempt.status_seq) !== undefined) return undefined;
        return this.#receipt(ids, 'settled', msgId('receipt.issue:settled'));
      case 'attempt.policy_denied':
        if (state.status !== 'failed' || state.failure?.code !== 'policy_denied' || !unreceipted) return undefined;
        return this.#receipt(ids, 'policy_denied', msgId('receipt.issue:policy_denied'));
      case 'attempt.approval_denied':
      case 'attempt.approval_expired':
        if (state.status !== 'failed' || !unreceipted) return undefined;
        return this.#receipt(ids, 'approval_denied', msgId('receipt.issue:approval_denied'));
      case 'attempt.superseded': {
        // Superseded by a newly bound request while its approval was pending: that approval must never be resolved into a grant.
        if (state.status !== 'superseded' || state.last_drift !== 'input_drift' || state.approval_id === null) return undefined;
        const approval = this.view.approvals.get(state.approval_id)?.state;
        if (approval === undefined || approval.status !== 'pending') return undefined;
        const successor = state.superseded_by_attempt_id === null ? 'a newly bound request' : `attempt ${state.superseded_by_attempt_id}`;
        return this.#cancelApproval(approval, 'input_drift', `attempt ${state.attempt_id} was superseded by ${successor}; its approval no longer answers the action`);
      }
      case 'attempt.failed':
      case 'attempt.cancelled':
        // Ended before any side effect (grant refused or expired, witness not revalidated, cancelled): receipted as refused.
        if ((state.status !== 'failed' && state.status !== 'cancelled') || state.receipt_ref !== null || !unreceipted) return undefined;
        return this.#receipt(ids, 'refused', msgId('receipt.issue:refused'));
      default:
        return undefined;
    }
  }

  /** IssueGrant for the attempt's authority (its policy result, its approval); `renewal` n after n grants expired unused. */
  #issueGrant(state: AttemptRecord, renewal?: number): PlannedCommand {
    const suffix = renewal === undefined ? '' : `:renewal:${renewal}`;
    return {
      command: 'approvalIssueGrant',
      msgId: `${state.attempt_id}:cmd:approval.issue-grant:${state.policy_entries}${suffix}`,
      payload: parseContract('IssueGrant', IssueGrant, {
        task_id: this.view.taskId,
        step_id: state.step_id,
        attempt_id: state.attempt_id,
        action_request: requestOf(state),
        policy_result_id: policyOf(state).policy_result_id,
        approval_id: state.authorized_via === 'approval' ? state.approval_id : null,
        issued_to: this.context.executorPrincipalId,
        ...(renewal === undefined ? {} : { renewal }),
      }),
    };
  }

  /**
   * After the attempt's latest grant expired with no use started (refused `GRANT_EXPIRED` by an
   * executor: its run command waited in a backlog longer than the grant lived, before any use or
   * after every use of it was proven never started; or expired before it was attached): a renewal,
   * on the same authority, which the approval service checks again. Nothing ran, so the action
   * still runs once, with the renewal. Handled on the grant's own event.
   */
  #renewalCommands(trigger: LoggedEvent): PlannedCommand[] {
    const grantId = trigger.entity_type === 'grant' ? trigger.entity_id : undefined;
    const grant = grantId === undefined ? undefined : this.view.grants.get(grantId);
    const attempt = grant === undefined ? undefined : this.view.attempts.get(grant.attempt_id);
    // Authorized: no use was ever claimed. Executing: every use of the held grant was proven never started (#expiredUnused).
    if (grant === undefined || attempt === undefined || (attempt.state.status !== 'authorized' && attempt.state.status !== 'executing')) return [];
    const state = attempt.state;
    const attached = state.grant?.grant_id === grant.grant_id;
    if (!this.#renewable(attempt, grant, attached)) return [];
    return [this.#issueGrant(state, this.#grantsSinceEntry(attempt).length)];
  }

  /**
   * After a use proven never to have started (`execution.completed` outcome `not_run`, its use
   * released): the same attempt runs again under its grant, as run `n + 1` (another command, so
   * another use, which the executor verifies and claims like any), while the attempt is still
   * executing on that grant. Nothing is re-run after any other outcome.
   */
  #rerunCommands(trigger: LoggedEvent): PlannedCommand[] {
    const parsed = ExecutionCompleted.safeParse(trigger.payload);
    if (!parsed.success || parsed.data.outcome !== 'not_run') return [];
    const attemptId = trigger.attempt_id ?? this.view.grants.get(parsed.data.grant_id)?.attempt_id;
    const attempt = attemptId === undefined ? undefined : this.view.attempts.get(attemptId);
    if (attempt === undefined || attempt.state.status !== 'executing') return [];
    const state = attempt.state;
    const grant = state.grant === null ? undefined : this.view.grants.get(state.grant.grant_id);
    if (grant === undefined || grant.grant_id !== parsed.data.grant_id || grant.jws === null) return [];
    // Only after the latest execution: a redelivered older not_run starts nothing new.
    const executions = attempt.executions.filter((e) => e.value.grant_id === grant.grant_id);
    if (last(executions)?.event_id !== trigger.event_id) return [];
    const runNo = this.#notRun(attempt, grant.grant_id).length + 1;
    if (runNo > MAX_RUNS_PER_GRANT) return [];
    const ids = { task_id: this.view.taskId, step_id: state.step_id, attempt_id: state.attempt_id };
    return [
      {
        command: 'executorRun',
        msgId: `${state.attempt_id}:cmd:executor.run:${grant.grant_id}:${runNo}`,
        payload: parseContract('RunAction', RunAction, { ...ids, grant_id: grant.grant_id, grant_jws: grant.jws, action_request: requestOf(state), run_no: runNo }),
      },
    ];
  }

  /**
   * A task that ended (its terminal event is the one handled) no longer needs
   * its cell: the executor closes it; and no approval of it may still be
   * resolved: each pending one is cancelled (`task_ended`).
   */
  #taskEnded(eventType: string): PlannedCommand[] {
    const reason = CloseCellReason.safeParse(eventType);
    if (!reason.success || `task.${this.view.task.status}` !== reason.data) return [];
    const taskId = this.view.taskId;
    const closeCell: PlannedCommand = {
      command: 'executorCloseCell',
      msgId: closeCellMsgId(taskId),
      payload: parseContract('CloseCell', CloseCell, { task_id: taskId, reason: reason.data }),
    };
    const cancels = [...this.view.approvals.values()]
      .map((approval) => approval.state)
      .filter((approval): approval is ApprovalRecord => approval.status === 'pending')
      .map((approval) => this.#cancelApproval(approval, 'task_ended', `task ${taskId} ended (${reason.data}) while approval ${approval.approval_id} was pending`));
    return [closeCell, ...cancels];
  }

  /**
   * Commands an approval event calls for:
   * - a resolution (`granted`, `denied`, `expired`, `cancelled`, `invalidated`)
   *   is receipted on its own (`receipt.issue` cause `approval_resolved`),
   *   beside the receipt that later ends the attempt;
   * - an approval requested after its attempt was superseded by a newly bound
   *   request, or after its task ended (the request command was already on
   *   its way), is cancelled at once.
   */
  #approvalCommands(trigger: LoggedEvent): PlannedCommand[] {
    const approvalId = trigger.entity_type === 'approval' ? trigger.entity_id : typeof trigger.payload['approval_id'] === 'string' ? trigger.payload['approval_id'] : undefined;
    const approval = approvalId === undefined ? undefined : this.view.approvals.get(approvalId)?.state;
    if (approval === undefined || approval.status === 'initial') return [];
    if (trigger.event_type === 'approval.requested') {
      if (approval.status !== 'pending') return [];
      if (isTaskTerminal(this.view.task)) {
        return [this.#cancelApproval(approval, 'task_ended', `task ${this.view.taskId} ended before approval ${approval.approval_id} was requested`)];
      }
      const attempt = this.view.attempts.get(approval.attempt_id)?.state;
      if (attempt !== undefined && attempt.status === 'superseded' && attempt.last_drift === 'input_drift') {
        return [this.#cancelApproval(approval, 'input_drift', `attempt ${attempt.attempt_id} was superseded by a newly bound request before approval ${approval.approval_id} was requested`)];
      }
      return [];
    }
    if (!RESOLVED_APPROVAL_EVENTS.includes(trigger.event_type) || approval.status === 'pending' || this.view.receiptedApprovals.has(approval.approval_id)) return [];
    return [
      {
        command: 'receiptIssue',
        msgId: `${approval.attempt_id}:cmd:receipt.issue:approval_resolved:${approval.approval_id}`,
        payload: parseContract('IssueReceipt', IssueReceipt, {
          task_id: this.view.taskId,
          step_id: approval.step_id,
          attempt_id: approval.attempt_id,
          cause: 'approval_resolved',
          approval_id: approval.approval_id,
        }),
      },
    ];
  }

  /** `approval.cancel` for a pending approval; one per approval (its msg id), whichever cause comes first. */
  #cancelApproval(approval: ApprovalRecord, cause: CancelApproval['cause'], reason: string): PlannedCommand {
    return {
      command: 'approvalCancel',
      msgId: `${approval.attempt_id}:cmd:approval.cancel:${approval.approval_id}`,
      payload: parseContract('CancelApproval', CancelApproval, {
        task_id: this.view.taskId,
        step_id: approval.step_id,
        attempt_id: approval.attempt_id,
        approval_id: approval.approval_id,
        cause,
        reason: clip(reason),
        cancelled_by: this.context.actorId,
      }),
    };
  }

  get #sacredExceptions(): readonly string[] {
    return this.#task.sacred_exceptions;
  }

  #receipt(ids: { task_id: string; step_id: string; attempt_id: string }, cause: IssueReceipt['cause'], msgId: string): PlannedCommand {
    return { command: 'receiptIssue', msgId, payload: parseContract('IssueReceipt', IssueReceipt, { ...ids, cause }) };
  }
}

/** States in which an attempt's effect has (or may have) started: past them, it is never superseded or cancelled. */
const EXECUTED_STATES: readonly AttemptStatus[] = ['executing', 'observing', 'receipt_pending', 'succeeded'];

/** The events that resolve an approval, each receipted (`approval_resolved`). */
const RESOLVED_APPROVAL_EVENTS: readonly string[] = ['approval.granted', 'approval.denied', 'approval.expired', 'approval.cancelled', 'approval.invalidated'];

/**
 * The lower-risk request of a downgrade (Hermit 11.4): `policy.evaluated`
 * carries it and its PolicyResult names it (`downgrade.rewritten_action_request_ref`,
 * `action_request:<id>` or `sha256:<hex>` of its RFC 8785 form). Policy
 * profiles are versioned data the orchestrator does not hold, so the rewrite
 * is taken from the log, never recomputed; a missing or mismatched one
 * yields none.
 */
export function rewrittenRequestOf(evaluated: PolicyEvaluated): ActionRequest | undefined {
  const rewritten = evaluated.rewritten_action_request;
  const ref = evaluated.policy_result.downgrade?.rewritten_action_request_ref;
  if (rewritten === undefined || ref === undefined) return undefined;
  if (ref === `action_request:${rewritten.action_request_id}` || ref === `sha256:${sha256Hex(canonicalJson(rewritten))}`) return rewritten;
  return undefined;
}

/** The latest receipt of the attempt appended after `seq`. */
function receiptAfter(attempt: AttemptView, seq: number): ReceiptFact | undefined {
  return last(attempt.receipts.filter((receipt: Fact<ReceiptFact>) => receipt.seq > seq))?.value;
}

function requestOf(state: AttemptRecord): ActionRequest {
  if (state.action_request === null) {
    throw new OrchestratorError('ORCHESTRATOR_TRANSITION_REFUSED', `attempt ${state.attempt_id} has no action request`, { details: { attempt_id: state.attempt_id } });
  }
  return state.action_request;
}

function policyOf(state: AttemptRecord): PolicyDecision {
  if (state.policy === null) {
    throw new OrchestratorError('ORCHESTRATOR_TRANSITION_REFUSED', `attempt ${state.attempt_id} has no policy result`, { details: { attempt_id: state.attempt_id } });
  }
  return state.policy;
}
