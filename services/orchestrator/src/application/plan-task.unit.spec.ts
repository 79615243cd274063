import { hasErrorCode, type EventDraft } from '@writ/contracts';
import { builtinPolicyProfile } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import {
  approvalRequestedDraft,
  approvalResolvedDraft,
  commandRequest,
  executionCompletedDraft,
  grantIssuedDraft,
  grantRefusedDraft,
  grantRevokedDraft,
  ingressDrafts,
  instant,
  laterUseClaimedDraft,
  notRunDrafts,
  logged,
  outcomeResolvedDraft,
  policyEvaluatedDraft,
  receiptIssuedDraft,
  taskIds,
  useClaimedDraft,
  writeRequest,
  type TaskIds,
} from '../../test/task-fixtures.js';
import { approvalIdFor } from './ids.js';
import { GRANT_RENEWALS_MAX } from '@writ/contracts';
import { MAX_RUNS_PER_GRANT, planTask, type Plan, type PlannedCommand } from './plan-task.js';
import { TaskView } from './task-view.js';

const NOW = instant(10);

/** A task log in memory: what the planner sees, and what it would append (commit). */
class Log {
  readonly drafts: EventDraft[] = [];
  constructor(readonly ids: TaskIds) {}

  add(...drafts: EventDraft[]): this {
    this.drafts.push(...drafts);
    return this;
  }

  /** Plans the handling of the event of type `eventType` (its last occurrence), as one delivery would. */
  handle(eventType: string, now = NOW): Plan {
    const events = logged(this.drafts);
    const trigger = [...events].reverse().find((e) => e.event_type === eventType);
    if (trigger === undefined) throw new Error(`no ${eventType} in the log`);
    return planTask(TaskView.fold(this.ids.task_id, events), { trigger, now, actorId: 'writ-orchestrator', executorPrincipalId: 'writ-executor' });
  }

  /** Handles `eventType` and appends what the plan decided, as the handler does. */
  step(eventType: string, now = NOW): Plan {
    const plan = this.handle(eventType, now);
    this.drafts.push(...plan.events);
    return plan;
  }

  types(): string[] {
    return this.drafts.map((d) => d.event_type);
  }
}

const types = (plan: Plan) => plan.events.map((e) => e.event_type);
const only = (plan: Plan): PlannedCommand => {
  expect(plan.commands).toHaveLength(1);
  return plan.commands[0] as PlannedCommand;
};

function echoTask(name: string, profile = 'local_edit_allowed'): { log: Log; request: ReturnType<typeof commandRequest> } {
  const ids = taskIds(name);
  const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt'], profile);
  return { log: new Log(ids).add(...ingressDrafts(ids, request)), request };
}

function rmTask(name: string, profile = 'local_edit_allowed'): { log: Log; request: ReturnType<typeof commandRequest> } {
  const ids = taskIds(name);
  const request = commandRequest(ids, ['rm', '-rf', 'build'], profile);
  return { log: new Log(ids).add(...ingressDrafts(ids, request)), request };
}

/** Drives an allowed echo task up to `attempt.grant_attached`. */
function attachedTask(name: string): { log: Log; request: ReturnType<typeof commandRequest>; grant: EventDraft } {
  const { log, request } = echoTask(name);
  log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
  log.step('policy.evaluated');
  const grant = grantIssuedDraft(log.ids, request, { at: instant(5) });
  log.add(grant);
  log.step('grant.issued');
  return { log, request, grant };
}

