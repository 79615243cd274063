import type { ActionRequest, Brief, ChangedFile, EventDraft, ReceiptRollback } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { blockedClaimOf, blockedSubmittedDraft, briefOf, briefedRequest, doneClaimOf, doneSubmittedDraft, verifyRunIds } from '../../test/claim-fixtures.js';
import { PlanLog, typesOf } from '../../test/plan-log.js';
import {
  approvalRequestedDraft,
  approvalResolvedDraft,
  executionCompletedDraft,
  grantIssuedDraft,
  ingressDrafts,
  instant,
  policyEvaluatedDraft,
  receiptIssuedDraft,
  taskIds,
  useClaimedDraft,
  type TaskIds,
} from '../../test/task-fixtures.js';
import { approvalIdFor, auditRollbackIdsFor, verifyIdsFor } from './ids.js';

const HASH = 'b'.repeat(64);
const RECEIPT_HASH = 'c'.repeat(64);
const written = (path: string, change: ChangedFile['change'] = 'added'): ChangedFile => ({ path, change, before_sha256: change === 'added' ? null : 'a'.repeat(64), after_sha256: change === 'deleted' ? null : HASH });

/** Drives one attempt of the task through policy (profile), grant, use, execution and receipt, as the other services would append them. */
function runAttempt(
  log: PlanLog,
  ids: TaskIds,
  request: Pick<ActionRequest, 'action_class' | 'target_resources'> & ActionRequest,
  options: { exitCode?: number; changed?: ChangedFile[]; profile?: string; rollback?: ReceiptRollback } = {},
): void {
  log.add(policyEvaluatedDraft(ids, request, options.profile ?? 'local_edit_allowed'));
  log.step((e) => e.event_type === 'policy.evaluated' && e.attempt_id === ids.attempt_id);
  const denied = log.view().attempts.get(ids.attempt_id)?.state.status === 'failed';
  if (denied) {
    log.add(receiptIssuedDraft(ids, 'refused', { cause: 'policy_denied', at: instant(8) }));
    log.step((e) => e.event_type === 'receipt.issued' && e.attempt_id === ids.attempt_id);
    return;
  }
  // The grant's clock is the planner's (NOW = T0 + 10 s), so it has not expired when it is attached.
  const grant = grantIssuedDraft(ids, request, { at: instant(5) });
  log.add(grant);
  log.step((e) => e.event_type === 'grant.issued' && e.attempt_id === ids.attempt_id);
  log.add(useClaimedDraft(ids, grant, request, { at: instant(6) }));
  log.step((e) => e.event_type === 'grant.use_claimed' && e.attempt_id === ids.attempt_id);
  log.add(executionCompletedDraft(ids, { at: instant(7), exitCode: options.exitCode ?? 0, changedFiles: options.changed ?? [] }));
  log.step((e) => e.event_type === 'execution.completed' && e.attempt_id === ids.attempt_id);
  const rollback = options.rollback === undefined ? {} : { rollback: options.rollback, receiptHash: RECEIPT_HASH };
  log.add(receiptIssuedDraft(ids, (options.exitCode ?? 0) === 0 ? 'succeeded' : 'failed', { at: instant(8), ...rollback }));
  log.step((e) => e.event_type === 'receipt.issued' && e.attempt_id === ids.attempt_id);
}

/** A briefed task whose agent action already ran (changing `changed`), nothing in flight. */
function workedTask(name: string, options: { brief?: Brief; changed?: ChangedFile[]; rollback?: ReceiptRollback } = {}): { log: PlanLog; request: ActionRequest } {
  const ids = taskIds(name);
  const request = briefedRequest(ids, options.brief ?? briefOf());
  const log = new PlanLog(ids).add(...ingressDrafts(ids, request));
  runAttempt(log, ids, request, { changed: options.changed ?? [written('src/greeting.txt')], ...(options.rollback === undefined ? {} : { rollback: options.rollback }) });
  return { log, request };
}

/** The verify request the orchestrator proposed for `claimId`. */
function verifyRequestOf(log: PlanLog, claimId: string): ActionRequest {
  const attempt = log.view().attempts.get(verifyIdsFor(log.ids.task_id, claimId).attemptId)?.state;
  if (attempt === undefined || attempt.status === 'initial' || attempt.action_request === null) throw new Error(`no verify attempt for ${claimId}`);
  return attempt.action_request;
}

const taskStatus = (log: PlanLog) => log.view().task.status;

