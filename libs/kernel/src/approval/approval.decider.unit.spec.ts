import { APPROVAL_TERMINAL_STATES } from '@writ/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { at, deciderSpec, meta, T0 } from '../../test/decider-spec.js';
import { evolveIsTotal, modelCheck } from '../../test/model.js';
import { fold } from '../shared/decider.js';
import { approvalDecider, driftedResources, type ApprovalCommand, type ApprovalRecord } from './approval.decider.js';
import type { ApprovalEvent } from './approval.events.js';

const spec = deciderSpec(approvalDecider);
const FP_A = 'a'.repeat(64);
const FP_B = 'b'.repeat(64);

const requested: ApprovalEvent = {
  type: 'approval.requested',
  data: {
    approval_id: 'approval-1',
    task_id: 'task-1',
    step_id: 'step-1',
    attempt_id: 'attempt-1',
    approval_type: 'action',
    requested_action_ref: 'artifact:ar-1',
    approval_packet_ref: 'artifact:packet-1',
    requested_by: 'agent-1',
    policy_result_ref: 'policy_result:pr-1',
    expires_at: at(3_600),
    state_witness: { ref: 'artifact:witness-1', fingerprints: { 'src/a.ts': FP_A }, observed_at: T0 },
    at: T0,
  },
};
const director = { principal_id: 'user-9', roles: ['director'] };
const V1 = `sha256:${'1'.repeat(64)}`;
const V2 = `sha256:${'2'.repeat(64)}`;
const sameVersion = { evaluated: V1, current: V1 };
const grant = (s: number, extra: object = {}): ApprovalCommand =>
  ({ type: 'grant-approval', data: { resolver: director, current_fingerprints: { 'src/a.ts': FP_A }, policy_versions: sameVersion, ...extra }, metadata: meta(s) }) as ApprovalCommand;
const deny = (s: number, resolver = director): ApprovalCommand => ({ type: 'deny-approval', data: { resolver, note: 'no' }, metadata: meta(s) });

