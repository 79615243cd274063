import { describe, expect, it } from 'vitest';
import {
  actionRequest,
  approvalPath,
  approvalRequested,
  approvalResolved,
  attemptApprovalDenied,
  attemptAwaitingApproval,
  attemptPolicyDenied,
  attemptReceiptPending,
  attemptFailed,
  attemptObserving,
  executionCompleted,
  fakeJws,
  happyPath,
  ingressAccepted,
  ingressReceived,
  ingressRejected,
  policyEvaluated,
  receiptIssued,
  storyIds,
  taskOpening,
  toProjectedEvents,
  attemptExecuting,
  grantUseClaimed,
  attemptAuthorized,
  grantIssued,
  attemptGrantAttached,
  type StoryEvent,
} from '../../../test/governed-path.fixture.js';
import { foldStory, statusTrail } from '../../../test/memory-store.js';
import { actionsView } from './actions.view.js';

const ids = storyIds('a1');
const opening = (): StoryEvent[] => [ingressReceived(ids, fakeJws(actionRequest(ids)), 1), ...taskOpening(ids, actionRequest(ids), 2), ingressAccepted(ids, 3)];

describe('actions view: status along the governed path', () => {
  it('follows a direct allow to succeeded, with every id that decided and ran it', async () => {
    // given the events of an allowed, executed, receipted action
    const events = toProjectedEvents(happyPath(ids));
    // when they are folded in log order
    const trail = await statusTrail(events, ids.actionRequest);
    const row = (await foldStory(events)).row('actions', ids.actionRequest);
    // then the status walks the documented path and the row names the whole chain
    expect(trail).toEqual(['received', 'awaiting_policy', 'authorized', 'executing', 'receipt_pending', 'succeeded']);
    expect(row).toMatchObject({
      status: 'succeeded',
      principal_id: ids.principal,
      ingress_id: ids.ingress,
      task_id: ids.task,
      step_id: ids.step,
      attempt_id: ids.attempt,
      action_class: 'write_local',
      policy_outcome: 'allow',
      risk_band: 'low',
      policy_result_id: ids.policyResult,
      approval_id: null,
      grant_id: ids.grant,
      receipt_id: ids.receipt,
      reason_code: null,
      updated_at: '2030-01-01T00:00:14.000Z',
    });
  });

  it('pauses at awaiting_approval with the approval id, and a denial ends it as denied', async () => {
    const events = toProjectedEvents([...approvalPath(ids), approvalResolved(ids, 'denied', 7), attemptApprovalDenied(ids, 8), receiptIssued(ids, 'failed', 9)]);
    const trail = await statusTrail(events, ids.actionRequest);
    const row = (await foldStory(events)).row('actions', ids.actionRequest);
    expect(trail).toEqual(['received', 'awaiting_policy', 'awaiting_approval', 'denied']);
    // a denial is receipted too: the receipt id arrives after the final status, which stays
    expect(row).toMatchObject({ status: 'denied', approval_id: ids.approval, policy_outcome: 'require_approval', reason_code: 'approval_denied', receipt_id: ids.receipt });
  });

  it('reports a policy denial with the first reason code', async () => {
    const events = toProjectedEvents([...opening(), policyEvaluated(ids, 'deny', 4), attemptPolicyDenied(ids, 5)]);
    const row = (await foldStory(events)).row('actions', ids.actionRequest);
    expect(row).toMatchObject({ status: 'denied', policy_outcome: 'deny', risk_band: 'high', reason_code: 'sacred_scope' });
  });

  it('reports an uncertain execution as unknown_outcome until it settles on evidence', async () => {
    const uncertain = [
      ...opening(),
      policyEvaluated(ids, 'allow', 4),
      attemptAuthorized(ids, 5),
      grantIssued(ids, 6),
      attemptGrantAttached(ids, 7),
      grantUseClaimed(ids, 8),
      attemptExecuting(ids, 9),
      executionCompleted(ids, 'unknown', 10),
      attemptObserving(ids, 'unknown', 11),
    ];
    const settled = [...uncertain, attemptReceiptPending(ids, 'failed', 12), receiptIssued(ids, 'failed', 13), attemptFailed(ids, 14)];
    expect((await foldStory(toProjectedEvents(uncertain))).row('actions', ids.actionRequest)?.status).toBe('unknown_outcome');
    expect(await statusTrail(toProjectedEvents(settled), ids.actionRequest)).toEqual([
      'received',
      'awaiting_policy',
      'authorized',
      'executing',
      'unknown_outcome',
      'receipt_pending',
      'failed',
    ]);
    expect((await foldStory(toProjectedEvents(settled))).row('actions', ids.actionRequest)).toMatchObject({ reason_code: 'exit_nonzero', receipt_id: ids.receipt });
  });

  it('reports a rejected ingress with its code', async () => {
    const events = toProjectedEvents([ingressReceived(ids, fakeJws(actionRequest(ids)), 1), ingressRejected(ids, 'INGRESS_SIGNATURE_INVALID', { withActionId: false })]);
    const row = (await foldStory(events)).row('actions', ids.actionRequest);
    expect(row).toMatchObject({ status: 'rejected', reason_code: 'INGRESS_SIGNATURE_INVALID', ingress_id: ids.ingress, principal_id: ids.principal, task_id: null });
  });

  it('records a rejection that names the request even when the raw body could not be read', async () => {
    const events = toProjectedEvents([ingressReceived(ids, 'not a jws', 1), ingressRejected(ids, 'INGRESS_REQUEST_INVALID', { withActionId: true })]);
    const row = (await foldStory(events)).row('actions', ids.actionRequest);
    expect(row).toMatchObject({ status: 'rejected', reason_code: 'INGRESS_REQUEST_INVALID', received_at: null });
  });
});

