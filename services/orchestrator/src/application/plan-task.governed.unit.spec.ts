import { canonicalJson, sha256Hex } from '@writ/crypto';
import type { ActionRequest, EventDraft, PolicyEvaluated } from '@writ/contracts';
import { taskDecider, type TaskEvent } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { about, PlanLog, typesOf } from '../../test/plan-log.js';
import {
  approvalCancelledDraft,
  approvalRequestedDraft,
  approvalResolvedDraft,
  commandRequest,
  executionCompletedDraft,
  followUpRequest,
  grantIssuedDraft,
  ingressDrafts,
  instant,
  logged,
  policyEvaluatedDraft,
  receiptIssuedDraft,
  taskIds,
  useClaimedDraft,
  writeRequest,
  type TaskIds,
} from '../../test/task-fixtures.js';
import { approvalIdFor } from './ids.js';
import type { Plan, PlannedCommand } from './plan-task.js';
import { TaskView } from './task-view.js';

/**
 * The governed profile in the orchestrator: downgrade continuation from the
 * log, Sacred Scope exceptions threaded to policy, newly bound input
 * superseding an earlier request, approvals cancelled when their task ends,
 * and every approval resolution receipted.
 */

const only = (plan: Plan): PlannedCommand => {
  expect(plan.commands).toHaveLength(1);
  return plan.commands[0] as PlannedCommand;
};

function rmTask(name: string): { log: PlanLog; request: ActionRequest } {
  const ids = taskIds(name);
  const request = commandRequest(ids, ['rm', '-rf', 'build']);
  return { log: new PlanLog(ids).add(...ingressDrafts(ids, request)), request };
}

function echoTask(name: string): { log: PlanLog; request: ActionRequest } {
  const ids = taskIds(name);
  const request = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
  return { log: new PlanLog(ids).add(...ingressDrafts(ids, request)), request };
}

/** Policy requires approval for `rm -rf build`; the approval is requested (pending) unless told otherwise. */
function awaitingApproval(name: string, options: { requested?: boolean } = {}) {
  const { log, request } = rmTask(name);
  log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
  log.step('policy.evaluated');
  const approvalId = approvalIdFor(log.ids.task_id, log.ids.attempt_id, 1);
  const requested = approvalRequestedDraft(log.ids, approvalId);
  if (options.requested !== false) log.add(requested);
  return { log, request, approvalId, requested };
}

/** The ids of a later request's step and attempt in the same task. */
function laterIds(ids: TaskIds, suffix = 'rev'): TaskIds {
  return { task_id: ids.task_id, step_id: `${ids.step_id}-${suffix}`, attempt_id: `${ids.attempt_id}-${suffix}` };
}

/** Ingress accepts a revised request that supersedes `earlier`; returns its ids and request. */
function supersede(log: PlanLog, earlier: ActionRequest, changes: Partial<ActionRequest> = {}) {
  const ids = laterIds(log.ids);
  const request = followUpRequest(log.ids.task_id, earlier, `${earlier.action_request_id}-rev`, {
    params: { argv: ['rm', '-rf', 'build/cache'] },
    supersedes: earlier.action_request_id,
    ...changes,
  });
  log.add(...ingressDrafts(ids, request, { existingTask: true, at: instant(5) }));
  return { ids, request };
}

