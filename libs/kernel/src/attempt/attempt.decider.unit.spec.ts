import { describe, expect, it } from 'vitest';
import { A } from '../../test/attempt-flow.js';
import { at, deciderSpec } from '../../test/decider-spec.js';
import { command, request } from '../../test/samples.js';
import { fold } from '../shared/decider.js';
import { attemptDecider, type AttemptCommand, type AttemptRecord } from './attempt.decider.js';
import type { AttemptEvent } from './attempt.events.js';

const spec = deciderSpec(attemptDecider);

/** Runs commands in order, returning every event (throws on the first refused command). */
function run(commands: readonly AttemptCommand[], from: readonly AttemptEvent[] = []): AttemptEvent[] {
  const events = [...from];
  for (const c of commands) events.push(...attemptDecider.decide(c, fold(attemptDecider, events)));
  return events;
}
const stateOf = (events: readonly AttemptEvent[]) => fold(attemptDecider, events) as AttemptRecord;

const toPolicy = [A.create(), A.lease(), A.submit(2)];
const approvalWait = [...toPolicy, A.policy(3, { outcome: 'require_approval', risk_band: 'high', witness_required: true }, { approval_id: 'approval-1' })];

describe('attempt decider: a failed attempt states only what its execution record shows (issue 13)', () => {
  const executing = [...toPolicy, A.policy(3, { outcome: 'allow' }), A.grant(4), A.execute(5)];
  it.each([
    ['completed', 'execution_failed', 'the action ran and failed'],
    ['errored', 'execution_errored', 'the action did not complete: it could not start, or it was stopped (its execution record says which)'],
  ] as const)('given outcome %s settled as failed, when the receipt is recorded, then attempt.failed %s', (outcome, code, reason) => {
    const events = run([A.outcome(6, outcome), A.settle(7, 'failed'), A.receipt(8)], run(executing));
    expect(events.at(-1)).toMatchObject({ type: 'attempt.failed', data: { reason_code: code, reason } });
    // Never "ran" for an action that did not complete.
    if (outcome === 'errored') expect(JSON.stringify(events.at(-1))).not.toContain('ran');
  });
});