describe('approval decider (Hermit 8.9, 12.4, 16.7, 16.8)', () => {
  it('given a request, when request-approval, then approval.requested and the approval is pending', () => {
    const { at: _at, ...data } = requested.data as Extract<ApprovalEvent, { type: 'approval.requested' }>['data'];
    spec.given([]).when({ type: 'request-approval', data, metadata: meta() }).then([requested]);
    expect(fold(approvalDecider, [requested]).status).toBe('pending');
  });

  it('given an expiry not after now, when request-approval, then APPROVAL_EXPIRY_INVALID', () => {
    const { at: _at, ...data } = requested.data as Extract<ApprovalEvent, { type: 'approval.requested' }>['data'];
    spec.given([]).when({ type: 'request-approval', data: { ...data, expires_at: T0 }, metadata: meta() }).thenThrows('APPROVAL_EXPIRY_INVALID');
  });

  it('given a director and an unchanged witness, when grant-approval, then approval.granted with the witness validated', () => {
    spec.given([requested]).when(grant(60, { note: 'ok' })).then([{ type: 'approval.granted', data: { resolved_by: 'user-9', note: 'ok', witness_validated: true, at: at(60) } }]);
  });

  it('given a resolver without the director role, when grant-approval or deny-approval, then APPROVAL_RESOLVER_NOT_ALLOWED', () => {
    spec.given([requested]).when(grant(60, { resolver: { principal_id: 'user-2', roles: ['observer', 'executor'] } })).thenThrows('APPROVAL_RESOLVER_NOT_ALLOWED');
    spec.given([requested]).when(deny(60, { principal_id: 'user-2', roles: [] })).thenThrows('APPROVAL_RESOLVER_NOT_ALLOWED');
  });

  it('given the requesting principal holds the director role, when it grants its own request, then APPROVAL_RESOLVER_NOT_ALLOWED', () => {
    spec.given([requested]).when(grant(60, { resolver: { principal_id: 'agent-1', roles: ['director'] } })).thenThrows('APPROVAL_RESOLVER_NOT_ALLOWED');
  });

  it('given the role name in another case or as a substring, then it is not the director role', () => {
    for (const roles of [['Director'], ['directors'], ['not-director'], ['director ']]) {
      spec.given([requested]).when(grant(60, { resolver: { principal_id: 'user-3', roles } })).thenThrows('APPROVAL_RESOLVER_NOT_ALLOWED');
    }
  });

  it('given the target changed since the witness was captured, when grant-approval, then approval.invalidated (witness drift) and no grant', () => {
    spec
      .given([requested])
      .when(grant(60, { current_fingerprints: { 'src/a.ts': FP_B } }))
      .then([{ type: 'approval.invalidated', data: { resolved_by: 'user-9', cause: 'witness_drift', drifted_resources: ['src/a.ts'], at: at(60) } }]);
  });

  it('given a witness, when grant-approval brings no current fingerprints, then APPROVAL_WITNESS_MISSING', () => {
    spec.given([requested]).when(grant(60, { current_fingerprints: undefined })).thenThrows('APPROVAL_WITNESS_MISSING');
  });

  it('given the policy profile changed since evaluation, when grant-approval, then approval.invalidated (policy_drift) before any witness check', () => {
    const events = spec.given([requested]).when(grant(60, { policy_versions: { evaluated: V1, current: V2 }, current_fingerprints: undefined })).thenEvents();
    expect(events).toMatchObject([{ type: 'approval.invalidated', data: { resolved_by: 'user-9', cause: 'policy_drift', at: at(60) } }]);
    expect((events[0]?.data as { note: string }).note).toContain(V2);
  });

  it('given the profile no longer stored or the policy result unknown, when grant-approval, then policy_drift', () => {
    for (const policy_versions of [
      { evaluated: V1, current: null },
      { evaluated: null, current: V1 },
      { evaluated: null, current: null },
    ]) {
      expect(spec.given([requested]).when(grant(60, { policy_versions })).thenEvents()).toMatchObject([{ type: 'approval.invalidated', data: { cause: 'policy_drift' } }]);
    }
  });

  it('given an approval answering a policy result, when grant-approval brings no policy versions, then APPROVAL_POLICY_UNCHECKED', () => {
    spec.given([requested]).when(grant(60, { policy_versions: undefined })).thenThrows('APPROVAL_POLICY_UNCHECKED');
  });

  it('given an approval answering no policy result, when grant-approval brings no policy versions, then it is granted', () => {
    const { policy_result_ref: _ref, ...data } = (requested as Extract<ApprovalEvent, { type: 'approval.requested' }>).data;
    const withoutPolicy = { type: 'approval.requested', data } as ApprovalEvent;
    expect(spec.given([withoutPolicy]).when(grant(60, { policy_versions: undefined })).thenEvents()).toMatchObject([{ type: 'approval.granted' }]);
  });

  it('given a pending approval, when cancel-approval, then approval.cancelled; after any resolution, APPROVAL_NOT_PENDING', () => {
    const cancel: ApprovalCommand = { type: 'cancel-approval', data: { resolved_by: 'writ-orchestrator', reason: 'task ended' }, metadata: meta(30) };
    spec.given([requested]).when(cancel).then([{ type: 'approval.cancelled', data: { resolved_by: 'writ-orchestrator', reason: 'task ended', at: at(30) } }]);
    const cancelled = [requested, ...approvalDecider.decide(cancel, fold(approvalDecider, [requested]))];
    spec.given(cancelled).when(grant(60)).thenThrows('APPROVAL_NOT_PENDING');
    spec.given(cancelled).when({ type: 'expire-approval', data: { resolved_by: 'writ-approval' }, metadata: meta(3_601) }).thenThrows('APPROVAL_NOT_PENDING');
  });

  it('given an expired witness, when grant-approval, then approval.invalidated (witness_expired)', () => {
    const withExpiry = { ...requested, data: { ...requested.data, state_witness: { ...(requested.data as { state_witness: object }).state_witness, expires_at: at(30) } } } as ApprovalEvent;
    const events = spec.given([withExpiry]).when(grant(60)).thenEvents();
    expect(events).toMatchObject([{ type: 'approval.invalidated', data: { cause: 'witness_expired' } }]);
  });

  it('given now is past the expiry, when a director grants or denies, then approval.expired instead', () => {
    spec.given([requested]).when(grant(3_600)).then([{ type: 'approval.expired', data: { resolved_by: 'user-9', at: at(3_600) } }]);
    spec.given([requested]).when(deny(4_000)).then([{ type: 'approval.expired', data: { resolved_by: 'user-9', at: at(4_000) } }]);
  });

  it('given a pending approval, when expire-approval before its expiry, then APPROVAL_NOT_EXPIRED; after it, approval.expired', () => {
    spec.given([requested]).when({ type: 'expire-approval', data: { resolved_by: 'writ-approval' }, metadata: meta(10) }).thenThrows('APPROVAL_NOT_EXPIRED');
    spec.given([requested]).when({ type: 'expire-approval', data: { resolved_by: 'writ-approval' }, metadata: meta(3_601) }).then([
      { type: 'approval.expired', data: { resolved_by: 'writ-approval', at: at(3_601) } },
    ]);
  });

  it('given a granted approval, when granted or denied again, then APPROVAL_NOT_PENDING (resolved at most once)', () => {
    const granted = [requested, ...approvalDecider.decide(grant(60), fold(approvalDecider, [requested]))];
    spec.given(granted).when(grant(61)).thenThrows('APPROVAL_NOT_PENDING');
    spec.given(granted).when(deny(61)).thenThrows('APPROVAL_NOT_PENDING');
  });

  it('given a granted approval whose packet drifted before use, when invalidate-approval, then it is invalidated', () => {
    const granted = [requested, ...approvalDecider.decide(grant(60), fold(approvalDecider, [requested]))];
    const events = spec.given(granted).when({ type: 'invalidate-approval', data: { resolved_by: 'writ-orchestrator', cause: 'packet_drift' }, metadata: meta(70) }).thenEvents();
    expect((fold(approvalDecider, [...granted, ...events]) as ApprovalRecord).status).toBe('invalidated');
  });

  it('given a denied approval, when invalidate-approval, then APPROVAL_TERMINAL', () => {
    const denied = [requested, ...approvalDecider.decide(deny(60), fold(approvalDecider, [requested]))];
    spec.given(denied).when({ type: 'invalidate-approval', data: { resolved_by: 'x', cause: 'input_drift' }, metadata: meta(70) }).thenThrows('APPROVAL_TERMINAL');
  });

  it("given a director's signed resolution, when granted or denied, then the event records the JWS for whoever acts on it", () => {
    const jws = 'eyJhbGciOiJFZERTQSJ9.eyJ4IjoxfQ.c2ln';
    spec
      .given([requested])
      .when(grant(60, { resolution_jws: jws }))
      .then([{ type: 'approval.granted', data: { resolved_by: 'user-9', witness_validated: true, resolution_jws: jws, at: at(60) } }]);
    spec
      .given([requested])
      .when({ type: 'deny-approval', data: { resolver: director, resolution_jws: jws }, metadata: meta(60) })
      .then([{ type: 'approval.denied', data: { resolved_by: 'user-9', resolution_jws: jws, at: at(60) } }]);
    // A grant that drifted is invalidated on the director's word: the signature rides along.
    const drifted = spec.given([requested]).when(grant(60, { resolution_jws: jws, current_fingerprints: { 'src/a.ts': FP_B } })).thenEvents();
    expect(drifted).toMatchObject([{ type: 'approval.invalidated', data: { cause: 'witness_drift', resolution_jws: jws } }]);
  });

  it('given a resolution that failed its authority check, when refuse-resolution, then approval.resolution_refused and the approval is unchanged', () => {
    const refusal = { resolution_event_id: 'evt-forged', code: 'APPROVAL_RESOLUTION_UNSIGNED', reason: 'no director signed it', refused_by: 'writ-orchestrator' };
    const events = spec.given([requested]).when({ type: 'refuse-resolution', data: refusal, metadata: meta(61) }).then([{ type: 'approval.resolution_refused', data: { ...refusal, at: at(61) } }]);
    const before = fold(approvalDecider, [requested]);
    const after = fold(approvalDecider, [requested, ...events]);
    expect(after).toEqual(before);
    // After a resolution too (a forged grant after a denial): recorded, and the denial stands.
    const denied = [requested, ...approvalDecider.decide(deny(60), fold(approvalDecider, [requested]))];
    const later = spec.given(denied).when({ type: 'refuse-resolution', data: refusal, metadata: meta(70) }).thenEvents();
    expect((fold(approvalDecider, [...denied, ...later]) as ApprovalRecord).status).toBe('denied');
    spec.given([]).when({ type: 'refuse-resolution', data: refusal, metadata: meta(70) }).thenThrows('APPROVAL_NOT_FOUND');
  });

  it('given no approval, when grant-approval, then APPROVAL_NOT_FOUND', () => {
    spec.given([]).when(grant(1)).thenThrows('APPROVAL_NOT_FOUND');
  });

  it('given fingerprints, then drift lists every resource changed, added or removed', () => {
    expect(driftedResources({ a: '1', b: '2' }, { a: '1', b: '3', c: '4' })).toEqual(['b', 'c']);
    expect(driftedResources({ a: '1', b: '2' }, { a: '1' })).toEqual(['b']);
    expect(driftedResources({ a: '1' }, { a: '1' })).toEqual([]);
  });
});