describe('planTask: policy', () => {
  it('given a new attempt awaiting policy, when it is handled, then it asks policy with the task profile and files_owned, and appends nothing', () => {
    const { log, request } = echoTask('p1');
    const plan = log.handle('attempt.awaiting_policy');
    expect(plan.events).toEqual([]);
    const command = only(plan);
    expect(command.command).toBe('policyEvaluate');
    expect(command.msgId).toBe('att-p1:cmd:policy.evaluate:1');
    expect(command.payload).toMatchObject({ ...log.ids, policy_profile: 'local_edit_allowed', files_owned: ['**'], action_request: request });
  });

  it('given policy allowed, when policy.evaluated is handled, then the attempt is authorized; then its authorization asks for a grant to the executor', () => {
    const { log, request } = echoTask('p2');
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
    const recorded = log.step('policy.evaluated');
    expect(types(recorded)).toEqual(['attempt.authorized']);
    expect(recorded.commands).toEqual([]);
    expect(recorded.events[0]).toMatchObject({
      entity_type: 'attempt',
      entity_id: 'att-p2',
      attempt_id: 'att-p2',
      step_id: 'stp-p2',
      actor_type: 'service',
      actor_id: 'writ-orchestrator',
      correlation_id: 'tsk-p2',
      idempotency_key: 'att-p2:policy:1:attempt.authorized',
      payload: { via: 'policy_allow', policy: { outcome: 'allow', profile_id: 'local_edit_allowed', policy_version: builtinPolicyProfile('local_edit_allowed').version } },
    });
    const command = only(log.handle('attempt.authorized'));
    expect(command.command).toBe('approvalIssueGrant');
    expect(command.payload).toMatchObject({ ...log.ids, approval_id: null, issued_to: 'writ-executor', policy_result_id: 'pr-att-p2-1', action_request: request });
  });

  it('given policy requires approval, then the same attempt waits for a deterministic approval, and the approval is requested once', () => {
    const { log, request } = rmTask('p3');
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
    const recorded = log.step('policy.evaluated');
    const approvalId = approvalIdFor('tsk-p3', 'att-p3', 1);
    expect(types(recorded)).toEqual(['attempt.awaiting_approval']);
    expect(recorded.events[0]?.payload).toMatchObject({ approval_id: approvalId, policy: { outcome: 'require_approval', witness_required: true } });
    const command = only(log.handle('attempt.awaiting_approval'));
    expect(command).toMatchObject({ command: 'approvalRequest', payload: { ...log.ids, approval_id: approvalId, requested_by: 'agent-1', risk_band: 'high' } });
    // once approval.requested is in the log, the same event asks for nothing more
    log.add(approvalRequestedDraft(log.ids, approvalId));
    expect(log.handle('attempt.awaiting_approval').commands).toEqual([]);
  });

  it('given policy denied, then the attempt ends policy_denied with coded reasons, and the denial is receipted', () => {
    const { log, request } = rmTask('p4', 'destructive_denied');
    log.add(policyEvaluatedDraft(log.ids, request, 'destructive_denied'));
    const recorded = log.step('policy.evaluated');
    expect(types(recorded)).toEqual(['attempt.policy_denied']);
    expect(recorded.events[0]?.payload).toMatchObject({ reasons: [{ code: 'destructive_command' }] });
    expect(only(log.handle('attempt.policy_denied'))).toMatchObject({ command: 'receiptIssue', payload: { ...log.ids, cause: 'policy_denied' } });
  });

  it('given policy downgraded a write, then the attempt continues with the rewritten read, and the grant is asked for that request', () => {
    const ids = taskIds('p5');
    const request = writeRequest(ids);
    const log = new Log(ids).add(...ingressDrafts(ids, request), policyEvaluatedDraft(ids, request, 'readonly_analysis'));
    const recorded = log.step('policy.evaluated');
    expect(types(recorded)).toEqual(['attempt.downgraded']);
    expect(recorded.events[0]?.payload).toMatchObject({ action_request: { action_class: 'read_local', action_request_id: 'ar-tsk-p5-dg' }, restricted_mode: 'readonly' });
    const command = only(log.handle('attempt.downgraded'));
    expect(command).toMatchObject({ command: 'approvalIssueGrant', payload: { action_request: { action_class: 'read_local' }, approval_id: null } });
  });
});

describe('planTask: approval', () => {
  function awaiting(name: string) {
    const { log, request } = rmTask(name);
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
    log.step('policy.evaluated');
    const approvalId = approvalIdFor(log.ids.task_id, log.ids.attempt_id, 1);
    const requested = approvalRequestedDraft(log.ids, approvalId);
    log.add(requested);
    return { log, request, approvalId, requested };
  }

  it('given a granted approval that revalidated its witness, then the same attempt is authorized and the grant cites the approval', () => {
    const { log, approvalId, requested } = awaiting('a1');
    log.add(approvalResolvedDraft(log.ids, approvalId, requested, 'grant'));
    expect(types(log.step('approval.granted'))).toEqual(['attempt.authorized']);
    expect(log.drafts.filter((d) => d.event_type === 'attempt.created')).toHaveLength(1);
    expect(only(log.handle('attempt.authorized'))).toMatchObject({ command: 'approvalIssueGrant', payload: { attempt_id: 'att-a1', approval_id: approvalId } });
  });

  it('given a denied approval, then the attempt ends approval_denied, the denial is receipted, and the receipt closes step and task', () => {
    const { log, approvalId, requested } = awaiting('a2');
    log.add(approvalResolvedDraft(log.ids, approvalId, requested, 'deny'));
    expect(types(log.step('approval.denied'))).toEqual(['attempt.approval_denied']);
    expect(only(log.handle('attempt.approval_denied'))).toMatchObject({ command: 'receiptIssue', payload: { cause: 'approval_denied' } });
    log.add(receiptIssuedDraft(log.ids, 'refused', { cause: 'approval_denied' }));
    expect(types(log.step('receipt.issued'))).toEqual(['step.attempt_closed', 'step.failed', 'task.failed']);
  });

  it('given an approval invalidated by witness drift, then the same attempt re-enters policy, asks policy again, and a new approval is opened for the new entry', () => {
    const { log, request, approvalId, requested } = awaiting('a4');
    log.add(approvalResolvedDraft(log.ids, approvalId, requested, 'grant', { currentFingerprints: { build: 'sha256:bbbb' } }));
    expect(log.types()).toContain('approval.invalidated');
    const plan = log.step('approval.invalidated');
    expect(types(plan)).toEqual(['attempt.policy_reentered']);
    expect(plan.events[0]?.payload).toMatchObject({ cause: 'approval_invalidated' });
    expect(only(log.handle('attempt.policy_reentered'))).toMatchObject({
      command: 'policyEvaluate',
      msgId: 'att-a4:cmd:policy.evaluate:2',
      payload: { attempt_id: 'att-a4', action_request: { action_request_id: request.action_request_id } },
    });
    // policy answers the second entry: the same attempt waits for a new approval
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed', { at: instant(6), entry: 2 }));
    expect(types(log.step('policy.evaluated'))).toEqual(['attempt.awaiting_approval']);
    const second = approvalIdFor(log.ids.task_id, log.ids.attempt_id, 2);
    expect(second).not.toBe(approvalId);
    expect(only(log.handle('attempt.awaiting_approval'))).toMatchObject({ command: 'approvalRequest', payload: { attempt_id: 'att-a4', approval_id: second } });
    expect(log.drafts.filter((d) => d.event_type === 'attempt.created')).toHaveLength(1);
  });

  it('given a granted approval without the witness policy required, then the attempt fails before any grant and is receipted as refused', () => {
    const { log, approvalId } = awaiting('a3');
    const unwitnessed = approvalRequestedDraft(log.ids, approvalId, { witness: false });
    // the approval service captured no witness: its grant cannot revalidate one
    log.drafts.splice(log.drafts.findIndex((d) => d.event_type === 'approval.requested'), 1, unwitnessed);
    log.add(approvalResolvedDraft(log.ids, approvalId, unwitnessed, 'grant'));
    const plan = log.step('approval.granted');
    expect(types(plan)).toEqual(['attempt.failed']);
    expect(plan.events[0]?.payload).toMatchObject({ reason_code: 'witness_not_validated' });
    expect(only(log.handle('attempt.failed'))).toMatchObject({ command: 'receiptIssue', payload: { cause: 'refused' } });
  });
});