describe('planTask: downgrade continues with the rewritten request from the log (Hermit 11.4)', () => {
  function downgraded(name: string, mutate?: (payload: PolicyEvaluated) => PolicyEvaluated) {
    const ids = taskIds(name);
    const request = writeRequest(ids);
    const evaluated = policyEvaluatedDraft(ids, request, 'readonly_analysis');
    const payload = mutate === undefined ? evaluated.payload : (mutate(evaluated.payload as unknown as PolicyEvaluated) as unknown as Record<string, unknown>);
    const log = new PlanLog(ids).add(...ingressDrafts(ids, request), { ...evaluated, payload } as EventDraft);
    return { log, request, evaluated: payload as unknown as PolicyEvaluated };
  }

  it('given policy.evaluated carries the rewritten request its ref names, then the attempt continues with exactly that request', () => {
    const { log, evaluated } = downgraded('dg1');
    const plan = log.step('policy.evaluated');
    expect(typesOf(plan)).toEqual(['attempt.downgraded']);
    expect(plan.events[0]?.payload).toMatchObject({ action_request: evaluated.rewritten_action_request, restricted_mode: 'readonly' });
    expect(only(log.handle('attempt.downgraded'))).toMatchObject({ command: 'approvalIssueGrant', payload: { action_request: evaluated.rewritten_action_request } });
  });

  it('given the ref is the content hash of the rewritten request, then it is accepted too', () => {
    const { log } = downgraded('dg2', (payload) => ({
      ...payload,
      policy_result: {
        ...payload.policy_result,
        downgrade: { ...payload.policy_result.downgrade!, rewritten_action_request_ref: `sha256:${sha256Hex(canonicalJson(payload.rewritten_action_request))}` },
      },
    }));
    expect(typesOf(log.step('policy.evaluated'))).toEqual(['attempt.downgraded']);
  });

  it.each([
    ['absent', (payload: PolicyEvaluated) => ({ ...payload, rewritten_action_request: undefined })],
    ['named by another ref', (payload: PolicyEvaluated) => ({ ...payload, rewritten_action_request: { ...payload.rewritten_action_request!, action_request_id: 'ar-forged' } })],
    [
      'of another task',
      (payload: PolicyEvaluated) => {
        const { task: _task, ...rewritten } = payload.rewritten_action_request!;
        return { ...payload, rewritten_action_request: { ...rewritten, task_id: 'tsk-other' } };
      },
    ],
  ])('given the rewritten request is %s, then the attempt fails downgrade_unavailable before any grant and is receipted as refused', (_case, mutate) => {
    const { log } = downgraded(`dg-${_case.replace(/\W/g, '')}`, (payload) => {
      const changed = mutate(payload);
      if (changed.rewritten_action_request === undefined) delete (changed as { rewritten_action_request?: unknown }).rewritten_action_request;
      return changed;
    });
    const plan = log.step('policy.evaluated');
    expect(typesOf(plan)).toEqual(['attempt.failed']);
    expect(plan.events[0]?.payload).toMatchObject({ reason_code: 'downgrade_unavailable' });
    expect(only(log.handle('attempt.failed'))).toMatchObject({ command: 'receiptIssue', payload: { cause: 'refused' } });
  });
});

describe('planTask: Sacred Scope exceptions reach policy', () => {
  it('given a task created with sacred_exceptions, then EvaluatePolicy carries them', () => {
    const ids = taskIds('sx1');
    const base = writeRequest(ids, 'local_edit_allowed');
    const request = { ...base, task: { ...base.task!, sacred_exceptions: ['.env.example'] } } as ActionRequest;
    const log = new PlanLog(ids).add(...ingressDrafts(ids, request));
    expect(only(log.handle('attempt.awaiting_policy')).payload).toMatchObject({ files_owned: ['**'], sacred_exceptions: ['.env.example'] });
  });

  it('given a task without them, then EvaluatePolicy has no sacred_exceptions field', () => {
    const { log } = echoTask('sx2');
    expect(only(log.handle('attempt.awaiting_policy')).payload).not.toHaveProperty('sacred_exceptions');
  });
});

