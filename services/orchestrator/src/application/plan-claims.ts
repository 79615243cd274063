import {
  ATTEMPT_TERMINAL_STATES,
  LIMITS,
  parseActionRequest,
  safeParseContract,
  ReceiptRollback,
  type ActionRequest,
  type AuditRollbackRef,
  type Brief,
  type FileOwnershipAudited,
  type Decision,
  type DecisionClass,
  type EvidenceRef,
  type RiskBand,
  type VerifyObservation,
} from '@writ/contracts';
import {
  DEFAULT_SACRED_PATHS,
  auditFileOwnership,
  isTaskTerminal,
  judgeBlockedClaim,
  judgeDoneClaim,
  planAuditRollback,
  type AttemptCommand,
  type DoneJudgment,
  type ExecutedChange,
  type FallbackStanding,
  type ReceiptedExecution,
  type StepCommand,
  type TaskCommand,
  type TaskRecord,
  type VerificationFact,
} from '@writ/kernel';
import { auditRollbackIdsFor, decisionIdFor, questionIdFor, verifyIdsFor } from './ids.js';
import type { AttemptView, BlockedClaimView, DoneClaimView, TaskView } from './task-view.js';

/** A fact the claims phase appends (not a kernel aggregate event): claim.*, question.*, audit.*, decision.recorded. */
export interface FactDraft {
  readonly type: string;
  readonly entityType: 'task' | 'decision' | 'approval';
  readonly entityId: string;
  readonly payload: Record<string, unknown>;
  /** Idempotency key (unique per task); the event id derives from it. */
  readonly key: string;
  readonly stepId?: string;
  readonly attemptId?: string;
}

/** The kernel transitions the claims phase performs: the verify step and attempt, and closing the task. */
export type ClaimTransition =
  | { readonly aggregate: 'attempt'; readonly id: string; readonly command: AttemptCommand; readonly key: string }
  | { readonly aggregate: 'step'; readonly id: string; readonly attemptId: string; readonly command: StepCommand; readonly key: string }
  | { readonly aggregate: 'task'; readonly command: TaskCommand; readonly key: string };

/** What the planner lends the claims phase: the folded task, the clock reading, and the two ways to append (each folded at once). */
export interface ClaimPlanner {
  readonly view: TaskView;
  readonly now: string;
  readonly actorId: string;
  fact(draft: FactDraft): void;
  perform(transition: ClaimTransition): void;
}

const clip = (text: string, max: number = LIMITS.text) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

function last<T>(items: readonly T[]): T | undefined {
  return items[items.length - 1];
}

/**
 * The claims phase of planning a task (docs/task-claims.md), run after the
 * attempts are reconciled, deciding from the whole task folded:
 *
 * 1. every done claim without a verdict is judged by the kernel
 *    (`judgeDoneClaim`); one that needs Writ's own verify run gets the brief's
 *    verify_command proposed as a governed `execute_command` of the task (a
 *    step and attempt awaiting policy, like any action); once that attempt
 *    has ended, the claim is judged on what the executor observed;
 * 2. every blocked claim without a verdict is judged (`judgeBlockedClaim`): a
 *    legal block asks its question in the approval inbox (`question.asked`);
 * 3. a verdict is an event, and a refusal (or an acceptance) is a decision;
 * 4. a briefed task with an accepted done claim closes once none of its
 *    attempts is in flight: the file-ownership audit first, then
 *    `task.completed`, or `task.failed` (audit failed, or the claim is `failed`);
 *    a failed audit first proposes the rollback of every receipt whose action
 *    made a flagged change and names a rollback method, one at a time (latest
 *    first), and the task fails once they have ended, saying how each ended;
 * 5. an ended task withdraws its open questions.
 *
 * Event ids derive from the claim, so re-planning appends nothing twice.
 */
export function planClaims(planner: ClaimPlanner): void {
  const task = planner.view.task;
  if (task.status === 'initial') return;
  for (const claim of [...planner.view.doneClaims.values()]) judgeDone(planner, task, claim);
  for (const claim of [...planner.view.blockedClaims.values()]) judgeBlocked(planner, task, claim);
  closeOnAcceptedClaim(planner);
  withdrawQuestions(planner);
}

// ---- done claims ------------------------------------------------------------------------------