describe('planTask: grant, execution, receipt', () => {
  it('given a grant issued for the attempt, then it is attached and the executor is asked to run it with the JWS', () => {
    const { log, grant } = attachedTask('g1');
    expect(log.types()).toContain('attempt.grant_attached');
    const command = only(log.handle('attempt.grant_attached'));
    expect(command).toMatchObject({ command: 'executorRun', msgId: 'att-g1:cmd:executor.run:gnt-att-g1', payload: { grant_id: 'gnt-att-g1', grant_jws: (grant.payload as { jws: string }).jws } });
  });

  it('given a grant.issued without a JWS, then asking the executor fails with ORCHESTRATOR_GRANT_JWS_MISSING', () => {
    const { log, request } = echoTask('g2');
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
    log.step('policy.evaluated');
    log.add(grantIssuedDraft(log.ids, request, { at: instant(5), jws: null }));
    log.step('grant.issued');
    expect(() => log.handle('attempt.grant_attached')).toThrow(expect.objectContaining({ code: 'ORCHESTRATOR_GRANT_JWS_MISSING' }));
  });

  it('given a grant that expired before it was attached, then nothing fails: the grant is renewed on the same authority (renewal 1)', () => {
    const { log, request } = echoTask('g3');
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
    log.step('policy.evaluated');
    log.add(grantIssuedDraft(log.ids, request, { at: instant(-400), ttlSeconds: 300 }));
    const plan = log.step('grant.issued');
    expect(plan.events).toEqual([]);
    expect(only(plan)).toMatchObject({ command: 'approvalIssueGrant', msgId: 'att-g3:cmd:approval.issue-grant:1:renewal:1', payload: { policy_result_id: 'pr-att-g3-1', approval_id: null, renewal: 1 } });
  });

  it('given the executor refused the grant, then the attempt fails and is receipted as refused', () => {
    const { log } = attachedTask('g4');
    log.add(grantRefusedDraft(log.ids));
    const plan = log.step('grant.refused');
    expect(types(plan)).toEqual(['attempt.failed']);
    expect(plan.events[0]?.payload).toMatchObject({ reason_code: 'grant_refused' });
    expect(only(log.handle('attempt.failed'))).toMatchObject({ command: 'receiptIssue', payload: { cause: 'refused' } });
  });

  it('given a claimed use, then the attempt is executing from the claim instant; a completed run settles and asks for the receipt; the receipt closes everything', () => {
    const { log, request, grant } = attachedTask('g5');
    const claimAt = instant(6);
    log.add(useClaimedDraft(log.ids, grant, request, { at: claimAt }));
    const executing = log.step('grant.use_claimed');
    expect(types(executing)).toEqual(['attempt.executing']);
    expect(executing.events[0]?.payload).toMatchObject({ grant_id: 'gnt-att-g5', at: claimAt });
    log.add(executionCompletedDraft(log.ids, { at: instant(7) }));
    const settled = log.step('execution.completed');
    expect(types(settled)).toEqual(['attempt.observing', 'attempt.receipt_pending']);
    expect(settled.events[1]?.payload).toMatchObject({ result_code: 'succeeded' });
    expect(only(log.handle('attempt.receipt_pending'))).toMatchObject({ command: 'receiptIssue', payload: { cause: 'settled' } });
    log.add(receiptIssuedDraft(log.ids, 'succeeded'));
    const closed = log.step('receipt.issued');
    expect(types(closed)).toEqual(['attempt.succeeded', 'step.succeeded', 'task.completed']);
    expect(closed.events[0]?.payload).toMatchObject({ receipt_ref: 'receipt:rct-att-g5-settled' });
    expect(closed.events[1]).toMatchObject({ entity_type: 'step', entity_id: log.ids.step_id, attempt_id: log.ids.attempt_id });
    // the task is over: its cell is closed, once per task whichever delivery asks
    const close = only(log.handle('task.completed'));
    expect(close).toMatchObject({ command: 'executorCloseCell', msgId: `${log.ids.task_id}:cmd:executor.close-cell`, payload: { task_id: log.ids.task_id, reason: 'task.completed' } });
    expect(log.handle('task.completed').events).toEqual([]);
  });

  it('given a run that exited non-zero, then it settles failed and its receipt fails attempt, step and task', () => {
    const { log, request, grant } = attachedTask('g6');
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }), executionCompletedDraft(log.ids, { outcome: 'completed', exitCode: 1 }));
    log.step('execution.completed');
    expect(log.drafts.at(-1)?.payload).toMatchObject({ result_code: 'failed' });
    log.add(receiptIssuedDraft(log.ids, 'failed'));
    expect(types(log.step('receipt.issued'))).toEqual(['attempt.failed', 'step.attempt_closed', 'step.failed', 'task.failed']);
    expect(only(log.handle('task.failed'))).toMatchObject({ command: 'executorCloseCell', payload: { task_id: log.ids.task_id, reason: 'task.failed' } });
  });

  it('given an unknown outcome, then the attempt stays observing, is receipted as uncertain and is never run again', () => {
    const { log, request, grant } = attachedTask('g7');
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }), executionCompletedDraft(log.ids, { outcome: 'unknown' }));
    const observed = log.step('execution.completed');
    expect(types(observed)).toEqual(['attempt.executing', 'attempt.observing']);
    expect(observed.commands).toEqual([]);
    expect(only(log.handle('attempt.observing'))).toMatchObject({ command: 'receiptIssue', payload: { cause: 'settled' } });
    log.add(receiptIssuedDraft(log.ids, 'unknown_outcome'));
    expect(types(log.step('receipt.issued'))).toEqual(['attempt.unknown_outcome_receipted']);
    // nothing re-runs it, whatever is handled again
    for (const type of ['attempt.grant_attached', 'attempt.observing', 'attempt.unknown_outcome_receipted', 'receipt.issued']) {
      const again = log.handle(type);
      expect(again.events).toEqual([]);
      expect(again.commands).toEqual([]);
    }
  });
});