describe('planTask: a newly bound request supersedes an earlier one (Hermit 11.5, 16.7)', () => {
  it('given the earlier attempt awaits its approval, then it is superseded (input_drift), its step is superseded by the new one, its approval is cancelled, and the new attempt goes to policy', () => {
    const { log, request, approvalId } = awaitingApproval('su1');
    const { ids, request: revised } = supersede(log, request);

    const plan = log.step('attempt.awaiting_policy');
    expect(typesOf(plan)).toEqual(['attempt.superseded', 'step.attempt_closed', 'step.superseded']);
    expect(plan.events[0]).toMatchObject({ attempt_id: log.ids.attempt_id, payload: { cause: 'input_drift', superseded_by_attempt_id: ids.attempt_id } });
    expect(plan.events[2]).toMatchObject({ entity_id: log.ids.step_id, payload: { superseded_by_step_id: ids.step_id } });
    expect(only(plan)).toMatchObject({ command: 'policyEvaluate', payload: { attempt_id: ids.attempt_id, action_request: { action_request_id: revised.action_request_id } } });

    // the supersession, back from the log, cancels the pending approval: it can never become a grant
    const cancel = only(log.handle('attempt.superseded'));
    expect(cancel).toMatchObject({
      command: 'approvalCancel',
      msgId: `${log.ids.attempt_id}:cmd:approval.cancel:${approvalId}`,
      payload: { ...log.ids, approval_id: approvalId, cause: 'input_drift', cancelled_by: 'writ-orchestrator' },
    });

    // approval answers with approval.invalidated: the superseded attempt does not re-enter policy; the resolution is receipted
    log.add(approvalCancelledDraft(log.ids, approvalId, approvalRequestedDraft(log.ids, approvalId), 'input_drift', { at: instant(6) }));
    const invalidated = log.step('approval.invalidated');
    expect(invalidated.events).toEqual([]);
    expect(only(invalidated)).toMatchObject({ command: 'receiptIssue', payload: { attempt_id: log.ids.attempt_id, cause: 'approval_resolved', approval_id: approvalId } });
    expect(log.types()).not.toContain('attempt.policy_reentered');

    // the new attempt waits for its own approval, never the old one
    log.add(policyEvaluatedDraft(ids, revised, 'local_edit_allowed', { at: instant(7) }));
    expect(typesOf(log.step('policy.evaluated'))).toEqual(['attempt.awaiting_approval']);
    const own = approvalIdFor(ids.task_id, ids.attempt_id, 1);
    expect(own).not.toBe(approvalId);
    expect(only(log.handle(about('attempt.awaiting_approval', ids.attempt_id)))).toMatchObject({ command: 'approvalRequest', payload: { attempt_id: ids.attempt_id, approval_id: own } });
  });

  it('given the old approval was granted before the supersession was handled, then it still supersedes: no authorization, no grant from it', () => {
    const { log, request, approvalId, requested } = awaitingApproval('su2');
    log.add(approvalResolvedDraft(log.ids, approvalId, requested, 'grant', { at: instant(4) }));
    supersede(log, request);
    const plan = log.step('attempt.awaiting_policy');
    expect(typesOf(plan)).toEqual(['attempt.superseded', 'step.attempt_closed', 'step.superseded']);
    expect(log.types()).not.toContain('attempt.authorized');
    // the granted approval is not pending: nothing to cancel; and no grant is asked for the superseded attempt
    expect(log.handle('attempt.superseded').commands).toEqual([]);
    expect(log.handle('approval.granted').commands.filter((c) => c.command !== 'receiptIssue')).toEqual([]);
  });

  it('given the earlier attempt awaits policy, then it is superseded and a late policy.evaluated for it changes nothing', () => {
    const { log, request } = rmTask('su3');
    supersede(log, request);
    expect(typesOf(log.step('attempt.awaiting_policy'))).toEqual(['attempt.superseded', 'step.attempt_closed', 'step.superseded']);
    expect(log.handle('attempt.superseded').commands).toEqual([]);
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed', { at: instant(6) }));
    const late = log.handle('policy.evaluated');
    expect(late.events).toEqual([]);
    expect(late.commands).toEqual([]);
  });

  it('given the earlier attempt was authorized with an unused grant, then the grant is revoked before the attempt is superseded, and nothing asks the executor to run it', () => {
    const { log, request } = echoTask('su4');
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
    log.step('policy.evaluated');
    log.add(grantIssuedDraft(log.ids, request, { at: instant(3) }));
    log.step('grant.issued');
    expect(log.types()).toContain('attempt.grant_attached');
    supersede(log, request, { params: { argv: ['sh', '-c', 'echo bye > out.txt'] } });
    const plan = log.step('attempt.awaiting_policy');
    expect(typesOf(plan)).toEqual(['grant.revoked', 'attempt.superseded', 'step.attempt_closed', 'step.superseded']);
    expect(plan.events[0]).toMatchObject({ entity_type: 'grant', entity_id: `gnt-${log.ids.attempt_id}`, attempt_id: log.ids.attempt_id, payload: { revoked_by: 'writ-orchestrator' } });
    expect(log.view().grants.get(`gnt-${log.ids.attempt_id}`)?.state.status).toBe('revoked');
    expect(log.handle(about('attempt.grant_attached', log.ids.attempt_id)).commands).toEqual([]);
  });

  it('given the earlier attempt already claimed its grant (executing), then it runs on, and the new attempt fails supersedes_too_late before policy, receipted as refused', () => {
    const { log, request } = echoTask('su5');
    log.add(policyEvaluatedDraft(log.ids, request, 'local_edit_allowed'));
    log.step('policy.evaluated');
    const grant = grantIssuedDraft(log.ids, request, { at: instant(3) });
    log.add(grant);
    log.step('grant.issued');
    // the claim is in the log, but the orchestrator has not handled it yet
    log.add(useClaimedDraft(log.ids, grant, request, { at: instant(4) }));
    const { ids } = supersede(log, request, { params: { argv: ['sh', '-c', 'echo bye > out.txt'] } });
    const plan = log.step('attempt.awaiting_policy');
    expect(typesOf(plan)).toEqual(['attempt.failed', 'attempt.executing']);
    expect(plan.events[0]).toMatchObject({ attempt_id: ids.attempt_id, payload: { reason_code: 'supersedes_too_late' } });
    expect(plan.commands).toEqual([]);
    expect(only(log.handle(about('attempt.failed', ids.attempt_id)))).toMatchObject({ command: 'receiptIssue', payload: { attempt_id: ids.attempt_id, cause: 'refused' } });
    expect(log.types()).not.toContain('attempt.superseded');
  });

  it('given supersedes names no request of the task, then the new attempt fails supersedes_unknown', () => {
    const { log, request } = rmTask('su6');
    const { ids } = supersede(log, request, { supersedes: 'ar-nowhere' });
    const plan = log.step('attempt.awaiting_policy');
    expect(typesOf(plan)).toEqual(['attempt.failed']);
    expect(plan.events[0]).toMatchObject({ attempt_id: ids.attempt_id, payload: { reason_code: 'supersedes_unknown' } });
  });

  it('given the earlier attempt ended before running (denied), then there is nothing to supersede and the new attempt proceeds', () => {
    const { log, request, approvalId, requested } = awaitingApproval('su7');
    log.add(approvalResolvedDraft(log.ids, approvalId, requested, 'deny', { at: instant(4) }));
    log.step('approval.denied');
    const { ids } = supersede(log, request);
    const plan = log.step('attempt.awaiting_policy');
    expect(plan.events.filter((e) => e.attempt_id === ids.attempt_id)).toEqual([]);
    expect(only(plan)).toMatchObject({ command: 'policyEvaluate', payload: { attempt_id: ids.attempt_id } });
  });

  it('given the approval request was still on its way when the attempt was superseded, then its approval.requested is cancelled at once', () => {
    const { log, request, approvalId, requested } = awaitingApproval('su8', { requested: false });
    supersede(log, request);
    log.step('attempt.awaiting_policy');
    expect(log.handle('attempt.superseded').commands).toEqual([]);
    log.add(requested);
    expect(only(log.step('approval.requested'))).toMatchObject({ command: 'approvalCancel', payload: { approval_id: approvalId, cause: 'input_drift' } });
  });

  it('given the superseding attempt succeeds, then the task completes: a superseded step is no failure', () => {
    const { log, request } = awaitingApproval('su9');
    const { ids, request: revised } = supersede(log, request, { params: { argv: ['sh', '-c', 'echo hello > out.txt'] } });
    log.step('attempt.awaiting_policy');
    log.add(policyEvaluatedDraft(ids, revised, 'local_edit_allowed', { at: instant(6) }));
    log.step('policy.evaluated');
    const grant = grantIssuedDraft(ids, revised, { at: instant(7) });
    log.add(grant);
    log.step('grant.issued');
    log.add(useClaimedDraft(ids, grant, revised, { at: instant(8) }), executionCompletedDraft(ids, { at: instant(9) }));
    log.step('execution.completed');
    log.add(receiptIssuedDraft(ids, 'succeeded'));
    expect(typesOf(log.step('receipt.issued'))).toEqual(['attempt.succeeded', 'step.succeeded', 'task.completed']);
  });

  it('given a superseded attempt in the log, when every event is handled again, then nothing more is appended', () => {
    const { log, request } = awaitingApproval('su10');
    supersede(log, request);
    log.step('attempt.awaiting_policy');
    const events = logged(log.drafts);
    for (const event of events) {
      const again = log.handle((e) => e.task_seq === event.task_seq);
      expect(again.events, event.event_type).toEqual([]);
    }
  });
});