function judgeDone(planner: ClaimPlanner, task: TaskRecord, claim: DoneClaimView): void {
  if (claim.verdict !== null || task.brief === null) return;
  let verification: VerificationFact = { kind: 'not_run' };
  let observation: VerifyObservation | null = null;
  if (claim.verification !== null) {
    const observed = observe(planner.view, claim);
    // The verify run has not ended: judged when it has.
    if (observed === undefined) return;
    verification = observed.fact;
    observation = observed.observation;
  }
  const judgment = judgeDoneClaim(claim.submitted.claim, { brief: task.brief, taskStatus: task.status, standing: standingBefore(planner.view, claim), verification });
  if (judgment.verdict === 'verify') {
    if (claim.verification === null) proposeVerification(planner, task, task.brief, claim);
    return;
  }
  recordDoneVerdict(planner, task, claim, judgment, observation);
}

/** A done claim earlier in the log that still stands (being judged, or accepted): a later claim is a second done.json. */
function standingBefore(view: TaskView, claim: DoneClaimView): { claim_id: string; state: 'verifying' | 'accepted' } | null {
  for (const other of view.doneClaims.values()) {
    if (other.seq >= claim.seq) continue;
    if (other.verdict === null) return { claim_id: other.claim_id, state: 'verifying' };
    if (other.verdict.kind === 'accepted') return { claim_id: other.claim_id, state: 'accepted' };
  }
  return null;
}

/**
 * What Writ observed of the claim's verify run, once its attempt has ended:
 * an exit code the executor recorded itself, or why there is none (denied,
 * refused, timed out, an unknown outcome — a director's later resolution is
 * not Writ's observation). Undefined while the attempt is still going.
 */
function observe(view: TaskView, claim: DoneClaimView): { fact: VerificationFact; observation: VerifyObservation } | undefined {
  const requested = claim.verification;
  if (requested === null) return undefined;
  const attempt = view.attempts.get(requested.attempt_id);
  const state = attempt?.state;
  if (attempt === undefined || state === undefined || state.status === 'initial' || !ATTEMPT_TERMINAL_STATES.includes(state.status)) return undefined;
  const base = { action_request_id: requested.action_request_id, attempt_id: requested.attempt_id };
  const execution = last(attempt.executions);
  const run = execution?.value;
  if (execution !== undefined && run !== undefined && run.outcome === 'completed' && run.exit_code !== null && !run.timed_out) {
    return {
      fact: { kind: 'observed', exit_code: run.exit_code },
      observation: { ...base, status: 'observed', exit_code: run.exit_code, execution_event_id: execution.event_id },
    };
  }
  const reason =
    run === undefined
      ? `the verify attempt ended ${state.status} before it ran${state.failure === null ? '' : `: ${state.failure.code}: ${state.failure.message}`}`
      : run.outcome === 'unknown'
        ? 'the outcome of the verify run is unknown (a resolution by a director is not an observation by Writ)'
        : run.timed_out
          ? 'the verify run timed out'
          : `the verify run ${run.outcome}${run.error === undefined ? '' : `: ${run.error.code}`}`;
  return {
    fact: { kind: 'unobserved', reason },
    observation: { ...base, status: 'unobserved', exit_code: run?.exit_code ?? null, execution_event_id: execution?.event_id ?? null, reason: clip(reason) },
  };
}

/**
 * The brief's verify_command as a governed action of the task, proposed by
 * the orchestrator's principal: the step (`verify`, one attempt) and its
 * attempt awaiting policy, exactly as ingress opens an agent's action. From
 * `attempt.awaiting_policy` on it travels the governed path like any action.
 */
function proposeVerification(planner: ClaimPlanner, task: TaskRecord, brief: Brief, claim: DoneClaimView): void {
  const taskId = task.task_id;
  const ids = verifyIdsFor(taskId, claim.claim_id);
  const request = parseActionRequest({
    action_request_id: ids.actionRequestId,
    task_id: taskId,
    step: { kind: 'verify', title: clip(`verify done claim ${claim.claim_id}`, LIMITS.title) },
    action_class: 'execute_command',
    target_resources: ['.'],
    params: { argv: [...brief.verify_command] },
    expected_effects: [],
    // A verify command proves the done criteria; whatever it writes is still audited with the task's other changes.
    reversibility_hint: 'reversible',
    reason: clip(`Writ runs the brief's verify_command itself before it accepts done claim ${claim.claim_id} (seed 003: verified completion)`),
    proposed_by: planner.actorId,
    proposed_at: planner.now,
  });
  planner.fact({
    type: 'claim.done_verification_requested',
    entityType: 'task',
    entityId: taskId,
    payload: { claim_id: claim.claim_id, action_request_id: ids.actionRequestId, step_id: ids.stepId, attempt_id: ids.attemptId, argv: [...brief.verify_command], at: planner.now },
    key: `${claim.claim_id}:verification_requested`,
  });
  planSubmittedStep(planner, taskId, ids, { kind: 'verify', title: clip(`verify done claim ${claim.claim_id}`, LIMITS.title), contractRef: `claim:${claim.claim_id}` }, request);
}