const CODES = [
  'APPROVAL_NOT_FOUND',
  'APPROVAL_ALREADY_REQUESTED',
  'APPROVAL_NOT_PENDING',
  'APPROVAL_TERMINAL',
  'APPROVAL_RESOLVER_NOT_ALLOWED',
  'APPROVAL_EXPIRY_INVALID',
  'APPROVAL_NOT_EXPIRED',
  'APPROVAL_WITNESS_MISSING',
  'APPROVAL_POLICY_UNCHECKED',
];
const resolver = fc.constantFrom(director, { principal_id: 'agent-1', roles: ['director'] }, { principal_id: 'user-2', roles: ['observer'] });
const fingerprints = fc.constantFrom(undefined, { 'src/a.ts': FP_A }, { 'src/a.ts': FP_B });
const policyVersions = fc.constantFrom(undefined, sameVersion, { evaluated: V1, current: V2 }, { evaluated: V1, current: null });
const request = (s: number): ApprovalCommand => {
  const { at: _at, ...data } = requested.data as Extract<ApprovalEvent, { type: 'approval.requested' }>['data'];
  return { type: 'request-approval', data: { ...data, expires_at: at(s + 600) }, metadata: meta(s) } as ApprovalCommand;
};
const item: fc.Arbitrary<(s: number) => ApprovalCommand> = fc.oneof(
  fc.constant(request),
  fc
    .tuple(resolver, fingerprints, policyVersions)
    .map(([r, fp, pv]) => (s: number) => ({ type: 'grant-approval', data: { resolver: r, current_fingerprints: fp, policy_versions: pv }, metadata: meta(s) }) as ApprovalCommand),
  resolver.map((r) => (s: number) => deny(s, r)),
  fc.constant((s: number) => ({ type: 'expire-approval', data: { resolved_by: 'writ-approval' }, metadata: meta(s) }) as ApprovalCommand),
  fc.constant((s: number) => ({ type: 'cancel-approval', data: { resolved_by: 'writ-orchestrator', reason: 'attempt cancelled' }, metadata: meta(s) }) as ApprovalCommand),
  fc.constantFrom('witness_drift', 'packet_drift').map((cause) => (s: number) => ({ type: 'invalidate-approval', data: { resolved_by: 'writ-orchestrator', cause }, metadata: meta(s) }) as ApprovalCommand),
  fc.constant(
    (s: number) =>
      ({
        type: 'refuse-resolution',
        data: { resolution_event_id: `evt-${s}`, code: 'APPROVAL_RESOLUTION_UNSIGNED', reason: 'unsigned', refused_by: 'writ-orchestrator' },
        metadata: meta(s),
      }) as ApprovalCommand,
  ),
);
const commands = fc
  .tuple(fc.array(item, { maxLength: 15 }), fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 15, maxLength: 15 }))
  .map(([items, gaps]) => {
    let t = 0;
    return [request(0), ...items.map((build, i) => build((t += gaps[i] ?? 0)))];
  });