describe('planTask: a task that ends cancels its pending approvals', () => {
  function cancelTaskDraft(log: PlanLog): EventDraft {
    const state = TaskView.fold(log.ids.task_id, logged(log.drafts)).task;
    const [event] = taskDecider.decide({ type: 'cancel-task', data: { reason: 'the owner stopped it' }, metadata: { now: instant(8) } }, state) as TaskEvent[];
    return {
      event_id: `fx-${log.ids.task_id}-cancelled`,
      schema_version: 1,
      event_type: event!.type,
      entity_type: 'task',
      entity_id: log.ids.task_id,
      occurred_at: instant(8),
      actor_type: 'supervisor',
      actor_id: 'director-1',
      payload: event!.data as Record<string, unknown>,
      causation_id: null,
      correlation_id: log.ids.task_id,
      idempotency_key: `${log.ids.task_id}:task.cancelled`,
    };
  }

  it('given a pending approval, when the task is cancelled, then its cell is closed and the approval is cancelled (task_ended)', () => {
    const { log, approvalId } = awaitingApproval('te1');
    log.add(cancelTaskDraft(log));
    const plan = log.handle('task.cancelled');
    expect(plan.commands.map((c) => c.command)).toEqual(['executorCloseCell', 'approvalCancel']);
    expect(plan.commands[1]).toMatchObject({
      msgId: `${log.ids.attempt_id}:cmd:approval.cancel:${approvalId}`,
      payload: { ...log.ids, approval_id: approvalId, cause: 'task_ended' },
    });
  });

  it('given the approval was already resolved, when the task ends, then only the cell is closed', () => {
    const { log, approvalId, requested } = awaitingApproval('te2');
    log.add(approvalResolvedDraft(log.ids, approvalId, requested, 'deny'));
    log.step('approval.denied');
    log.add(receiptIssuedDraft(log.ids, 'refused', { cause: 'approval_denied' }));
    log.step('receipt.issued');
    expect(only(log.handle('task.failed')).command).toBe('executorCloseCell');
  });

  it('given an approval requested after its task ended, then it is cancelled at once (task_ended)', () => {
    const { log, approvalId, requested } = awaitingApproval('te3', { requested: false });
    log.add(cancelTaskDraft(log));
    expect(log.handle('task.cancelled').commands.map((c) => c.command)).toEqual(['executorCloseCell']);
    log.add(requested);
    expect(only(log.handle('approval.requested'))).toMatchObject({ command: 'approvalCancel', payload: { approval_id: approvalId, cause: 'task_ended' } });
  });
});

