import { DecisionRecorded, hasErrorCode, type EventEnvelope } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalRig, PROFILE_V1, PROFILE_V2, type Attempt } from '../test/approval-rig.js';

/**
 * The approval lifecycle against the real service and NATS (Hermit 8.8, 16.7, 19.6): packets
 * stored as artifacts, a Decision with every resolution, cancellation by the orchestrator, and
 * policy drift between request and grant. Expiry by the timer: approval-expiry.int.spec.ts.
 */

let rig: ApprovalRig;

beforeAll(async () => {
  rig = await ApprovalRig.start();
});

afterAll(async () => {
  await rig?.stop();
});

function types(events: readonly EventEnvelope[]): string[] {
  return events.map((event) => event.event_type);
}

/** The resolution event and the decision appended with it (the next task_seq). */
async function resolutionWithDecision(attempt: Attempt, eventType: string): Promise<{ resolution: EventEnvelope; decision: DecisionRecorded; decisionEvent: EventEnvelope }> {
  const resolution = await rig.waitForEvent(attempt.taskId, eventType);
  const events = await rig.taskEvents(attempt.taskId);
  const decisionEvent = events.find((event) => event.task_seq === resolution.task_seq + 1);
  expect(decisionEvent?.event_type).toBe('decision.recorded');
  return { resolution, decision: DecisionRecorded.parse(decisionEvent?.payload), decisionEvent: decisionEvent as EventEnvelope };
}

async function requested(options: Parameters<ApprovalRig['seedAttempt']>[0] = {}): Promise<{ attempt: Attempt; event: EventEnvelope }> {
  const attempt = await rig.seedAttempt(options);
  const event = await rig.requestApproval(attempt);
  return { attempt, event };
}

describe('approval packets are artifacts (Hermit 16.7)', () => {
  it('stores the packet with its state witness in the artifact bucket, and approval_packet_ref names it by hash', async () => {
    // given an attempt whose policy result requires a state witness
    const { event } = await requested({ witnessRequired: true });
    const payload = event.payload as { approval_packet_ref: string; packet: unknown; state_witness: unknown };
    // then the ref is the artifact's content address
    const match = /^artifact:sha256:([0-9a-f]{64})$/.exec(payload.approval_packet_ref);
    expect(match).not.toBeNull();
    const sha256 = match?.[1] as string;
    // and the stored artifact is the packet shown on the event plus the witness it refers to
    const stored = await rig.artifactJson(sha256);
    expect(stored).toEqual({ format: 'writ.approval-packet/1', packet: payload.packet, state_witness: payload.state_witness });
    expect(sha256Hex(canonicalJson(stored))).toBe(sha256);
    expect(payload.packet).toMatchObject({ state_witness_ref: (payload.state_witness as { ref: string }).ref });
  });
});

describe('every resolution is a Decision with its resolver (Hermit 8.8)', () => {
  it('given a director grants, then decision.recorded follows approval.granted in the same append: safety, decided_by the director, resting on the packet and witness', async () => {
    const { attempt, event } = await requested({ witnessRequired: true });
    const reply = await rig.resolve(attempt, rig.director, 'grant');
    expect(reply.status).toBe('granted');

    const { resolution, decision, decisionEvent } = await resolutionWithDecision(attempt, 'approval.granted');
    // one append: same occurrence instant and cause, consecutive sequence numbers
    expect(decisionEvent).toMatchObject({ entity_type: 'decision', entity_id: decision.decision.decision_id, occurred_at: resolution.occurred_at, causation_id: resolution.causation_id });
    const sha256 = (event.payload as { approval_packet_ref: string }).approval_packet_ref.slice('artifact:sha256:'.length);
    expect(decision).toMatchObject({
      subject_ref: `approval:${attempt.approvalId}`,
      outcome_event: 'approval.granted',
      decision: {
        task_id: attempt.taskId,
        step_id: attempt.stepId,
        attempt_id: attempt.attemptId,
        decision_type: 'safety',
        decided_by: rig.director.id,
        rationale: `grant by ${rig.director.id}`,
        risk_level: 'high',
        reversible: false,
        evidence_refs: [
          { artifact_id: `sha256-${sha256}`, capture_method: 'approval_packet' },
          { artifact_id: `sha256-${sha256}`, selector: { kind: 'json_path', path: '$.state_witness' }, capture_method: 'workspace_observation' },
        ],
      },
    });
  });

  it('given a director denies, then the denial is recorded as a decision by that director', async () => {
    const { attempt } = await requested();
    expect((await rig.resolve(attempt, rig.director, 'deny')).status).toBe('denied');
    const { decision } = await resolutionWithDecision(attempt, 'approval.denied');
    expect(decision).toMatchObject({ outcome_event: 'approval.denied', decision: { decided_by: rig.director.id, rationale: `deny by ${rig.director.id}` } });
    // (without a witness, the packet alone is the evidence)
    expect(decision.decision.evidence_refs).toHaveLength(1);
  });

  it('given an observer or the requesting agent, then nothing is resolved and no decision is recorded', async () => {
    const { attempt } = await requested();
    const before = (await rig.taskEvents(attempt.taskId)).length;
    expect(hasErrorCode(await rig.resolveError(attempt, rig.observer, 'grant'), 'APPROVAL_RESOLVER_NOT_ALLOWED')).toBe(true);
    expect(hasErrorCode(await rig.resolveError(attempt, rig.agent, 'grant'), 'APPROVAL_RESOLVER_NOT_ALLOWED')).toBe(true);
    expect(await rig.taskEvents(attempt.taskId)).toHaveLength(before);
  });
});

