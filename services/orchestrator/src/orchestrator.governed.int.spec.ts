import type { ActionRequest, EventDraft } from '@writ/contracts';
import { taskDecider, type TaskEvent } from '@writ/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { append, createRig, disposeRig, events, startApp, storedCommands, waitForCommand, waitForCommandWhere, waitForEvents, waitForIdle, type Rig } from '../test/rig.js';
import {
  approvalCancelledDraft,
  approvalRequestedDraft,
  commandRequest,
  followUpRequest,
  grantIssuedDraft,
  ingressDrafts,
  instant,
  policyEvaluatedDraft,
  taskIds,
  writeRequest,
  type TaskIds,
} from '../test/task-fixtures.js';
import { approvalIdFor } from './application/ids.js';
import { TaskView } from './application/task-view.js';

/**
 * The governed profile through the running service (real JetStream log and
 * commands stream, own subject root): sacred exceptions reach policy, a
 * downgrade continues with the request policy recorded, a revised request
 * supersedes one awaiting approval (its approval cancelled as input drift,
 * an unused grant revoked), a task that ends cancels its pending approval,
 * and approval resolutions are receipted.
 */

let rig: Rig;
const name = (suffix: string) => `${suffix}-${Math.random().toString(16).slice(2, 8)}`;
const subjects = () => rig.config.subjects;
const types = async (ids: TaskIds) => (await events(rig, ids.task_id)).map((e) => e.event_type);

beforeAll(async () => {
  rig = await createRig('governed');
  await startApp(rig);
});

afterAll(async () => {
  await disposeRig(rig);
});

async function awaitingApproval(ids: TaskIds, request: ActionRequest): Promise<string> {
  await append(rig, ids.task_id, ...ingressDrafts(ids, request));
  await waitForCommand(rig, subjects().policyEvaluate, ids.attempt_id);
  await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'local_edit_allowed'));
  await waitForCommand(rig, subjects().approvalRequest, ids.attempt_id);
  const approvalId = approvalIdFor(ids.task_id, ids.attempt_id, 1);
  await append(rig, ids.task_id, approvalRequestedDraft(ids, approvalId));
  return approvalId;
}

function revision(ids: TaskIds, earlier: ActionRequest, argv: string[]): { ids: TaskIds; request: ActionRequest } {
  const later = { task_id: ids.task_id, step_id: `${ids.step_id}-rev`, attempt_id: `${ids.attempt_id}-rev` };
  return { ids: later, request: followUpRequest(ids.task_id, earlier, `${earlier.action_request_id}-rev`, { params: { argv }, supersedes: earlier.action_request_id }) };
}