describe('planTask: a grant that expired unused is renewed, not a failure of the action (issue 13)', () => {
  /** The executor's refusal of the attached grant as expired: its run command waited longer than the grant lived. */
  const expiredRefusal = (log: Log, grantId?: string) =>
    grantRefusedDraft(log.ids, { code: 'GRANT_EXPIRED', message: 'grant expired', ...(grantId === undefined ? {} : { grantId, useId: `use-${grantId}` }) });

  it('given the executor refused the attached grant as expired, then the attempt does not fail and renewal 1 is asked for, once', () => {
    // given
    const { log } = attachedTask('rn1');
    // when
    log.add(expiredRefusal(log));
    const plan = log.step('grant.refused');
    // then
    expect(plan.events).toEqual([]);
    const command = only(plan);
    expect(command).toMatchObject({ command: 'approvalIssueGrant', msgId: 'att-rn1:cmd:approval.issue-grant:1:renewal:1', payload: { attempt_id: 'att-rn1', renewal: 1 } });
    expect(only(log.handle('grant.refused')).msgId).toBe(command.msgId);
    expect(log.handle('attempt.grant_attached').commands).toEqual([]);
  });

  it('given the renewal is issued, then it replaces the expired grant, the executor runs it, and the attempt settles succeeded on it', () => {
    // given: the first grant (issued at +5 s, 300 s) refused as expired at +306 s
    const { log, request } = attachedTask('rn2');
    const later = instant(320);
    log.add({ ...expiredRefusal(log), occurred_at: instant(306) });
    log.step('grant.refused', later);
    // when
    const renewal = grantIssuedDraft(log.ids, request, { grantId: 'gnt-att-rn2-r1', at: instant(310) });
    log.add(renewal);
    const attached = log.step('grant.issued', later);
    // then
    expect(types(attached)).toEqual(['attempt.grant_attached']);
    expect(attached.events[0]?.payload).toMatchObject({ grant_id: 'gnt-att-rn2-r1' });
    expect(only(log.handle('attempt.grant_attached', later))).toMatchObject({ command: 'executorRun', msgId: 'att-rn2:cmd:executor.run:gnt-att-rn2-r1', payload: { grant_id: 'gnt-att-rn2-r1' } });
    log.add(useClaimedDraft(log.ids, renewal, request, { at: instant(321) }));
    expect(types(log.step('grant.use_claimed', instant(322)))).toEqual(['attempt.executing']);
    const completed = executionCompletedDraft(log.ids, { at: instant(323) });
    log.add({ ...completed, payload: { ...completed.payload, grant_id: 'gnt-att-rn2-r1' } });
    const settled = log.step('execution.completed', instant(324));
    expect(types(settled)).toEqual(['attempt.observing', 'attempt.receipt_pending']);
    expect(settled.events[1]?.payload).toMatchObject({ result_code: 'succeeded' });
    expect(log.types()).not.toContain('attempt.failed');
  });

  it(`given ${GRANT_RENEWALS_MAX} renewals that all expired unused, then no further renewal: the attempt fails refused, saying how often it was renewed and that nothing ran`, () => {
    const { log, request } = attachedTask('rn3');
    log.add(expiredRefusal(log));
    log.step('grant.refused');
    for (let n = 1; n <= GRANT_RENEWALS_MAX; n += 1) {
      // each renewal lives 300 s from +400 s × n, and is refused as expired after it
      const id = `gnt-att-rn3-r${n}`;
      const issuedAt = 400 * n;
      log.add(grantIssuedDraft(log.ids, request, { grantId: id, at: instant(issuedAt) }));
      log.step('grant.issued', instant(issuedAt + 1));
      log.add(expiredRefusal(log, id));
      const plan = log.step('grant.refused', instant(issuedAt + 301));
      if (n < GRANT_RENEWALS_MAX) {
        expect(plan.events).toEqual([]);
        expect(only(plan)).toMatchObject({ payload: { renewal: n + 1 } });
      } else {
        expect(plan.commands).toEqual([]);
        expect(types(plan)).toEqual(['attempt.failed']);
        expect(plan.events[0]?.payload).toMatchObject({ reason_code: 'grant_refused' });
        expect(String((plan.events[0]?.payload as { reason: string }).reason)).toContain(`renewed ${GRANT_RENEWALS_MAX} time(s), the limit; no use of any started`);
      }
    }
    expect(log.types().filter((t) => t === 'attempt.grant_attached')).toHaveLength(GRANT_RENEWALS_MAX + 1);
  });

  it('given a revoked grant refused as expired, then it is never renewed: the attempt fails refused', () => {
    const { log } = attachedTask('rn4');
    log.add(grantRevokedDraft(log.ids), expiredRefusal(log));
    const plan = log.step('grant.refused');
    expect(plan.commands).toEqual([]);
    expect(types(plan)).toEqual(['attempt.failed']);
  });

  it('given a refusal for another reason than expiry, then nothing is renewed', () => {
    const { log } = attachedTask('rn5');
    log.add(grantRefusedDraft(log.ids, { code: 'GRANT_OUT_OF_SCOPE' }));
    const plan = log.step('grant.refused');
    expect(plan.commands).toEqual([]);
    expect(types(plan)).toEqual(['attempt.failed']);
  });

  it('given a renewal that itself expired before it was attached, then the next renewal is asked for', () => {
    const { log, request } = attachedTask('rn6');
    log.add(expiredRefusal(log));
    log.step('grant.refused');
    log.add(grantIssuedDraft(log.ids, request, { grantId: 'gnt-att-rn6-r1', at: instant(-400), ttlSeconds: 300 }));
    const plan = log.step('grant.issued');
    expect(plan.events).toEqual([]);
    expect(only(plan)).toMatchObject({ command: 'approvalIssueGrant', payload: { renewal: 2 } });
  });
});