describe('approval decider model', () => {
  it('property: resolved at most once, never by the requester or a non-director, nothing after a terminal status', () => {
    modelCheck(approvalDecider, commands, CODES, (step, history) => {
      const { before, after } = step;
      // A refusal of a resolution is recorded in any state, and changes none.
      if (step.command.type === 'refuse-resolution') {
        if (step.events !== null) expect(after).toEqual(before);
        return;
      }
      if (before.status !== 'initial' && APPROVAL_TERMINAL_STATES.includes(before.status)) expect(step.events).toBeNull();
      const resolutions = [...history, step].flatMap((h) => h.events ?? []).filter((e) => ['approval.granted', 'approval.denied', 'approval.expired', 'approval.cancelled'].includes(e.type));
      expect(resolutions.length).toBeLessThanOrEqual(1);
      for (const event of step.events ?? []) {
        if (event.type === 'approval.granted' || event.type === 'approval.denied') {
          expect(event.data.resolved_by).toBe('user-9');
        }
      }
      if (after.status === 'granted' && after.state_witness !== null) expect(after.witness_validated).toBe(true);
      // Granted only under the policy version that was evaluated (Hermit 19.6).
      if (before.status === 'pending' && after.status === 'granted' && before.policy_result_ref !== null) {
        const command = step.command as Extract<ApprovalCommand, { type: 'grant-approval' }>;
        expect(command.data.policy_versions?.evaluated).toBe(command.data.policy_versions?.current);
        expect(command.data.policy_versions?.current).not.toBeNull();
      }
    });
  });

  it('property: evolve is total', () => {
    evolveIsTotal(approvalDecider, fc.constant([requested]));
  });
});