describe('attempt decider: a renewal in place of a grant whose every use never started (issue 13)', () => {
  // Grant 1 lives 300 s from second 4: it has expired at second 400.
  const executing = run([...toPolicy, A.policy(3, { outcome: 'allow' }), A.grant(4), A.execute(5)]);

  it('given an executing attempt whose only use was proven not run and whose grant expired, when the renewal is attached, then attempt.grant_renewed records the not-run uses and the attempt goes on executing under the renewal', () => {
    // when
    const events = run([A.renew(400, 'grant-2', { uses: [{ use_no: 1, settlement: 'not_run' }] })], executing);
    // then
    expect(events.at(-1)).toEqual({
      type: 'attempt.grant_renewed',
      data: { grant_id: 'grant-2', expires_at: at(1000), renews_grant_id: 'grant-1', renews_expired_at: at(304), not_run_uses: [1], at: at(400) },
    });
    expect(stateOf(events)).toMatchObject({ status: 'executing', grant: { grant_id: 'grant-2', expires_at: at(1000) }, anomalies: [] });
  });

  it('given a renewed attempt, when its execution completes, then it settles and succeeds without entering executing twice', () => {
    const events = run([A.renew(400), A.outcome(401, 'completed'), A.settle(402, 'succeeded'), A.receipt(403)], executing);
    expect(stateOf(events)).toMatchObject({ status: 'succeeded', grant: { grant_id: 'grant-2' } });
    expect(events.filter((event) => event.type === 'attempt.executing')).toHaveLength(1);
  });

  it('given two runs that never started and a renewal that expired unused too, then each renewal replaces the one before it', () => {
    const first = run([A.renew(400, 'grant-2', { uses: [{ use_no: 1, settlement: 'not_run' }, { use_no: 2, settlement: 'not_run' }] })], executing);
    const second = run([A.renew(1100, 'grant-3', { grant_id: 'grant-2', uses: [] })], first);
    expect(second.at(-1)).toMatchObject({ type: 'attempt.grant_renewed', data: { grant_id: 'grant-3', renews_grant_id: 'grant-2', not_run_uses: [] } });
    expect(stateOf(second)).toMatchObject({ status: 'executing', grant: { grant_id: 'grant-3' } });
  });

  it.each(['in_flight', 'completed', 'errored', 'unknown'] as const)('given a use of the grant that is %s, when a renewal is attached, then ATTEMPT_RENEWAL_NOT_ALLOWED: never renewed when a use may have run', (settlement) => {
    spec.given(executing).when(A.renew(400, 'grant-2', { uses: [{ use_no: 1, settlement: 'not_run' }, { use_no: 2, settlement }] })).thenThrows('ATTEMPT_RENEWAL_NOT_ALLOWED');
  });

  it('given a revoked grant whose uses never started, when a renewal is attached, then ATTEMPT_RENEWAL_NOT_ALLOWED: a revoked grant is never renewed', () => {
    spec.given(executing).when(A.renew(400, 'grant-2', { revoked: true })).thenThrows('ATTEMPT_RENEWAL_NOT_ALLOWED');
  });

  it('given a grant still live, when a renewal is attached, then ATTEMPT_GRANT_ALREADY_ATTACHED (the next use runs under it)', () => {
    spec.given(executing).when(A.renew(100)).thenThrows('ATTEMPT_GRANT_ALREADY_ATTACHED');
  });

  it('given a renewal already expired, another grant named as replaced, or the held grant again, then it is refused with its code', () => {
    spec.given(executing).when(A.renew(400, 'grant-2', {}, 0)).thenThrows('ATTEMPT_GRANT_EXPIRED');
    spec.given(executing).when(A.renew(400, 'grant-2', { grant_id: 'grant-9' })).thenThrows('ATTEMPT_GRANT_MISMATCH');
    spec.given(executing).when(A.renew(400, 'grant-1')).thenThrows('ATTEMPT_GRANT_ALREADY_ATTACHED');
  });

  it('given an attempt that is authorized, observing or ended, when a renewal is attached, then the transition is refused (a renewal outside execution is attach-grant)', () => {
    spec.given(run([...toPolicy, A.policy(3, { outcome: 'allow' }), A.grant(4)])).when(A.renew(400)).thenThrows('ATTEMPT_TRANSITION_NOT_ALLOWED');
    spec.given(run([A.outcome(6, 'errored')], executing)).when(A.renew(400)).thenThrows('ATTEMPT_TRANSITION_NOT_ALLOWED');
    spec.given(run([A.outcome(6, 'completed'), A.settle(7, 'succeeded'), A.receipt(8)], executing)).when(A.renew(400)).thenThrows('ATTEMPT_TERMINAL');
  });

  it('given a grant_renewed event naming a grant the attempt does not hold, when folded, then it is an anomaly and the grant stays', () => {
    const state = stateOf(executing);
    const after = attemptDecider.evolve(state, {
      type: 'attempt.grant_renewed',
      data: { grant_id: 'grant-3', expires_at: at(1000), renews_grant_id: 'grant-9', renews_expired_at: at(304), not_run_uses: [1], at: at(400) },
    });
    expect(after).toMatchObject({ status: 'executing', grant: { grant_id: 'grant-1' } });
    expect(after.anomalies).toHaveLength(1);
  });
});