describe('planClaims: a task created from a brief closes only on a done claim', () => {
  it('given a briefed task whose only action succeeded, when its step ends, then the task stays running (absence of done.json is not success)', () => {
    const { log } = workedTask('c1');
    expect(log.types()).not.toContain('task.completed');
    expect(taskStatus(log)).toBe('running');
  });

  it('given a done_clean claim, when handled, then the brief verify_command is proposed as a governed execute_command of the task by the orchestrator', () => {
    // given
    const { log } = workedTask('c2');
    log.add(doneSubmittedDraft(log.ids, 'dcl-2'));
    // when
    const plan = log.step('claim.done_submitted');
    // then
    expect(typesOf(plan)).toEqual([
      'claim.done_verification_requested',
      'step.planned',
      'step.marked_ready',
      'step.attempt_opened',
      'attempt.created',
      'attempt.leased',
      'attempt.awaiting_policy',
    ]);
    const request = verifyRequestOf(log, 'dcl-2');
    expect(request).toMatchObject({ task_id: log.ids.task_id, action_class: 'execute_command', params: { argv: ['sh', 'verify.sh'] }, proposed_by: 'writ-orchestrator' });
    // the proposed attempt asks policy like any other
    expect(log.handle((e) => e.event_type === 'attempt.awaiting_policy' && e.attempt_id === verifyIdsFor(log.ids.task_id, 'dcl-2').attemptId).commands).toMatchObject([
      { command: 'policyEvaluate', payload: { action_request: { action_request_id: request.action_request_id }, files_owned: ['src/**'] } },
    ]);
    // handled again: nothing new
    expect(log.handle('claim.done_submitted').events).toEqual([]);
  });

  it('given the verify run exits 0 as Writ observed it, when its receipt lands, then the claim is accepted, the audit passes and the task completes', () => {
    // given
    const { log } = workedTask('c3');
    log.add(doneSubmittedDraft(log.ids, 'dcl-3'));
    log.step('claim.done_submitted');
    // when
    runAttempt(log, verifyRunIds(log.ids, 'dcl-3'), verifyRequestOf(log, 'dcl-3'), { exitCode: 0 });
    // then
    const tail = log.types().slice(-6);
    expect(tail).toEqual(['attempt.succeeded', 'step.succeeded', 'claim.done_accepted', 'decision.recorded', 'audit.file_ownership_passed', 'task.completed']);
    const accepted = log.drafts.find((d) => d.event_type === 'claim.done_accepted')?.payload;
    expect(accepted).toMatchObject({ claim_id: 'dcl-3', status: 'done_clean', verification: { status: 'observed', exit_code: 0 } });
    expect(log.drafts.find((d) => d.event_type === 'audit.file_ownership_passed')?.payload).toMatchObject({ executions: 2, changed_files: 1, modified_not_owned: [] });
    expect(taskStatus(log)).toBe('completed');
  });

  it('given the verify run exits 1, when judged, then the claim is refused DONE_VERIFY_FAILED, recorded as a decision, and the task is reopened for a new claim', () => {
    // given
    const { log } = workedTask('c4');
    log.add(doneSubmittedDraft(log.ids, 'dcl-4'));
    log.step('claim.done_submitted');
    // when
    runAttempt(log, verifyRunIds(log.ids, 'dcl-4'), verifyRequestOf(log, 'dcl-4'), { exitCode: 1 });
    // then
    const refused = log.drafts.find((d) => d.event_type === 'claim.done_refused');
    expect(refused?.payload).toMatchObject({ claim_id: 'dcl-4', reopened: true, refusals: [{ code: 'DONE_VERIFY_FAILED' }], verification: { status: 'observed', exit_code: 1 } });
    const decision = log.drafts.find((d) => d.event_type === 'decision.recorded');
    expect(decision).toMatchObject({ entity_type: 'decision', payload: { subject_ref: 'claim:dcl-4', outcome_event: 'claim.done_refused', decision: { decision_type: 'execution' } } });
    expect(taskStatus(log)).toBe('running');
    // a new claim after the refusal is judged on its own (verify proposed again)
    log.add(doneSubmittedDraft(log.ids, 'dcl-4b'));
    expect(typesOf(log.step('claim.done_submitted'))[0]).toBe('claim.done_verification_requested');
  });

  it('given a done_clean claim with regressions, when handled, then it is refused at once and no verify run is proposed', () => {
    const { log } = workedTask('c5');
    log.add(doneSubmittedDraft(log.ids, 'dcl-5', doneClaimOf({ regressions: ['the greeting is empty'] })));
    const plan = log.step('claim.done_submitted');
    expect(typesOf(plan)).toEqual(['claim.done_refused', 'decision.recorded']);
    expect(plan.events[0]?.payload).toMatchObject({ refusals: [{ code: 'DONE_REGRESSIONS' }], verification: null });
  });

  it('given a second done.json while the first is being verified, when handled, then it is refused DONE_ALREADY_CLAIMED', () => {
    const { log } = workedTask('c6');
    log.add(doneSubmittedDraft(log.ids, 'dcl-6a'));
    log.step('claim.done_submitted');
    log.add(doneSubmittedDraft(log.ids, 'dcl-6b'));
    const plan = log.step((e) => e.event_type === 'claim.done_submitted' && e.payload['claim_id'] === 'dcl-6b');
    expect(typesOf(plan)).toEqual(['claim.done_refused', 'decision.recorded']);
    expect(plan.events[0]?.payload).toMatchObject({ claim_id: 'dcl-6b', refusals: [{ code: 'DONE_ALREADY_CLAIMED' }] });
  });

  it('given policy denies the verify run, when its receipt lands, then the claim is refused DONE_VERIFY_NOT_OBSERVED', () => {
    const { log } = workedTask('c7');
    log.add(doneSubmittedDraft(log.ids, 'dcl-7'));
    log.step('claim.done_submitted');
    runAttempt(log, verifyRunIds(log.ids, 'dcl-7'), verifyRequestOf(log, 'dcl-7'), { profile: 'readonly_analysis' });
    expect(log.drafts.find((d) => d.event_type === 'claim.done_refused')?.payload).toMatchObject({ refusals: [{ code: 'DONE_VERIFY_NOT_OBSERVED' }], verification: { status: 'unobserved', exit_code: null } });
    expect(taskStatus(log)).toBe('running');
  });

  it('given a failed claim with its stderr, when handled, then it is accepted without a verify run and the task fails', () => {
    const { log } = workedTask('c8');
    log.add(doneSubmittedDraft(log.ids, 'dcl-8', doneClaimOf({ status: 'failed', evidence: { ...doneClaimOf().evidence, verify_exit_code: 1, verify_stderr: 'greeting missing\nmore' } })));
    expect(typesOf(log.step('claim.done_submitted'))).toEqual(['claim.done_accepted', 'decision.recorded', 'audit.file_ownership_passed', 'task.failed']);
    expect(log.view().task).toMatchObject({ status: 'failed', reason: 'done claim dcl-8: failed: greeting missing' });
  });

  it('given an accepted claim while an action of the agent is still in flight, when judged, then the task closes only once that action has ended', () => {
    // given: a second agent action awaiting policy
    const { log, request } = workedTask('c9');
    const second: TaskIds = { ...log.ids, step_id: 'stp-c9-2', attempt_id: 'att-c9-2' };
    const follow = { ...request, action_request_id: 'ar-c9-2', task_id: log.ids.task_id } as ActionRequest;
    delete (follow as { task?: unknown }).task;
    log.add(...ingressDrafts(second, follow, { existingTask: true }));
    log.add(doneSubmittedDraft(log.ids, 'dcl-9', doneClaimOf({ status: 'failed', evidence: { ...doneClaimOf().evidence, verify_stderr: 'x' } })));
    // when
    expect(typesOf(log.step('claim.done_submitted'))).toEqual(['claim.done_accepted', 'decision.recorded']);
    // then: the in-flight action ends, and only then the task closes
    runAttempt(log, second, follow);
    expect(log.types().slice(-2)).toEqual(['audit.file_ownership_passed', 'task.failed']);
  });
});