describe('planTask: a use proven never started is not a result of the action (issue 13)', () => {
  /** An attached grant whose first use is claimed: the attempt is executing. */
  function running(name: string): { log: Log; request: ReturnType<typeof commandRequest> } {
    const { log, request, grant } = attachedTask(name);
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }));
    log.step('grant.use_claimed');
    return { log, request };
  }

  it('given a claimed use proven never started (not_run, released), then the attempt stays executing and the executor is asked to run it again as run 2, with the same grant', () => {
    const { log } = running('nr1');
    log.add(...notRunDrafts(log.ids, 1, { at: instant(7) }));
    const plan = log.step('execution.completed');
    expect(plan.events).toEqual([]);
    const command = only(plan);
    expect(command).toMatchObject({ command: 'executorRun', msgId: 'att-nr1:cmd:executor.run:gnt-att-nr1:2', payload: { grant_id: 'gnt-att-nr1', run_no: 2 } });
    // handled again (a redelivery): the same command, the same msg id; nothing appended
    expect(only(log.handle('execution.completed')).msgId).toBe(command.msgId);
  });

  it('given the second run completes, then the attempt settles on that run alone: succeeded, never "failed"', () => {
    const { log, request } = running('nr2');
    log.add(...notRunDrafts(log.ids, 1, { at: instant(7) }));
    log.step('execution.completed');
    log.add(laterUseClaimedDraft(log.ids, 2, request, { at: instant(8) }), executionCompletedDraft(log.ids, { at: instant(9), useNo: 2 }));
    const settled = log.step('execution.completed');
    expect(types(settled)).toEqual(['attempt.observing', 'attempt.receipt_pending']);
    expect(settled.events[1]?.payload).toMatchObject({ result_code: 'succeeded' });
    expect(settled.commands.filter((c) => c.command === 'executorRun')).toEqual([]);
  });

  it(`given ${MAX_RUNS_PER_GRANT} runs in a row that never started, then the attempt ends errored (it did not complete), and its failure never says it ran`, () => {
    const { log, request } = running('nr3');
    for (let useNo = 1; useNo <= MAX_RUNS_PER_GRANT; useNo += 1) {
      if (useNo > 1) log.add(laterUseClaimedDraft(log.ids, useNo, request, { at: instant(8) }));
      log.add(...notRunDrafts(log.ids, useNo, { at: instant(8) }));
      const plan = log.step('execution.completed');
      if (useNo < MAX_RUNS_PER_GRANT) expect(only(plan)).toMatchObject({ payload: { run_no: useNo + 1 } });
      else expect(plan.commands).toEqual([]);
    }
    expect(log.drafts.filter((d) => d.event_type === 'attempt.observing').at(-1)?.payload).toMatchObject({ execution_outcome: 'errored' });
    log.add(receiptIssuedDraft(log.ids, 'failed'));
    const failed = log.step('receipt.issued');
    expect(failed.events[0]).toMatchObject({ event_type: 'attempt.failed', payload: { reason_code: 'execution_errored' } });
    expect(String((failed.events[0]?.payload as { reason: string }).reason)).not.toContain('ran and failed');
  });

  it('given the run after a not_run is refused for another reason than expiry, then the attempt ends errored without asking again', () => {
    const { log } = running('nr4');
    log.add(...notRunDrafts(log.ids, 1, { at: instant(7) }));
    log.step('execution.completed');
    log.add(grantRefusedDraft(log.ids, { code: 'GRANT_OUT_OF_SCOPE' }));
    const plan = log.step('grant.refused');
    expect(types(plan)).toEqual(['attempt.observing', 'attempt.receipt_pending']);
    expect(plan.events[0]?.payload).toMatchObject({ execution_outcome: 'errored' });
    expect(plan.commands).toEqual([]);
  });
});