describe('attempt decider: the direct path (Hermit 11.1, 12.3)', () => {
  it('given an allowed request, when the attempt runs to its receipt, then it walks every state and succeeds', () => {
    const events = run([...toPolicy, A.policy(3, { outcome: 'allow' }), A.grant(4), A.execute(5), A.outcome(6, 'completed'), A.settle(7, 'succeeded'), A.receipt(8)]);
    expect(events.map((e) => e.type)).toEqual([
      'attempt.created',
      'attempt.leased',
      'attempt.awaiting_policy',
      'attempt.authorized',
      'attempt.grant_attached',
      'attempt.executing',
      'attempt.observing',
      'attempt.receipt_pending',
      'attempt.succeeded',
    ]);
    const state = stateOf(events);
    expect(state).toMatchObject({ status: 'succeeded', authorized_via: 'policy_allow', receipt_ref: 'receipt:r-1', result_code: 'succeeded', anomalies: [] });
  });

  it('given the full model path, then compile-context and reasoning come between lease and policy', () => {
    const events = run([A.create(), A.lease(), A.compile(), A.reason(), A.submit()]);
    expect(stateOf(events)).toMatchObject({ status: 'awaiting_policy', context_pack_ref: 'artifact:ctx-1', policy_entries: 1 });
  });

  it('given a created attempt, when submit-action before a lease, then ATTEMPT_TRANSITION_NOT_ALLOWED', () => {
    spec.given(run([A.create()])).when(A.submit()).thenThrows('ATTEMPT_TRANSITION_NOT_ALLOWED');
  });

  it('given a submitted request of another task, then ATTEMPT_REQUEST_INVALID', () => {
    spec.given(run([A.create(), A.lease()])).when(A.submit(2, request({ task_id: 'task-9' }))).thenThrows('ATTEMPT_REQUEST_INVALID');
    spec.given(run([A.create(), A.lease()])).when(A.submit(2, { ...request(), action_class: 'teleport' } as never)).thenThrows('ATTEMPT_REQUEST_INVALID');
  });

  it('given a denied request, then the attempt fails and nothing follows', () => {
    const events = run([...toPolicy, A.policy(3, { outcome: 'deny' }, { reasons: [{ code: 'write_outside_files_owned', message: 'no' }] })]);
    expect(events.at(-1)?.type).toBe('attempt.policy_denied');
    expect(stateOf(events)).toMatchObject({ status: 'failed', failure: { code: 'policy_denied' } });
    for (const c of [A.grant(5), A.execute(5), A.cancel(5), A.submit(5)]) spec.given(events).when(c).thenThrows('ATTEMPT_TERMINAL');
  });

  it('given a downgrade, then the attempt continues authorized with the rewritten request and the restricted mode (Hermit 11.4)', () => {
    const rewritten = request({ action_request_id: 'ar-1-dg', action_class: 'read_local', params: { path: 'src/a.ts' }, expected_effects: [] });
    const events = run([...toPolicy, A.policy(3, { outcome: 'downgrade' }, { rewritten_request: rewritten, restricted_mode: 'readonly' })]);
    expect(stateOf(events)).toMatchObject({ status: 'authorized', authorized_via: 'policy_downgrade', restricted_mode: 'readonly', action_request: rewritten, submitted_request: request() });
  });

  it('given a downgrade without a rewritten request, then ATTEMPT_POLICY_RESULT_INVALID', () => {
    spec.given(run(toPolicy)).when(A.policy(3, { outcome: 'downgrade' })).thenThrows('ATTEMPT_POLICY_RESULT_INVALID');
  });

  it('given require_approval without an approval id, then ATTEMPT_POLICY_RESULT_INVALID', () => {
    spec.given(run(toPolicy)).when(A.policy(3, { outcome: 'require_approval' })).thenThrows('ATTEMPT_POLICY_RESULT_INVALID');
  });
});