/**
 * A step of Writ's own with one attempt that submits `request` (a done claim's verify run,
 * an audit's rollback): planned, ready, opened, the attempt created, leased and submitted,
 * each command keyed so a re-run of the same plan appends nothing twice.
 */
function planSubmittedStep(
  planner: ClaimPlanner,
  taskId: string,
  ids: { readonly actionRequestId: string; readonly stepId: string; readonly attemptId: string },
  spec: { readonly kind: 'verify' | 'rollback'; readonly title: string; readonly contractRef: string },
  request: ActionRequest,
): void {
  const meta = { now: planner.now };
  const step = (command: StepCommand, key: string) => planner.perform({ aggregate: 'step', id: ids.stepId, attemptId: ids.attemptId, command, key: `${ids.stepId}:${key}` });
  const attempt = (command: AttemptCommand, key: string) => planner.perform({ aggregate: 'attempt', id: ids.attemptId, command, key: `${ids.attemptId}:${key}` });
  step({ type: 'plan-step', data: { step_id: ids.stepId, task_id: taskId, kind: spec.kind, title: spec.title, contract_ref: spec.contractRef, max_attempts: 1 }, metadata: meta }, 'plan');
  step({ type: 'mark-step-ready', data: {}, metadata: meta }, 'ready');
  step({ type: 'open-attempt', data: { attempt_id: ids.attemptId }, metadata: meta }, 'open');
  attempt(
    { type: 'create-attempt', data: { attempt_id: ids.attemptId, task_id: taskId, step_id: ids.stepId, attempt_no: 1, idempotency_key: ids.actionRequestId }, metadata: meta },
    'create',
  );
  attempt({ type: 'lease-workspace', data: { workspace_lease_ref: `workspace:${taskId}` }, metadata: meta }, 'lease');
  attempt({ type: 'submit-action', data: { action_request: request }, metadata: meta }, 'submit');
}

function recordDoneVerdict(planner: ClaimPlanner, task: TaskRecord, claim: DoneClaimView, judgment: Exclude<DoneJudgment, { verdict: 'verify' }>, observation: VerifyObservation | null): void {
  const accepted = judgment.verdict === 'accepted';
  const outcomeEvent = accepted ? 'claim.done_accepted' : 'claim.done_refused';
  const decisionId = decisionIdFor(task.task_id, `${claim.claim_id}:${accepted ? 'accepted' : 'refused'}`);
  const reopened = !isTaskTerminal(task);
  const payload =
    judgment.verdict === 'accepted'
      ? { claim_id: claim.claim_id, status: judgment.status, verification: observation, pending_actions: [...claim.submitted.claim.pending_actions], decision_id: decisionId, at: planner.now }
      : { claim_id: claim.claim_id, refusals: judgment.refusals.map((r) => ({ ...r })), verification: observation, reopened, decision_id: decisionId, at: planner.now };
  planner.fact({ type: outcomeEvent, entityType: 'task', entityId: task.task_id, payload, key: `${claim.claim_id}:${outcomeEvent}`, ...verifyPlace(observation) });
  const codes = judgment.verdict === 'refused' ? judgment.refusals.map((r) => r.code) : [];
  recordDecision(planner, task, {
    decisionId,
    subjectRef: `claim:${claim.claim_id}`,
    outcomeEvent,
    type: 'execution',
    risk: 'low',
    reversible: !accepted,
    attemptId: observation?.attempt_id ?? null,
    summary:
      judgment.verdict === 'accepted'
        ? `done claim ${claim.claim_id} (${judgment.status}) by ${claim.submitted.claimed_by} accepted`
        : `done claim ${claim.claim_id} (${claim.submitted.claim.status}) by ${claim.submitted.claimed_by} refused: ${codes.join(', ')}${reopened ? '; the task is reopened' : ''}`,
    rationale:
      judgment.verdict === 'accepted'
        ? observation === null
          ? `status ${judgment.status} needs no verify run; every rule of seed 003 holds`
          : `Writ ran the brief's verify_command in the task's cell and observed exit ${String(observation.exit_code)}; every rule of seed 003 holds`
        : judgment.refusals.map((r) => `${r.code}: ${r.message}`).join('\n'),
    evidence: evidenceOf(planner.view, observation),
  });
}