describe('planTask: a use proven never started, then its grant expired: renewed while executing (issue 13)', () => {
  /**
   * Grant `gnt-att-<name>` (issued at +5 s, 300 s) attached; its use 1 claimed at +6 s (executing),
   * proven never started at +7 s (not_run, released); run 2 waited in a backlog and was refused as
   * expired at +306 s. Handled at +320 s.
   */
  function expiredAfterNotRun(name: string): { log: Log; request: ReturnType<typeof commandRequest>; grant: EventDraft } {
    const { log, request, grant } = attachedTask(name);
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }));
    log.step('grant.use_claimed');
    log.add(...notRunDrafts(log.ids, 1, { at: instant(7) }));
    log.step('execution.completed');
    log.add(grantRefusedDraft(log.ids, { code: 'GRANT_EXPIRED', message: 'grant expired', useId: `use-${log.ids.attempt_id}-run-2`, at: instant(306) }));
    return { log, request, grant };
  }
  const LATER = instant(320);
  const renewalIssued = (log: Log, request: ReturnType<typeof commandRequest>, n: number, at = instant(310), ttlSeconds = 600) =>
    grantIssuedDraft(log.ids, request, { grantId: `gnt-${log.ids.attempt_id}-r${n}`, at, ttlSeconds });

  it('given the grant refused as expired after its only use was proven not run, then the attempt does not end: renewal 1 is asked for on the same authority, once', () => {
    // given
    const { log } = expiredAfterNotRun('xr1');
    // when
    const plan = log.step('grant.refused', LATER);
    // then
    expect(plan.events).toEqual([]);
    const command = only(plan);
    expect(command).toMatchObject({
      command: 'approvalIssueGrant',
      msgId: 'att-xr1:cmd:approval.issue-grant:1:renewal:1',
      payload: { attempt_id: 'att-xr1', policy_result_id: 'pr-att-xr1-1', approval_id: null, renewal: 1 },
    });
    expect(only(log.handle('grant.refused', LATER)).msgId).toBe(command.msgId);
  });

  it('given the renewal issued, then it is attached in place of the expired grant (attempt.grant_renewed, naming the not-run use), the executor runs it once, and the attempt settles succeeded on it', () => {
    // given
    const { log, request } = expiredAfterNotRun('xr2');
    log.step('grant.refused', LATER);
    // when
    const renewal = renewalIssued(log, request, 1);
    log.add(renewal);
    const renewed = log.step('grant.issued', LATER);
    // then: the renewal takes the expired grant's place; the attempt stays executing
    expect(types(renewed)).toEqual(['attempt.grant_renewed']);
    expect(renewed.events[0]?.payload).toMatchObject({ grant_id: 'gnt-att-xr2-r1', renews_grant_id: 'gnt-att-xr2', not_run_uses: [1], renews_expired_at: instant(305) });
    expect(renewed.commands).toEqual([]);
    const run = only(log.handle('attempt.grant_renewed', LATER));
    expect(run).toMatchObject({ command: 'executorRun', msgId: 'att-xr2:cmd:executor.run:gnt-att-xr2-r1', payload: { grant_id: 'gnt-att-xr2-r1' } });
    expect(run.payload).not.toHaveProperty('run_no');
    // handled again: nothing more
    expect(log.handle('grant.issued', LATER)).toEqual({ events: [], commands: [] });
    // and when the renewal's use is claimed and completes
    log.add(useClaimedDraft(log.ids, renewal, request, { at: instant(321) }));
    expect(log.step('grant.use_claimed', instant(322))).toEqual({ events: [], commands: [] });
    log.add(executionCompletedDraft(log.ids, { at: instant(323), grantId: 'gnt-att-xr2-r1' }));
    const settled = log.step('execution.completed', instant(324));
    expect(types(settled)).toEqual(['attempt.observing', 'attempt.receipt_pending']);
    expect(settled.events[1]?.payload).toMatchObject({ result_code: 'succeeded' });
    log.add(receiptIssuedDraft(log.ids, 'succeeded'));
    expect(types(log.step('receipt.issued', instant(325)))).toContain('attempt.succeeded');
    expect(log.types().filter((t) => t === 'attempt.executing')).toHaveLength(1);
    expect(log.types()).not.toContain('attempt.failed');
  });

  it('given a second use of the grant still in flight, then nothing is renewed and nothing ends while it may be running', () => {
    // given: use 1 not run, use 2 claimed and not settled, then a refusal as expired (of a third run command)
    const { log, request } = running4('xr3');
    log.add(laterUseClaimedDraft(log.ids, 2, request, { at: instant(8) }));
    log.add(grantRefusedDraft(log.ids, { code: 'GRANT_EXPIRED', message: 'grant expired', useId: 'use-att-xr3-3', at: instant(306) }));
    // when
    const plan = log.step('grant.refused', LATER);
    // then
    expect(plan).toEqual({ events: [], commands: [] });
  });

  it('given a revoked grant whose only use was proven not run, then it is never renewed: the attempt ends as not completed', () => {
    const { log } = expiredAfterNotRun('xr4');
    log.add(grantRevokedDraft(log.ids, { at: instant(307) }), grantRefusedDraft(log.ids, { code: 'GRANT_EXPIRED', useId: 'use-att-xr4-run-3', at: instant(308) }));
    const plan = log.step('grant.refused', LATER);
    expect(plan.commands).toEqual([]);
    expect(types(plan)).toEqual(['attempt.observing', 'attempt.receipt_pending']);
    expect(plan.events[0]?.payload).toMatchObject({ execution_outcome: 'errored' });
  });

  it(`given ${GRANT_RENEWALS_MAX} renewals each refused as expired before a use, then no further renewal: the attempt ends as not completed`, () => {
    const { log, request } = expiredAfterNotRun('xr5');
    log.step('grant.refused', LATER);
    for (let n = 1; n <= GRANT_RENEWALS_MAX; n += 1) {
      const issuedAt = 400 * n;
      log.add(renewalIssued(log, request, n, instant(issuedAt), 300));
      expect(types(log.step('grant.issued', instant(issuedAt + 1)))).toEqual(['attempt.grant_renewed']);
      log.add(grantRefusedDraft(log.ids, { code: 'GRANT_EXPIRED', message: 'grant expired', grantId: `gnt-att-xr5-r${n}`, useId: `use-r${n}`, at: instant(issuedAt + 301) }));
      const plan = log.step('grant.refused', instant(issuedAt + 302));
      if (n < GRANT_RENEWALS_MAX) {
        expect(plan.events).toEqual([]);
        expect(only(plan)).toMatchObject({ command: 'approvalIssueGrant', payload: { renewal: n + 1 } });
      } else {
        expect(plan.commands).toEqual([]);
        expect(types(plan)).toEqual(['attempt.observing', 'attempt.receipt_pending']);
        expect(plan.events[0]?.payload).toMatchObject({ execution_outcome: 'errored' });
      }
    }
  });

  it('given the renewal refused for another reason than expiry before any use of it, then the attempt ends as not completed (never left executing)', () => {
    const { log, request } = expiredAfterNotRun('xr6');
    log.step('grant.refused', LATER);
    log.add(renewalIssued(log, request, 1));
    log.step('grant.issued', LATER);
    log.add(grantRefusedDraft(log.ids, { code: 'GRANT_REVOKED', message: 'revoked', grantId: 'gnt-att-xr6-r1', useId: 'use-r1', at: instant(330) }));
    const plan = log.step('grant.refused', instant(331));
    expect(plan.commands).toEqual([]);
    expect(types(plan)).toEqual(['attempt.observing', 'attempt.receipt_pending']);
  });

  it('given the renewal expired before it was attached, then the next renewal is asked for and attached in its place', () => {
    const { log, request } = expiredAfterNotRun('xr7');
    log.step('grant.refused', LATER);
    log.add(renewalIssued(log, request, 1, instant(-700), 300));
    const plan = log.step('grant.issued', LATER);
    expect(plan.events).toEqual([]);
    expect(only(plan)).toMatchObject({ command: 'approvalIssueGrant', payload: { renewal: 2 } });
    log.add(renewalIssued(log, request, 2, instant(315)));
    const renewed = log.step('grant.issued', LATER);
    expect(types(renewed)).toEqual(['attempt.grant_renewed']);
    expect(renewed.events[0]?.payload).toMatchObject({ grant_id: 'gnt-att-xr7-r2', renews_grant_id: 'gnt-att-xr7' });
  });

  /** Executing on grant `gnt-att-<name>` with use 1 proven not run (run 2 asked for). */
  function running4(name: string): { log: Log; request: ReturnType<typeof commandRequest> } {
    const { log, request, grant } = attachedTask(name);
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }));
    log.step('grant.use_claimed');
    log.add(...notRunDrafts(log.ids, 1, { at: instant(7) }));
    log.step('execution.completed');
    return { log, request };
  }
});