describe('attempt decider: grants (DESIGN invariant 3, Hermit 19.2, 19.6)', () => {
  const authorized = run([...toPolicy, A.policy(3, { outcome: 'allow' })]);

  it('given an authorized attempt without a grant, when start-execution, then ATTEMPT_GRANT_MISSING', () => {
    spec.given(authorized).when(A.execute(5)).thenThrows('ATTEMPT_GRANT_MISSING');
  });

  it('given an attached grant, when start-execution names another grant, then ATTEMPT_GRANT_MISMATCH', () => {
    spec.given(run([A.grant(4)], authorized)).when(A.execute(5, 'grant-2')).thenThrows('ATTEMPT_GRANT_MISMATCH');
  });

  it('given an attached grant that expired, when start-execution, then ATTEMPT_GRANT_EXPIRED, and a fresh grant may be attached', () => {
    const withGrant = run([A.grant(4, 'grant-1', 60)], authorized);
    spec.given(withGrant).when(A.execute(64)).thenThrows('ATTEMPT_GRANT_EXPIRED');
    spec.given(withGrant).when(A.grant(65, 'grant-2')).then([{ type: 'attempt.grant_attached', data: { grant_id: 'grant-2', expires_at: at(365), at: at(65) } }]);
  });

  it('given a live grant, when attach-grant again, then ATTEMPT_GRANT_ALREADY_ATTACHED (no duplicate grant)', () => {
    spec.given(run([A.grant(4)], authorized)).when(A.grant(5, 'grant-2')).thenThrows('ATTEMPT_GRANT_ALREADY_ATTACHED');
  });

  it('given attach-grant with an expiry in the past, then ATTEMPT_GRANT_EXPIRED', () => {
    spec.given(authorized).when(A.grant(10, 'grant-1', -1)).thenThrows('ATTEMPT_GRANT_EXPIRED');
  });

  it('given an attempt awaiting policy, when attach-grant, then ATTEMPT_TRANSITION_NOT_ALLOWED', () => {
    spec.given(run(toPolicy)).when(A.grant(4)).thenThrows('ATTEMPT_TRANSITION_NOT_ALLOWED');
  });
});

describe('attempt decider: approval pause and resume of the same attempt (Hermit 12.4, 11.5)', () => {
  it('given require_approval, then the attempt waits, and a granted approval with a revalidated witness authorizes the SAME attempt', () => {
    const events = run([...approvalWait, A.resolve(10, { resolution: 'granted', witness_validated: true, policy_version: '1' }), A.grant(11), A.execute(12)]);
    const state = stateOf(events);
    expect(state).toMatchObject({ attempt_id: 'attempt-1', status: 'executing', authorized_via: 'approval', approval_id: 'approval-1' });
  });

  it('given the policy asked for a witness, when the approval is granted without revalidation, then ATTEMPT_WITNESS_NOT_VALIDATED', () => {
    spec.given(run(approvalWait)).when(A.resolve(10, { resolution: 'granted' })).thenThrows('ATTEMPT_WITNESS_NOT_VALIDATED');
  });

  it('given the policy version changed while waiting, when the approval is granted, then policy is re-entered (policy drift)', () => {
    const events = spec.given(run(approvalWait)).when(A.resolve(10, { resolution: 'granted', witness_validated: true, policy_version: '2' })).thenEvents();
    expect(events).toMatchObject([{ type: 'attempt.policy_reentered', data: { cause: 'policy_drift' } }]);
    expect(stateOf([...run(approvalWait), ...events])).toMatchObject({ status: 'awaiting_policy', policy: null, approval_id: null, policy_entries: 2 });
  });

  it('given a resolution of another approval, then ATTEMPT_APPROVAL_MISMATCH', () => {
    spec.given(run(approvalWait)).when(A.resolve(10, { approval_id: 'approval-9', resolution: 'granted', witness_validated: true })).thenThrows('ATTEMPT_APPROVAL_MISMATCH');
  });

  it.each([
    ['denied', 'attempt.approval_denied', 'failed'],
    ['expired', 'attempt.approval_expired', 'failed'],
    ['cancelled', 'attempt.cancelled', 'cancelled'],
    ['invalidated', 'attempt.policy_reentered', 'awaiting_policy'],
  ])('given the approval is %s, then %s and the attempt is %s', (resolution, type, status) => {
    const events = run([...approvalWait, A.resolve(10, { resolution })]);
    expect(events.at(-1)?.type).toBe(type);
    expect(stateOf(events).status).toBe(status);
  });

  it('given an invalidated approval and recovery supersede, then the attempt is superseded', () => {
    const events = run([...approvalWait, A.resolve(10, { resolution: 'invalidated', recovery: 'supersede', superseded_by_attempt_id: 'attempt-2' })]);
    expect(stateOf(events)).toMatchObject({ status: 'superseded', superseded_by_attempt_id: 'attempt-2', last_drift: 'approval_invalidated' });
  });

  it('given an authorized attempt with a grant, when witness drift is reported, then policy is re-entered and the grant is void', () => {
    const authorized = run([...approvalWait, A.resolve(10, { resolution: 'granted', witness_validated: true }), A.grant(11)]);
    const events = run([A.drift(12, { cause: 'witness_drift', recovery: 'reenter_policy' })], authorized);
    expect(stateOf(events)).toMatchObject({ status: 'awaiting_policy', grant: null, authorized_via: null, last_drift: 'witness_drift' });
    spec.given(events).when(A.execute(13)).thenThrows('ATTEMPT_TRANSITION_NOT_ALLOWED');
  });

  it('given an attempt awaiting policy, when drift is reported, then ATTEMPT_TRANSITION_NOT_ALLOWED (nothing to revalidate yet)', () => {
    spec.given(run(toPolicy)).when(A.drift(5, { cause: 'input_drift', recovery: 'reenter_policy' })).thenThrows('ATTEMPT_TRANSITION_NOT_ALLOWED');
  });
});