describe('cancellation (writ.cmd.approval.cancel)', () => {
  it('given the task ended, then approval.cancelled with the reason and a decision by the canceller; a later grant is refused', async () => {
    const { attempt } = await requested();
    await rig.cancel(attempt, 'task_ended');
    const { resolution, decision } = await resolutionWithDecision(attempt, 'approval.cancelled');
    expect(resolution.payload).toMatchObject({ resolved_by: 'writ-orchestrator', reason: 'the task was cancelled by its owner' });
    expect(decision).toMatchObject({ outcome_event: 'approval.cancelled', decision: { decided_by: 'writ-orchestrator', rationale: 'the task was cancelled by its owner' } });

    // when a director grants it anyway, then it is refused and nothing is appended
    const after = (await rig.taskEvents(attempt.taskId)).length;
    expect(hasErrorCode(await rig.resolveError(attempt, rig.director, 'grant'), 'APPROVAL_NOT_PENDING')).toBe(true);
    // and no grant is minted for it
    const ack = await rig.issueGrant(attempt);
    expect(await rig.deadLetterCode('issue-grant', ack.seq)).toBe('APPROVAL_NOT_GRANTED');
    expect(await rig.taskEvents(attempt.taskId)).toHaveLength(after);
  });

  it('given a newly bound input drifted, then approval.invalidated with cause input_drift (re-enters policy), and its decision', async () => {
    const { attempt } = await requested();
    await rig.cancel(attempt, 'input_drift');
    const { resolution, decision } = await resolutionWithDecision(attempt, 'approval.invalidated');
    expect(resolution.payload).toMatchObject({ resolved_by: 'writ-orchestrator', cause: 'input_drift', note: 'a newly bound input changed the targets' });
    expect(decision).toMatchObject({ outcome_event: 'approval.invalidated', decision: { decided_by: 'writ-orchestrator' } });
    expect(decision.decision.rationale).toMatch(/^input_drift/);
  });

  it('given the approval was already resolved, then a cancellation is acknowledged and appends nothing', async () => {
    const { attempt } = await requested();
    await rig.resolve(attempt, rig.director, 'grant');
    const before = types(await rig.taskEvents(attempt.taskId));
    // when the orchestrator cancels it late, for either cause (and a redelivery of the same)
    await rig.cancel(attempt, 'task_ended');
    await rig.cancel(attempt, 'input_drift');
    const last = await rig.cancel(attempt, 'input_drift', ':again');
    await rig.waitHandled(rig.service.subjects.cancel, last.seq);
    // then the log is unchanged: still granted
    expect(types(await rig.taskEvents(attempt.taskId))).toEqual(before);
  });
});

describe('policy drift between request and grant (Hermit 19.6)', () => {
  it('given a new version of the profile applied after the request, when a director grants, then approval.invalidated (policy_drift) and no grant', async () => {
    const { attempt } = await requested({ witnessRequired: true });
    // when the policy service stores a new version of the task's profile
    await rig.putProfile(PROFILE_V2);
    try {
      const reply = await rig.resolve(attempt, rig.director, 'grant');
      // then the approval is invalidated, not granted
      expect(reply.status).toBe('invalidated');
      const { resolution, decision } = await resolutionWithDecision(attempt, 'approval.invalidated');
      expect(resolution).toMatchObject({ event_id: reply.event_id });
      expect(resolution.payload).toMatchObject({ resolved_by: rig.director.id, cause: 'policy_drift' });
      expect((resolution.payload as { note: string }).note).toContain(PROFILE_V2);
      expect(decision).toMatchObject({ outcome_event: 'approval.invalidated', decision: { decided_by: rig.director.id } });
      // and a grant asked for anyway is refused
      const ack = await rig.issueGrant(attempt);
      expect(await rig.deadLetterCode('issue-grant', ack.seq)).toBe('APPROVAL_NOT_GRANTED');
      const seen = types(await rig.taskEvents(attempt.taskId));
      expect(seen).not.toContain('approval.granted');
      expect(seen).not.toContain('grant.issued');
    } finally {
      await rig.putProfile(PROFILE_V1);
    }
  });

  it('given the profile was removed from the bucket, then the grant is policy_drift too', async () => {
    const profileId = 'removed_profile';
    await rig.putProfile(PROFILE_V1, profileId);
    const { attempt } = await requested({ profileId });
    await rig.deleteProfile(profileId);
    expect((await rig.resolve(attempt, rig.director, 'grant')).status).toBe('invalidated');
    expect((await rig.waitForEvent(attempt.taskId, 'approval.invalidated')).payload).toMatchObject({ cause: 'policy_drift' });
  });

  it('given the profile unchanged, then the grant goes through (the version is the one evaluated)', async () => {
    const { attempt } = await requested();
    expect((await rig.resolve(attempt, rig.director, 'grant')).status).toBe('granted');
    await rig.issueGrant(attempt);
    expect((await rig.waitForEvent(attempt.taskId, 'grant.issued')).payload).toMatchObject({ claims: { issued_by_principal_id: rig.director.id } });
  });

  it('given the policy bucket does not exist, then APPROVAL_POLICY_UNAVAILABLE, nothing appended, and the approval stays pending until it is back', async () => {
    const { attempt } = await requested();
    const before = (await rig.taskEvents(attempt.taskId)).length;
    await rig.deletePolicyBucket();
    try {
      expect(hasErrorCode(await rig.resolveError(attempt, rig.director, 'grant'), 'APPROVAL_POLICY_UNAVAILABLE')).toBe(true);
      expect(await rig.taskEvents(attempt.taskId)).toHaveLength(before);
      // a deny needs no policy version
      const other = (await requested()).attempt;
      expect((await rig.resolve(other, rig.director, 'deny')).status).toBe('denied');
    } finally {
      await rig.createPolicyBucket();
    }
    expect((await rig.resolve(attempt, rig.director, 'grant')).status).toBe('granted');
  });
});