describe('actions view: what unverified input can never do', () => {
  it('an unauthenticated request reusing a bound action id changes nothing', async () => {
    // given an action bound to its task and running
    const story = happyPath(ids).slice(0, 12);
    const before = (await foldStory(toProjectedEvents(story))).row('actions', ids.actionRequest);
    // when someone else submits a request claiming the same id, and ingress rejects it
    const forger = { ...storyIds('forger'), actionRequest: ids.actionRequest };
    const forged = [ingressReceived(forger, fakeJws(actionRequest(forger)), 20), ingressRejected(forger, 'INGRESS_SIGNATURE_INVALID', { withActionId: true, seconds: 21 })];
    const after = (await foldStory(toProjectedEvents([...story, ...forged]))).row('actions', ids.actionRequest);
    // then the real action's row is untouched
    expect(after).toEqual(before);
  });

  it('a rejection of another ingress does not mark the first one rejected', async () => {
    const other = { ...storyIds('other'), actionRequest: ids.actionRequest };
    const events = toProjectedEvents([
      ingressReceived(ids, fakeJws(actionRequest(ids)), 1),
      ingressRejected(other, 'INGRESS_STALE', { withActionId: false, seconds: 2 }),
    ]);
    expect((await foldStory(events)).row('actions', ids.actionRequest)?.status).toBe('received');
  });

  it('the same action id used in another task does not re-bind the action', async () => {
    const first = happyPath(ids);
    const intruder = { ...storyIds('intruder'), actionRequest: ids.actionRequest };
    const second = taskOpening(intruder, actionRequest(intruder), 30);
    const row = (await foldStory(toProjectedEvents([...first, ...second]))).row('actions', ids.actionRequest);
    expect(row).toMatchObject({ status: 'succeeded', task_id: ids.task, attempt_id: ids.attempt });
  });
});

describe('actions view: fold rules', () => {
  it('a new attempt of the same request re-binds the action and clears the previous attempt ids', async () => {
    const story = [...approvalPath(ids), approvalResolved(ids, 'denied', 7), attemptApprovalDenied(ids, 8)];
    const retry = { ...ids, attempt: `${ids.attempt}-2`, tag: `${ids.tag}-2` };
    const reopened = taskOpening(retry, actionRequest(ids), 9).filter((e) => e.draft.event_type === 'attempt.awaiting_policy');
    const row = (await foldStory(toProjectedEvents([...story, ...reopened]))).row('actions', ids.actionRequest);
    expect(row).toMatchObject({ status: 'awaiting_policy', attempt_id: retry.attempt, approval_id: null, policy_result_id: null, reason_code: null });
  });

  it('returns the same row for an event that changes nothing (nothing to write or publish)', async () => {
    const events = toProjectedEvents([...opening(), policyEvaluated(ids, 'allow', 4), attemptAwaitingApproval(ids, 5), approvalRequested(ids, 6)]);
    const store = await foldStory(events.slice(0, -1));
    const row = store.row('actions', ids.actionRequest);
    const last = events.at(-1)!;
    expect(actionsView.locate(last)).toBeUndefined();
    expect(actionsView.fold(row, last)).toBe(row);
  });

  it('ignores events of aggregates it does not project', async () => {
    const [received] = toProjectedEvents([ingressReceived(ids, fakeJws(actionRequest(ids)), 1)]);
    const principalEvent = { ...received!, aggregate: { type: 'principal', id: 'svc-1' } };
    expect(actionsView.locate(principalEvent)).toBeUndefined();
  });
});