describe('attempt decider: unknown outcome (Hermit 19.3, 19.4)', () => {
  const uncertain = run([...toPolicy, A.policy(3, { outcome: 'allow' }), A.grant(4), A.execute(5), A.outcome(6, 'unknown')]);

  it('given an unknown outcome, then the attempt observes and replay is blocked', () => {
    expect(stateOf(uncertain)).toMatchObject({ status: 'observing', outcome_uncertain: true });
    for (const c of [A.execute(7), A.cancel(7), A.fail(7), A.supersede(7), A.grant(7, 'grant-2')]) {
      spec.given(uncertain).when(c).thenThrows('ATTEMPT_TRANSITION_NOT_ALLOWED');
    }
  });

  it('given an unknown outcome, when settled without evidence, then ATTEMPT_RESOLUTION_EVIDENCE_MISSING', () => {
    spec.given(uncertain).when(A.settle(8, 'succeeded')).thenThrows('ATTEMPT_RESOLUTION_EVIDENCE_MISSING');
  });

  it('given an unknown outcome, then an unknown_outcome receipt is recorded once and the attempt keeps observing', () => {
    const receipted = run([A.unknownReceipt(7)], uncertain);
    expect(stateOf(receipted)).toMatchObject({ status: 'observing', unknown_outcome_receipt_ref: 'receipt:unknown-1' });
    spec.given(receipted).when(A.unknownReceipt(8)).thenThrows('ATTEMPT_OUTCOME_NOT_UNCERTAIN');
  });

  it('given an unknown outcome settled on evidence, then the receipt closes the attempt', () => {
    const events = run([A.unknownReceipt(7), A.settle(8, 'failed', ['artifact:observation-1']), A.receipt(9)], uncertain);
    // Resolved, not observed: the reason says so (never "ran and failed").
    expect(stateOf(events)).toMatchObject({ status: 'failed', result_code: 'failed', receipt_ref: 'receipt:r-1', failure: { code: 'outcome_resolved_failed' } });
  });

  it('given a known outcome, when an unknown-outcome receipt is recorded, then ATTEMPT_OUTCOME_NOT_UNCERTAIN', () => {
    const known = run([...toPolicy, A.policy(3, { outcome: 'allow' }), A.grant(4), A.execute(5), A.outcome(6, 'completed')]);
    spec.given(known).when(A.unknownReceipt(7)).thenThrows('ATTEMPT_OUTCOME_NOT_UNCERTAIN');
  });
});

describe('attempt decider: commands and execute_command requests', () => {
  it('given an execute_command request, then it travels in the attempt unchanged', () => {
    const req = command(['npm', 'test']);
    const events = run([A.create(), A.lease(), A.submit(2, req)]);
    expect(stateOf(events).action_request).toEqual(req);
  });

  it('given no attempt, when lease-workspace, then ATTEMPT_NOT_FOUND; given one, when create-attempt, then ATTEMPT_ALREADY_EXISTS', () => {
    spec.given([]).when(A.lease()).thenThrows('ATTEMPT_NOT_FOUND');
    spec.given(run([A.create()])).when(A.create()).thenThrows('ATTEMPT_ALREADY_EXISTS');
  });
});