describe('planTask: a director resolves an unknown outcome (Hermit 19.4)', () => {
  /** An attempt whose execution ended unknown and was receipted as such. */
  function unknownReceipted(name: string) {
    const { log, request, grant } = attachedTask(name);
    const completed = executionCompletedDraft(log.ids, { outcome: 'unknown' });
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }), completed);
    log.step('execution.completed');
    log.add(receiptIssuedDraft(log.ids, 'unknown_outcome'));
    log.step('receipt.issued');
    return { log, completed };
  }

  it.each([
    ['succeeded', ['attempt.succeeded', 'step.succeeded', 'task.completed']],
    ['failed', ['attempt.failed', 'step.attempt_closed', 'step.failed', 'task.failed']],
  ] as const)('given a resolution %s, then the attempt settles on it (resolver and evidence), is receipted again, and its receipt ends it', (outcome, ending) => {
    const { log, completed } = unknownReceipted(`r-${outcome}`);
    const resolution = outcomeResolvedDraft(log.ids, completed.event_id, outcome, { resolvedBy: 'director-7' });
    log.add(resolution);
    const settled = log.step('execution.outcome_resolved');
    expect(types(settled)).toEqual(['attempt.receipt_pending']);
    expect(settled.events[0]?.payload).toMatchObject({ result_code: outcome, resolved_by: 'director-7' });
    const evidence = (settled.events[0]?.payload as { evidence_refs: string[] }).evidence_refs;
    expect(evidence).toContain(`event:${resolution.event_id}`);
    expect(evidence.some((ref) => ref.startsWith('receipt:'))).toBe(true);
    // the settled attempt asks for its own receipt; nothing runs again
    const receipt = only(log.handle('attempt.receipt_pending'));
    expect(receipt).toMatchObject({ command: 'receiptIssue', payload: { cause: 'settled' } });
    expect(log.handle('execution.outcome_resolved').commands.every((c) => c.command !== 'executorRun')).toBe(true);
    log.add(receiptIssuedDraft(log.ids, outcome));
    expect(types(log.step('receipt.issued'))).toEqual(ending);
  });

  it('given a resolution before the unknown outcome was receipted, then nothing settles until that receipt is in the log', () => {
    const { log, request, grant } = attachedTask('r-early');
    const completed = executionCompletedDraft(log.ids, { outcome: 'unknown' });
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }), completed);
    log.step('execution.completed');
    log.add(outcomeResolvedDraft(log.ids, completed.event_id, 'succeeded'));
    expect(log.handle('execution.outcome_resolved').events).toEqual([]);
    log.add(receiptIssuedDraft(log.ids, 'unknown_outcome'));
    expect(types(log.step('receipt.issued'))).toEqual(['attempt.unknown_outcome_receipted', 'attempt.receipt_pending']);
  });

  it('given a resolution of another execution, then the attempt stays observing', () => {
    const { log } = unknownReceipted('r-other');
    log.add(outcomeResolvedDraft(log.ids, 'fx-some-other-execution', 'succeeded'));
    const plan = log.handle('execution.outcome_resolved');
    expect(plan.events).toEqual([]);
    expect(plan.commands).toEqual([]);
  });
});