describe('planClaims: the file-ownership audit when the task closes', () => {
  function closeWithCleanClaim(log: PlanLog, claimId: string): EventDraft[] {
    log.add(doneSubmittedDraft(log.ids, claimId));
    log.step('claim.done_submitted');
    runAttempt(log, verifyRunIds(log.ids, claimId), verifyRequestOf(log, claimId), { exitCode: 0 });
    return log.drafts;
  }

  it('given an execution that changed a file outside files_owned (a command side effect), when the task closes, then the audit fails the task', () => {
    // given: policy let the command run (its write target was owned), but it also touched README.md
    const { log } = workedTask('a1', { changed: [written('src/greeting.txt'), written('README.md', 'modified')] });
    // when
    closeWithCleanClaim(log, 'dcl-a1');
    // then
    const audit = log.drafts.find((d) => d.event_type === 'audit.file_ownership_failed');
    expect(audit?.payload).toMatchObject({
      modified_not_owned: [{ path: 'README.md', change: 'modified' }],
      sacred_modified: [],
      rollback: { status: 'unavailable', rollbacks: [], unrollable: [{ path: 'README.md', receipt_id: `rct-${log.ids.attempt_id}-settled` }] },
    });
    expect(log.types().slice(-3)).toEqual(['audit.file_ownership_failed', 'decision.recorded', 'task.failed']);
    expect(log.drafts.at(-2)).toMatchObject({ payload: { decision: { decision_type: 'safety' }, outcome_event: 'audit.file_ownership_failed' } });
    expect(log.view().task).toMatchObject({ status: 'failed' });
    expect(String((log.view().task as { reason: string }).reason)).toContain('not rollable: README.md: receipt');
  });

  it('given an execution that modified a Sacred Scope file, when the task closes, then the task fails and the audit says what a restore needs (Writ cannot revert it)', () => {
    const brief = briefOf({ spec: { scope: { files_owned: ['**'] } } });
    const { log } = workedTask('a2', { brief, changed: [written('.env', 'modified')] });
    closeWithCleanClaim(log, 'dcl-a2');
    const audit = log.drafts.find((d) => d.event_type === 'audit.file_ownership_failed');
    expect(audit?.payload).toMatchObject({
      modified_not_owned: [],
      sacred_modified: [{ path: '.env' }],
      rollback: { status: 'unavailable', restore: [{ path: '.env', before_sha256: 'a'.repeat(64) }] },
    });
    expect(log.drafts.at(-2)).toMatchObject({ payload: { decision: { decision_type: 'safety', risk_level: 'high' } } });
    expect(taskStatus(log)).toBe('failed');
  });

  it('given an execution without a workspace diff (unknown outcome), when the task closes, then the audit fails closed', () => {
    const { log } = workedTask('a3');
    // a failed claim needs no verify run, so the agent's execution is the only one audited
    log.add(doneSubmittedDraft(log.ids, 'dcl-a3', doneClaimOf({ status: 'failed', evidence: { ...doneClaimOf().evidence, verify_stderr: 'x' } })));
    const view = log.view();
    const executed = [...view.attempts.values()][0]!.executions[0]!;
    // rewrite the agent's execution as one whose diff was not taken
    const index = log.drafts.findIndex((d) => d.event_id === executed.event_id);
    log.drafts[index] = { ...log.drafts[index]!, payload: { ...log.drafts[index]!.payload, changed_files: [], error: { code: 'EXECUTOR_DIFF_UNAVAILABLE', message: 'reconciled' } } };
    log.step('claim.done_submitted');
    expect(log.drafts.find((d) => d.event_type === 'audit.file_ownership_failed')?.payload).toMatchObject({ unaudited_executions: [executed.event_id] });
    expect(taskStatus(log)).toBe('failed');
  });
});