describe('orchestrator service: the governed profile', () => {
  it('given a task with sacred exceptions, then EvaluatePolicy carries them', async () => {
    const ids = taskIds(name('sacred'));
    const base = writeRequest(ids, 'local_edit_allowed');
    const request = { ...base, task: { ...base.task!, sacred_exceptions: ['.env.example'] } } as ActionRequest;
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    expect(await waitForCommand(rig, subjects().policyEvaluate, ids.attempt_id)).toMatchObject({ ...ids, sacred_exceptions: ['.env.example'] });
  });

  it('given a downgrade without the rewritten request in policy.evaluated, then the attempt fails downgrade_unavailable and no grant is asked for', async () => {
    const ids = taskIds(name('downgrade-missing'));
    const request = writeRequest(ids);
    await append(rig, ids.task_id, ...ingressDrafts(ids, request));
    await waitForCommand(rig, subjects().policyEvaluate, ids.attempt_id);
    await append(rig, ids.task_id, policyEvaluatedDraft(ids, request, 'readonly_analysis', { withoutRewrite: true }));
    const [failed] = await waitForEvents(rig, ids.task_id, 'attempt.failed');
    expect(failed?.payload).toMatchObject({ reason_code: 'downgrade_unavailable' });
    expect(await waitForCommand(rig, subjects().receiptIssue, ids.attempt_id)).toMatchObject({ cause: 'refused' });
    await waitForIdle(rig);
    expect((await storedCommands(rig, subjects().approvalIssueGrant)).filter((c) => c['attempt_id'] === ids.attempt_id)).toEqual([]);
  });

  it('given a revised request superseding one that awaits approval, then the old attempt is superseded, approval.cancel(input_drift) is sent, the new attempt is evaluated, and the invalidation is receipted without re-entering policy', async () => {
    const ids = taskIds(name('supersede'));
    const earlier = commandRequest(ids, ['rm', '-rf', 'build']);
    const approvalId = await awaitingApproval(ids, earlier);
    const later = revision(ids, earlier, ['rm', '-rf', 'build/cache']);
    await append(rig, ids.task_id, ...ingressDrafts(later.ids, later.request, { existingTask: true }));

    const [superseded] = await waitForEvents(rig, ids.task_id, 'attempt.superseded');
    expect(superseded).toMatchObject({ attempt_id: ids.attempt_id, payload: { cause: 'input_drift', superseded_by_attempt_id: later.ids.attempt_id } });
    const cancel = await waitForCommand(rig, subjects().approvalCancel, ids.attempt_id);
    expect(cancel).toEqual({ ...ids, approval_id: approvalId, cause: 'input_drift', reason: expect.any(String), cancelled_by: 'writ-orchestrator' });
    expect(await waitForCommand(rig, subjects().policyEvaluate, later.ids.attempt_id)).toMatchObject({ action_request: { action_request_id: later.request.action_request_id } });

    // the approval service answers the cancel: approval.invalidated (input_drift)
    await append(rig, ids.task_id, approvalCancelledDraft(ids, approvalId, approvalRequestedDraft(ids, approvalId), 'input_drift'));
    expect(
      await waitForCommandWhere(rig, subjects().receiptIssue, (c) => c['attempt_id'] === ids.attempt_id && c['cause'] === 'approval_resolved', 'the invalidation receipt'),
    ).toEqual({ ...ids, cause: 'approval_resolved', approval_id: approvalId });
    await waitForIdle(rig);
    const log = await types(ids);
    expect(log).not.toContain('attempt.policy_reentered');
    expect(log).toEqual(expect.arrayContaining(['step.superseded']));
    expect((await storedCommands(rig, subjects().approvalIssueGrant)).filter((c) => c['attempt_id'] === ids.attempt_id)).toEqual([]);
  });

  it('given a revised request superseding an authorized attempt whose grant is attached, then the grant is revoked in the log before the attempt is superseded', async () => {
    const ids = taskIds(name('supersede-grant'));
    const earlier = commandRequest(ids, ['sh', '-c', 'echo hello > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(ids, earlier));
    await waitForCommand(rig, subjects().policyEvaluate, ids.attempt_id);
    await append(rig, ids.task_id, policyEvaluatedDraft(ids, earlier, 'local_edit_allowed'));
    await waitForCommand(rig, subjects().approvalIssueGrant, ids.attempt_id);
    await append(rig, ids.task_id, grantIssuedDraft(ids, earlier));
    await waitForCommand(rig, subjects().executorRun, ids.attempt_id);

    const later = revision(ids, earlier, ['sh', '-c', 'echo bye > out.txt']);
    await append(rig, ids.task_id, ...ingressDrafts(later.ids, later.request, { existingTask: true }));
    await waitForEvents(rig, ids.task_id, 'attempt.superseded');
    const log = await events(rig, ids.task_id);
    const revoked = log.findIndex((e) => e.event_type === 'grant.revoked');
    expect(revoked).toBeGreaterThan(-1);
    expect(revoked).toBeLessThan(log.findIndex((e) => e.event_type === 'attempt.superseded'));
    expect(TaskView.fold(ids.task_id, log).grants.get(`gnt-${ids.attempt_id}`)?.state.status).toBe('revoked');
  });

  it('given a pending approval, when its task is cancelled, then the cell is closed and approval.cancel(task_ended) is sent', async () => {
    const ids = taskIds(name('task-ended'));
    const request = commandRequest(ids, ['rm', '-rf', 'build']);
    const approvalId = await awaitingApproval(ids, request);
    const state = TaskView.fold(ids.task_id, await events(rig, ids.task_id)).task;
    const [cancelled] = taskDecider.decide({ type: 'cancel-task', data: { reason: 'the owner stopped it' }, metadata: { now: instant(8, new Date().toISOString()) } }, state) as TaskEvent[];
    const draft: EventDraft = {
      event_id: `fx-${ids.task_id}-cancelled`,
      schema_version: 1,
      event_type: cancelled!.type,
      entity_type: 'task',
      entity_id: ids.task_id,
      occurred_at: new Date().toISOString(),
      actor_type: 'supervisor',
      actor_id: 'director-1',
      payload: cancelled!.data as Record<string, unknown>,
      causation_id: null,
      correlation_id: ids.task_id,
      idempotency_key: `${ids.task_id}:task.cancelled`,
    };
    await append(rig, ids.task_id, draft);
    expect(await waitForCommand(rig, subjects().approvalCancel, ids.attempt_id)).toMatchObject({ ...ids, approval_id: approvalId, cause: 'task_ended' });
    expect(await waitForCommandWhere(rig, subjects().executorCloseCell, (c) => c['task_id'] === ids.task_id, 'the close of the cell')).toEqual({
      task_id: ids.task_id,
      reason: 'task.cancelled',
    });
  });
});