/** The verify run's attempt and step, to place a verdict event beside it. */
function verifyPlace(observation: VerifyObservation | null): { attemptId?: string } {
  return observation === null ? {} : { attemptId: observation.attempt_id };
}

/** The verify run's captured output (its artifacts), cited as the decision's evidence. */
function evidenceOf(view: TaskView, observation: VerifyObservation | null): EvidenceRef[] {
  if (observation === null || observation.execution_event_id === null) return [];
  const execution = view.attempts.get(observation.attempt_id)?.executions.find((e) => e.event_id === observation.execution_event_id);
  return (execution?.value.artifacts ?? []).slice(0, 8).map((artifact) => ({ artifact_id: artifact.artifact_id, capture_method: 'command_output', trust_tier: 'observed' as const }));
}

// ---- blocked claims ---------------------------------------------------------------------------

function judgeBlocked(planner: ClaimPlanner, task: TaskRecord, claim: BlockedClaimView): void {
  if (claim.verdict !== null) return;
  const view = planner.view;
  const body = claim.submitted.claim;
  const agentAttempts = [...view.attempts.values()].filter((attempt) => !isOrchestrators(attempt, planner.actorId));
  const fallbackId = body.fallback_action_request_id;
  const judgment = judgeBlockedClaim(body, {
    taskStatus: task.status,
    attemptsInFlight: agentAttempts.filter(inFlight).length,
    ...(fallbackId === undefined ? {} : { fallbackRequest: standingOf(view.attemptOfRequest(fallbackId)) }),
  });
  if (judgment.verdict === 'accepted') {
    const questionId = questionIdFor(task.task_id, claim.claim_id);
    planner.fact({
      type: 'question.asked',
      entityType: 'task',
      entityId: task.task_id,
      payload: {
        approval_id: questionId,
        kind: 'question',
        claim_id: claim.claim_id,
        question: body.question,
        best_guess: body.best_guess,
        fallback_action: body.fallback_action,
        human_required_for: body.human_required_for,
        requested_by: claim.submitted.claimed_by,
        at: planner.now,
      },
      key: `${claim.claim_id}:question.asked`,
    });
    planner.fact({ type: 'claim.blocked_accepted', entityType: 'task', entityId: task.task_id, payload: { claim_id: claim.claim_id, question_id: questionId, at: planner.now }, key: `${claim.claim_id}:claim.blocked_accepted` });
    return;
  }
  const decisionId = decisionIdFor(task.task_id, `${claim.claim_id}:refused`);
  planner.fact({
    type: 'claim.blocked_refused',
    entityType: 'task',
    entityId: task.task_id,
    payload: { claim_id: claim.claim_id, refusals: judgment.refusals.map((r) => ({ ...r })), decision_id: decisionId, at: planner.now },
    key: `${claim.claim_id}:claim.blocked_refused`,
  });
  recordDecision(planner, task, {
    decisionId,
    subjectRef: `claim:${claim.claim_id}`,
    outcomeEvent: 'claim.blocked_refused',
    type: 'execution',
    risk: 'low',
    reversible: true,
    attemptId: null,
    summary: `blocked claim ${claim.claim_id} by ${claim.submitted.claimed_by} refused: ${judgment.refusals.map((r) => r.code).join(', ')}; decide and proceed`,
    rationale: judgment.refusals.map((r) => `${r.code}: ${r.message}`).join('\n'),
    evidence: [],
  });
}

/** How the fallback request stands: in flight, succeeded, ended otherwise, or not a request of this task. */
function standingOf(attempt: AttemptView | undefined): FallbackStanding {
  const state = attempt?.state;
  if (state === undefined || state.status === 'initial') return 'unknown';
  if (state.status === 'succeeded') return 'succeeded';
  return ATTEMPT_TERMINAL_STATES.includes(state.status) ? 'ended' : 'in_flight';
}