describe('planTask: approval resolutions are receipted', () => {
  it.each([
    ['granted', 'approval.granted'],
    ['denied', 'approval.denied'],
  ] as const)('given an approval %s, then receipt.issue approval_resolved names that approval, once', (_how, type) => {
    const { log, approvalId, requested } = awaitingApproval(`ar-${_how}`);
    log.add(approvalResolvedDraft(log.ids, approvalId, requested, type === 'approval.granted' ? 'grant' : 'deny'));
    const plan = log.step(type);
    expect(only(plan)).toEqual({
      command: 'receiptIssue',
      msgId: `${log.ids.attempt_id}:cmd:receipt.issue:approval_resolved:${approvalId}`,
      payload: { ...log.ids, cause: 'approval_resolved', approval_id: approvalId },
    });
    // once its receipt is in the log, handling the resolution again asks for nothing
    log.add(receiptIssuedDraft(log.ids, type === 'approval.granted' ? 'succeeded' : 'refused', { cause: 'approval_resolved', approvalId }));
    expect(log.handle(type).commands).toEqual([]);
  });

  it('given the approval_resolved receipt lands before the denial is handled, then the denial is still receipted and only its own receipt closes the attempt', () => {
    const { log, approvalId, requested } = awaitingApproval('ar3');
    log.add(approvalResolvedDraft(log.ids, approvalId, requested, 'deny'));
    log.step('approval.denied');
    log.add(receiptIssuedDraft(log.ids, 'refused', { cause: 'approval_resolved', approvalId }));
    expect(log.step('receipt.issued').events).toEqual([]);
    expect(only(log.handle('attempt.approval_denied'))).toMatchObject({ command: 'receiptIssue', payload: { cause: 'approval_denied' } });
    log.add(receiptIssuedDraft(log.ids, 'refused', { cause: 'approval_denied' }));
    expect(typesOf(log.step('receipt.issued'))).toEqual(['step.attempt_closed', 'step.failed', 'task.failed']);
  });

  it('given an expired approval, then it is receipted and the attempt ends approval_expired', () => {
    const { log, approvalId, requested } = awaitingApproval('ar4');
    const expired: EventDraft = {
      ...requested,
      event_id: `fx-${approvalId}-expired`,
      event_type: 'approval.expired',
      payload: { resolved_by: 'writ-approval', at: instant(7200) },
      idempotency_key: `${approvalId}:approval.expired`,
    };
    log.add(expired);
    const plan = log.step('approval.expired', instant(7201));
    expect(typesOf(plan)).toEqual(['attempt.approval_expired']);
    expect(only(plan)).toMatchObject({ command: 'receiptIssue', payload: { cause: 'approval_resolved', approval_id: approvalId } });
  });
});