describe('planTask: idempotent from the folded state', () => {
  it('given every step already in the log, when any event is handled again, then nothing is appended and only still-needed commands are issued', () => {
    const { log, request, grant } = attachedTask('i1');
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }));
    log.step('grant.use_claimed');
    for (const type of new Set(log.types())) {
      const plan = log.handle(type);
      expect(plan.events, type).toEqual([]);
      // the attempt moved on: none of the earlier commands is asked for again
      expect(plan.commands, type).toEqual([]);
    }
  });

  it('given facts that arrived before their predecessors were handled, when the last one is handled, then the attempt catches up in one plan', () => {
    const { log, request, grant } = attachedTask('i2');
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(6) }), executionCompletedDraft(log.ids));
    expect(types(log.handle('execution.completed'))).toEqual(['attempt.executing', 'attempt.observing', 'attempt.receipt_pending']);
  });

  it('given a stream without task.created, then planning fails with ORCHESTRATOR_TASK_UNKNOWN', () => {
    const { log } = echoTask('i3');
    log.drafts.splice(0, 3);
    let error: unknown;
    try {
      log.handle('attempt.awaiting_policy');
    } catch (caught) {
      error = caught;
    }
    expect(hasErrorCode(error, 'ORCHESTRATOR_TASK_UNKNOWN')).toBe(true);
  });
});