function inFlight(attempt: AttemptView): boolean {
  return attempt.state.status !== 'initial' && !ATTEMPT_TERMINAL_STATES.includes(attempt.state.status);
}

/** The orchestrator's own attempts (verify runs) are not the receiver's work. */
function isOrchestrators(attempt: AttemptView, actorId: string): boolean {
  return attempt.state.status !== 'initial' && attempt.state.submitted_request?.proposed_by === actorId;
}

// ---- closing ----------------------------------------------------------------------------------

/**
 * A briefed task closes on its accepted done claim once nothing of it is in
 * flight any more: the file-ownership audit, then the task's end.
 */
function closeOnAcceptedClaim(planner: ClaimPlanner): void {
  const view = planner.view;
  const task = view.task;
  if (task.status !== 'running' || task.brief === null) return;
  const accepted = [...view.doneClaims.values()].find((claim) => claim.verdict?.kind === 'accepted');
  if (accepted === undefined || accepted.verdict?.kind !== 'accepted') return;
  if ([...view.attempts.values()].some(inFlight)) return;
  if (view.ownershipAudit === null) audit(planner, task, accepted.claim_id);
  const audited = view.ownershipAudit;
  if (audited === null) return;
  const status = accepted.verdict.value.status;
  const meta = { now: planner.now };
  if (audited.event_type === 'audit.file_ownership_failed') {
    // The task's cell closes when the task ends: its rollbacks run first, and the failure says how they ended.
    if (proposeNextRollback(planner, task, audited.value)) return;
    const flagged = [...audited.value.modified_not_owned, ...audited.value.sacred_modified].map((change) => change.path);
    const unaudited = audited.value.unaudited_executions.length;
    const rollback = rollbackOutcome(planner.view, audited.value);
    const reason = clip(
      `the file-ownership audit failed: ${flagged.length === 0 ? '' : `changed outside files_owned or inside a Sacred Scope: ${[...new Set(flagged)].join(', ')}`}${unaudited === 0 ? '' : `${flagged.length === 0 ? '' : '; '}${unaudited} execution(s) without a workspace diff`}${rollback === '' ? '' : `; ${rollback}`}`,
    );
    planner.perform({ aggregate: 'task', command: { type: 'fail-task', data: { reason }, metadata: meta }, key: 'claims:fail' });
    return;
  }
  if (status === 'failed') {
    const stderr = accepted.submitted.claim.evidence.verify_stderr.trim().split('\n')[0] ?? '';
    planner.perform({ aggregate: 'task', command: { type: 'fail-task', data: { reason: clip(`done claim ${accepted.claim_id}: failed: ${stderr}`) }, metadata: meta }, key: 'claims:fail' });
    return;
  }
  const pending = accepted.verdict.value.pending_actions;
  const summary = clip(status === 'pending' ? `done claim ${accepted.claim_id}: pending; next: ${pending.join('; ')}` : `done claim ${accepted.claim_id}: done_clean, verified by Writ`);
  planner.perform({ aggregate: 'task', command: { type: 'complete-task', data: { summary }, metadata: meta }, key: 'claims:complete' });
}

/** Executions whose workspace diff says nothing: an unknown outcome, or a diff the executor could not take. */
function unaudited(run: { readonly outcome: string; readonly error?: { readonly code: string } | undefined }): boolean {
  return run.outcome === 'unknown' || run.error?.code === 'EXECUTOR_DIFF_UNAVAILABLE';
}

/**
 * The seed 003 file-ownership audit over every `execution.completed` of the
 * task (the verify runs included: what they write is a change too). Every
 * flagged change (inside a Sacred Scope, or outside files_owned: both fail
 * the task, and undoing either puts the workspace back inside the brief's
 * contract) is traced to the receipt of its action: the receipts that name a
 * rollback method are rolled back through the governed path
 * (`proposeNextRollback`), the paths none can undo are listed with why; the
 * `restore` list keeps what a manual restore of the Sacred Scope needs.
 */