describe("a director's decision without authority (DESIGN invariant 9)", () => {
  function forgedGrant(name: string) {
    const { log, approvalId, requested } = awaitingApproval(name);
    const forged = approvalResolvedDraft(log.ids, approvalId, requested, 'grant', { unsigned: true, at: instant(4) });
    log.add(forged);
    log.refused.set(forged.event_id, {
      event_id: forged.event_id,
      event_type: 'approval.granted',
      approval_id: approvalId,
      code: 'APPROVAL_RESOLUTION_UNSIGNED',
      message: 'approval.granted carries no director signature',
      details: {},
    });
    return { log, approvalId, forged };
  }

  it('given a refused approval.granted, when handled, then its refusal is recorded and nothing resumes, is granted or receipted', () => {
    // given
    const { log, approvalId, forged } = forgedGrant('fg1');
    // when
    const plan = log.step('approval.granted');
    // then
    expect(typesOf(plan)).toEqual(['approval.resolution_refused']);
    expect(plan.events[0]).toMatchObject({
      entity_type: 'approval',
      entity_id: approvalId,
      payload: { resolution_event_id: forged.event_id, code: 'APPROVAL_RESOLUTION_UNSIGNED', refused_by: 'writ-orchestrator' },
    });
    expect(plan.commands).toEqual([]);
    const view = log.view();
    expect(view.approvals.get(approvalId)?.state.status).toBe('pending');
    expect(view.attempts.get(log.ids.attempt_id)?.state.status).toBe('awaiting_approval');
    expect(view.ignored).toContainEqual(expect.objectContaining({ event_type: 'approval.granted', reason: 'unauthorized' }));
  });

  it('given the refusal is on the record, when the log is handled again, then nothing more is appended', () => {
    // given
    const { log } = forgedGrant('fg2');
    log.step('approval.granted');
    // when
    const again = log.handle('approval.resolution_refused');
    // then
    expect(again.events).toEqual([]);
    expect(again.commands).toEqual([]);
  });
});