describe('planClaims: a failed audit rolls back what it flagged through the governed path', () => {
  const AFTER = HASH;
  const undoable = (...paths: string[]): ReceiptRollback => ({
    method: 'compensating_local_actions',
    statement: 'reversible through one governed rollback',
    prerequisites: [],
    steps: paths.map((path) => ({ action_class: 'delete_local' as const, path, expected_sha256: AFTER })),
  });

  function closeWithCleanClaim(log: PlanLog, claimId: string): void {
    log.add(doneSubmittedDraft(log.ids, claimId));
    log.step('claim.done_submitted');
    runAttempt(log, verifyRunIds(log.ids, claimId), verifyRequestOf(log, claimId), { exitCode: 0 });
  }

  /** The audit-triggered rollback of `receiptId` through policy, a director's answer and (granted) the executor and its receipt. */
  function runRollback(log: PlanLog, receiptId: string, decision: 'grant' | 'deny'): ActionRequest {
    const rb = auditRollbackIdsFor(log.ids.task_id, receiptId);
    const ids: TaskIds = { task_id: log.ids.task_id, step_id: rb.stepId, attempt_id: rb.attemptId };
    const state = log.view().attempts.get(rb.attemptId)?.state;
    if (state === undefined || state.status === 'initial' || state.action_request === null) throw new Error(`no rollback attempt for ${receiptId}`);
    const request = state.action_request;
    log.add(policyEvaluatedDraft(ids, request, 'local_edit_allowed', { at: instant(11) }));
    log.step((e) => e.event_type === 'policy.evaluated' && e.attempt_id === ids.attempt_id);
    const approvalId = approvalIdFor(ids.task_id, ids.attempt_id, 1);
    const requested = approvalRequestedDraft(ids, approvalId, { at: instant(12) });
    log.add(requested);
    log.step((e) => e.event_type === 'approval.requested' && e.entity_id === approvalId);
    log.add(approvalResolvedDraft(ids, approvalId, requested, decision, { at: instant(13) }));
    log.step((e) => e.entity_id === approvalId && e.event_type !== 'approval.requested');
    if (decision === 'deny') return request;
    const grant = grantIssuedDraft(ids, request, { at: instant(14), approvalId });
    log.add(grant);
    log.step((e) => e.event_type === 'grant.issued' && e.attempt_id === ids.attempt_id);
    log.add(useClaimedDraft(ids, grant, request, { at: instant(15) }));
    log.step((e) => e.event_type === 'grant.use_claimed' && e.attempt_id === ids.attempt_id);
    log.add(executionCompletedDraft(ids, { at: instant(16), exitCode: 0, changedFiles: [] }));
    log.step((e) => e.event_type === 'execution.completed' && e.attempt_id === ids.attempt_id);
    log.add(receiptIssuedDraft(ids, 'succeeded', { at: instant(17) }));
    log.step((e) => e.event_type === 'receipt.issued' && e.attempt_id === ids.attempt_id);
    return request;
  }

  it('given an action that added a Sacred Scope file and whose receipt names a rollback, when the task closes, then the audit proposes that receipt\'s rollback as a governed action of the task and the task waits for it', () => {
    // given: the agent's action added billing/plan.ts (sacred) beside its owned file
    const { log } = workedTask('r1', { brief: briefOf({ spec: { scope: { files_owned: ['**'] } } }), changed: [written('src/greeting.txt'), written('billing/plan.ts')], rollback: undoable('src/greeting.txt', 'billing/plan.ts') });
    const receiptId = `rct-${log.ids.attempt_id}-settled`;
    // when
    closeWithCleanClaim(log, 'dcl-r1');
    // then
    const rb = auditRollbackIdsFor(log.ids.task_id, receiptId);
    expect(log.drafts.find((d) => d.event_type === 'audit.file_ownership_failed')?.payload).toMatchObject({
      sacred_modified: [{ path: 'billing/plan.ts' }],
      rollback: { status: 'proposed', rollbacks: [{ receipt_id: receiptId, action_request_id: rb.actionRequestId, paths: ['billing/plan.ts'] }], unrollable: [] },
    });
    expect(log.types().slice(-10)).toEqual([
      'audit.file_ownership_failed',
      'decision.recorded',
      'audit.rollback_proposed',
      'decision.recorded',
      'step.planned',
      'step.marked_ready',
      'step.attempt_opened',
      'attempt.created',
      'attempt.leased',
      'attempt.awaiting_policy',
    ]);
    expect(log.drafts.at(-7)).toMatchObject({ entity_type: 'decision', payload: { subject_ref: `receipt:${receiptId}`, outcome_event: 'audit.rollback_proposed', decision: { decision_type: 'safety', risk_level: 'high' } } });
    const state = log.view().attempts.get(rb.attemptId)?.state;
    expect(state).toMatchObject({
      status: 'awaiting_policy',
      action_request: {
        action_request_id: rb.actionRequestId,
        action_class: 'rollback',
        proposed_by: 'writ-orchestrator',
        target_resources: ['src/greeting.txt', 'billing/plan.ts'],
        params: { receipt_id: receiptId, receipt_hash: RECEIPT_HASH, steps: undoable('src/greeting.txt', 'billing/plan.ts').steps },
      },
    });
    expect(taskStatus(log)).toBe('running');
    // handled again: nothing new
    expect(log.handle('attempt.awaiting_policy').events).toEqual([]);
  });

  it('given the proposed rollback, when a director approves and it runs, then the task fails once its receipt is in, saying what was rolled back', () => {
    const { log } = workedTask('r2', { brief: briefOf({ spec: { scope: { files_owned: ['**'] } } }), changed: [written('billing/plan.ts')], rollback: undoable('billing/plan.ts') });
    const receiptId = `rct-${log.ids.attempt_id}-settled`;
    closeWithCleanClaim(log, 'dcl-r2');
    const request = runRollback(log, receiptId, 'grant');
    expect(request.action_class).toBe('rollback');
    expect(log.types().slice(-3)).toEqual(['attempt.succeeded', 'step.succeeded', 'task.failed']);
    const reason = String((log.view().task as { reason: string }).reason);
    expect(reason).toContain(`rolled back receipt ${receiptId} (${request.action_request_id}): billing/plan.ts`);
  });

  it('given the proposed rollback, when a director denies it, then the task fails and says the path was not restored', () => {
    const { log } = workedTask('r3', { brief: briefOf({ spec: { scope: { files_owned: ['**'] } } }), changed: [written('billing/plan.ts')], rollback: undoable('billing/plan.ts') });
    const receiptId = `rct-${log.ids.attempt_id}-settled`;
    closeWithCleanClaim(log, 'dcl-r3');
    runRollback(log, receiptId, 'deny');
    expect(taskStatus(log)).toBe('failed');
    const reason = String((log.view().task as { reason: string }).reason);
    expect(reason).toMatch(new RegExp(`rollback arb-[0-9a-f]{32} of receipt ${receiptId} ended failed.*billing/plan.ts not restored`));
  });

  it('given a flagged path whose receipt names no method, when the task closes, then nothing is proposed and the task fails at once naming the path and why', () => {
    const none: ReceiptRollback = { method: 'none', statement: 'no rollback method: the pre-image of package.json was not captured', prerequisites: [], steps: [] };
    const { log } = workedTask('r4', { brief: briefOf({ spec: { scope: { files_owned: ['**'] } } }), changed: [written('package.json', 'modified')], rollback: none });
    closeWithCleanClaim(log, 'dcl-r4');
    expect(log.types()).not.toContain('audit.rollback_proposed');
    expect(log.drafts.find((d) => d.event_type === 'audit.file_ownership_failed')?.payload).toMatchObject({ rollback: { status: 'unavailable', unrollable: [{ path: 'package.json', reason: expect.stringContaining('pre-image of package.json was not captured') }] } });
    expect(taskStatus(log)).toBe('failed');
    expect(String((log.view().task as { reason: string }).reason)).toContain('not rollable: package.json: receipt');
  });
});