function audit(planner: ClaimPlanner, task: TaskRecord, claimId: string): void {
  const changes: ExecutedChange[] = [];
  const blind: string[] = [];
  let executions = 0;
  for (const attempt of planner.view.attempts.values()) {
    for (const execution of attempt.executions) {
      executions += 1;
      if (unaudited(execution.value)) blind.push(execution.event_id);
      else for (const file of execution.value.changed_files) changes.push({ ...file, execution_event_id: execution.event_id });
    }
  }
  const result = auditFileOwnership(changes, task.files_owned, { scopes: DEFAULT_SACRED_PATHS, exceptions: task.sacred_exceptions }, blind);
  const failed = result.verdict === 'failed';
  const decisionId = failed ? decisionIdFor(task.task_id, 'ownership-audit') : null;
  const type = failed ? 'audit.file_ownership_failed' : 'audit.file_ownership_passed';
  const bounded = <T>(items: readonly T[]) => items.slice(0, LIMITS.listItems);
  const flagged = [...result.sacred_modified, ...result.modified_not_owned];
  const plan = planAuditRollback(flagged, receiptsByExecution(planner.view));
  const rollbacks: AuditRollbackRef[] = plan.rollbacks.map((r) => ({ receipt_id: r.receipt_id, action_request_id: auditRollbackIdsFor(task.task_id, r.receipt_id).actionRequestId, paths: bounded(r.paths) }));
  const unrollable = bounded(plan.unrollable).map((u) => ({ ...u }));
  planner.fact({
    type,
    entityType: 'task',
    entityId: task.task_id,
    payload: {
      claim_id: claimId,
      files_owned: [...task.files_owned],
      executions,
      changed_files: result.changed_files,
      modified_not_owned: bounded(result.modified_not_owned),
      sacred_modified: bounded(result.sacred_modified),
      unaudited_executions: bounded(result.unaudited_executions),
      rollback:
        flagged.length === 0
          ? { status: 'not_needed', restore: [] }
          : rollbacks.length === 0
            ? {
                status: 'unavailable',
                reason: clip(
                  `no receipt of the actions that made these changes names a rollback method (see unrollable). Restore each path to before_sha256 (remove it where that is null) by hand, outside the agent.`,
                ),
                restore: bounded(result.restore),
                rollbacks: [],
                unrollable,
              }
            : {
                status: 'proposed',
                reason: clip(
                  `Writ rolls back ${rollbacks.length} receipt(s) as governed rollback actions of the task (a director approves each), latest first; the task fails once they have ended${unrollable.length === 0 ? '' : `; ${unrollable.length} path(s) no receipt can undo need a manual restore`}`,
                ),
                restore: bounded(result.restore),
                rollbacks,
                unrollable,
              },
      decision_id: decisionId,
      at: planner.now,
    },
    key: type,
  });
  if (decisionId === null) return;
  const notOwned = [...new Set(result.modified_not_owned.map((c) => c.path))];
  const sacred = [...new Set(result.sacred_modified.map((c) => c.path))];
  recordDecision(planner, task, {
    decisionId,
    subjectRef: `task:${task.task_id}`,
    outcomeEvent: type,
    type: 'safety',
    risk: sacred.length > 0 ? 'high' : 'moderate',
    reversible: false,
    attemptId: null,
    summary: clip(
      `file-ownership audit of task ${task.task_id} failed; the task fails${rollbacks.length > 0 ? ` once the rollback of ${rollbacks.length} receipt(s) has ended` : ''}${unrollable.length > 0 ? `; ${unrollable.length} path(s) need a manual restore` : ''}`,
    ),
    rationale: clip(
      [
        notOwned.length > 0 ? `modified but not owned: ${notOwned.join(', ')}` : '',
        sacred.length > 0 ? `Sacred Scope modified: ${sacred.join(', ')}` : '',
        result.unaudited_executions.length > 0 ? `executions without a workspace diff: ${result.unaudited_executions.join(', ')}` : '',
        rollbacks.length > 0 ? `rolled back through the governed path: ${rollbacks.map((r) => `receipt ${r.receipt_id} (${r.paths.join(', ')})`).join('; ')}` : '',
        ...unrollable.map((u) => `not rollable: ${u.path}: ${u.reason}`),
      ]
        .filter((line) => line !== '')
        .join('\n'),
      LIMITS.longText,
    ),
    evidence: [],
  });
}

/**
 * What the log says of the receipt closing each execution: the last receipt
 * of the execution's attempt (an approval's receipt never closes one), its
 * hash and rollback metadata as the receipt service signed them.
 */
function receiptsByExecution(view: TaskView): (executionEventId: string) => ReceiptedExecution | undefined {
  const byExecution = new Map<string, ReceiptedExecution>();
  for (const attempt of view.attempts.values()) {
    const receipt = last(attempt.receipts);
    if (receipt === undefined) continue;
    const rollback = receipt.value.rollback === undefined ? null : safeParseContract('ReceiptRollback', ReceiptRollback, receipt.value.rollback);
    const hash = receipt.value.receipt_hash;
    const receipted: ReceiptedExecution = {
      receipt_id: receipt.value.receipt_id,
      receipt_hash: typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash) ? hash : null,
      rollback: rollback === null || !rollback.ok ? null : rollback.value,
      seq: receipt.seq,
    };
    for (const execution of attempt.executions) byExecution.set(execution.event_id, receipted);
  }
  return (executionEventId) => byExecution.get(executionEventId);
}

/**
 * The next rollback a failed audit asks for, proposed as a governed action of
 * the task by the orchestrator's principal (a step `rollback` and its attempt
 * awaiting policy, like the verify run of a done claim): policy sends it to a
 * director, and the executor applies it all-or-nothing. One at a time, latest
 * receipt first: each expects its paths as its own action left them, so it
 * can only hold once the later ones are undone; once one ends without
 * succeeding, none after it is proposed. True while a rollback is proposed or
 * under way (the task waits for it).
 */
function proposeNextRollback(planner: ClaimPlanner, task: TaskRecord, audited: FileOwnershipAudited): boolean {
  const view = planner.view;
  for (const ref of audited.rollback.rollbacks ?? []) {
    const proposed = view.auditRollbacks.get(ref.receipt_id);
    if (proposed === undefined) return proposeRollback(planner, task, ref);
    const attempt = view.attempts.get(proposed.attempt_id);
    if (attempt === undefined || inFlight(attempt)) return true;
    if (attempt.state.status !== 'succeeded') return false;
  }
  return false;
}

function proposeRollback(planner: ClaimPlanner, task: TaskRecord, ref: AuditRollbackRef): boolean {
  const view = planner.view;
  const taskId = task.task_id;
  const receipt = [...view.attempts.values()].flatMap((attempt) => attempt.receipts).find((r) => r.value.receipt_id === ref.receipt_id);
  const parsed = receipt?.value.rollback === undefined ? undefined : safeParseContract('ReceiptRollback', ReceiptRollback, receipt.value.rollback);
  const hash = receipt?.value.receipt_hash;
  // The audit named it from this very log: a receipt that no longer reads is left to rollbackOutcome to report.
  if (parsed === undefined || !parsed.ok || parsed.value.method !== 'compensating_local_actions' || typeof hash !== 'string') return false;
  const steps = parsed.value.steps;
  const ids = auditRollbackIdsFor(taskId, ref.receipt_id);
  const decisionId = decisionIdFor(taskId, `audit-rollback:${ref.receipt_id}`);
  const title = clip(`roll back receipt ${ref.receipt_id} (file-ownership audit)`, LIMITS.title);
  const targets = [...new Set(steps.map((step) => step.path))].slice(0, LIMITS.targetResources);
  const request = parseActionRequest({
    action_request_id: ids.actionRequestId,
    task_id: taskId,
    step: { kind: 'rollback', title },
    action_class: 'rollback',
    target_resources: targets,
    params: { receipt_id: ref.receipt_id, receipt_hash: hash, steps: steps.map((step) => ({ ...step })) },
    expected_effects: steps
      .slice(0, LIMITS.shortListItems)
      .map((step) => clip(step.action_class === 'delete_local' ? `${step.path} is removed (the action added it)` : `${step.path} is written back to ${step.restore_sha256 ?? 'its pre-image'}`)),
    reversibility_hint: 'reversible',
    reason: clip(`the file-ownership audit failed: receipt ${ref.receipt_id} changed ${ref.paths.join(', ')} (inside a Sacred Scope or outside files_owned); Writ rolls its action back (seed 003: a Sacred Scope modification is rolled back)`),
    proposed_by: planner.actorId,
    proposed_at: planner.now,
  });
  planner.fact({
    type: 'audit.rollback_proposed',
    entityType: 'task',
    entityId: taskId,
    payload: { receipt_id: ref.receipt_id, receipt_hash: hash, action_request_id: ids.actionRequestId, step_id: ids.stepId, attempt_id: ids.attemptId, paths: [...ref.paths], decision_id: decisionId, at: planner.now },
    key: `${ref.receipt_id}:audit.rollback_proposed`,
  });
  recordDecision(planner, task, {
    decisionId,
    subjectRef: `receipt:${ref.receipt_id}`,
    outcomeEvent: 'audit.rollback_proposed',
    type: 'safety',
    risk: 'high',
    reversible: true,
    attemptId: ids.attemptId,
    summary: clip(`roll back receipt ${ref.receipt_id} of task ${taskId}: the file-ownership audit flagged ${ref.paths.join(', ')}`),
    rationale: clip(
      `seed 003: a Sacred Scope modification fails the task and is rolled back (a change outside files_owned too). The receipt names ${steps.length} compensating step(s); they run as the governed rollback ${ids.actionRequestId} (policy, a director's approval, a grant, the executor, its own receipt), all or none, only where every path still holds what the action left.`,
      LIMITS.longText,
    ),
    evidence: [],
  });
  planSubmittedStep(planner, taskId, ids, { kind: 'rollback', title, contractRef: `receipt:${ref.receipt_id}` }, request);
  return true;
}