describe('planClaims: blocked claims', () => {
  /** A briefed task with an agent action in flight (awaiting policy). */
  function busyTask(name: string): PlanLog {
    const ids = taskIds(name);
    return new PlanLog(ids).add(...ingressDrafts(ids, briefedRequest(ids)));
  }

  it('given a legal block while its fallback runs, when handled, then its question is asked in the approval inbox', () => {
    const log = busyTask('b1');
    log.add(blockedSubmittedDraft(log.ids, 'bcl-1'));
    const plan = log.step('claim.blocked_submitted');
    expect(typesOf(plan)).toEqual(['question.asked', 'claim.blocked_accepted']);
    expect(plan.events[0]?.payload).toMatchObject({ kind: 'question', claim_id: 'bcl-1', question: blockedClaimOf().question, requested_by: 'agent-1' });
    expect(String(plan.events[0]?.payload['approval_id'])).toMatch(/^qst-[0-9a-f]{32}$/);
  });

  it('given an illegal block (a preference, no fallback in flight), when handled, then it is refused with its codes and recorded as a decision', () => {
    const { log } = workedTask('b2');
    log.add(blockedSubmittedDraft(log.ids, 'bcl-2', blockedClaimOf({ question: 'Three options exist, which would you prefer?' })));
    const plan = log.step('claim.blocked_submitted');
    expect(typesOf(plan)).toEqual(['claim.blocked_refused', 'decision.recorded']);
    expect((plan.events[0]?.payload['refusals'] as { code: string }[]).map((r) => r.code).sort()).toEqual(['BLOCK_FALLBACK_NOT_EXECUTING', 'BLOCK_PREFERENCE']);
  });

  it('given an open question, when the task ends, then the question is withdrawn from the inbox', () => {
    const log = busyTask('b3');
    log.add(blockedSubmittedDraft(log.ids, 'bcl-3'));
    log.step('claim.blocked_submitted');
    runAttempt(log, log.ids, briefedRequest(log.ids));
    log.add(doneSubmittedDraft(log.ids, 'dcl-b3', doneClaimOf({ status: 'failed', evidence: { ...doneClaimOf().evidence, verify_stderr: 'x' } }), instant(20)));
    log.step('claim.done_submitted');
    expect(log.types().slice(-2)).toEqual(['task.failed', 'question.withdrawn']);
  });
});