/** How the audit's rollbacks ended, for the task's failure: each receipt rolled back or not (and why), and the paths none could undo. */
function rollbackOutcome(view: TaskView, audited: FileOwnershipAudited): string {
  const parts: string[] = [];
  let stopped = false;
  for (const ref of audited.rollback.rollbacks ?? []) {
    const proposed = view.auditRollbacks.get(ref.receipt_id);
    const state = proposed === undefined ? undefined : view.attempts.get(proposed.attempt_id)?.state;
    if (proposed === undefined || state === undefined || state.status === 'initial') {
      parts.push(`receipt ${ref.receipt_id} not rolled back (${stopped ? 'an earlier rollback did not succeed' : 'its rollback could not be proposed'}): ${ref.paths.join(', ')}`);
      stopped = true;
      continue;
    }
    if (state.status === 'succeeded') {
      parts.push(`rolled back receipt ${ref.receipt_id} (${proposed.action_request_id}): ${ref.paths.join(', ')}`);
      continue;
    }
    stopped = true;
    parts.push(`rollback ${proposed.action_request_id} of receipt ${ref.receipt_id} ended ${state.status}${state.failure === null ? '' : ` (${state.failure.code})`}: ${ref.paths.join(', ')} not restored`);
  }
  for (const path of audited.rollback.unrollable ?? []) parts.push(`not rollable: ${path.path}: ${path.reason}`);
  return parts.join('; ');
}

/** An ended task withdraws its open questions from the inbox. */
function withdrawQuestions(planner: ClaimPlanner): void {
  const view = planner.view;
  if (view.task.status === 'initial' || !isTaskTerminal(view.task)) return;
  for (const [questionId, question] of view.questions) {
    if (question.withdrawn) continue;
    planner.fact({
      type: 'question.withdrawn',
      entityType: 'task',
      entityId: view.taskId,
      payload: { approval_id: questionId, reason: `task ${view.taskId} ended (${view.task.status}) before the question was answered`, at: planner.now },
      key: `${questionId}:question.withdrawn`,
    });
  }
}

// ---- decisions --------------------------------------------------------------------------------

interface DecisionSpec {
  readonly decisionId: string;
  readonly subjectRef: string;
  readonly outcomeEvent: string;
  readonly type: DecisionClass;
  readonly risk: RiskBand;
  readonly reversible: boolean;
  readonly attemptId: string | null;
  readonly summary: string;
  readonly rationale: string;
  readonly evidence: readonly EvidenceRef[];
}

/** `decision.recorded` (entity decision): every claim verdict and a failed audit are decisions of the orchestrator. */
function recordDecision(planner: ClaimPlanner, task: TaskRecord, spec: DecisionSpec): void {
  const decision: Decision = {
    decision_id: spec.decisionId,
    task_id: task.task_id,
    step_id: null,
    attempt_id: spec.attemptId,
    decision_type: spec.type,
    summary: clip(spec.summary),
    rationale: clip(spec.rationale === '' ? spec.summary : spec.rationale, LIMITS.longText),
    evidence_refs: [...spec.evidence],
    risk_level: spec.risk,
    decided_by: planner.actorId,
    reversible: spec.reversible,
    created_at: planner.now,
  };
  planner.fact({
    type: 'decision.recorded',
    entityType: 'decision',
    entityId: spec.decisionId,
    payload: { decision, subject_ref: spec.subjectRef, outcome_event: spec.outcomeEvent },
    key: `${spec.decisionId}:decision.recorded`,
  });
}
