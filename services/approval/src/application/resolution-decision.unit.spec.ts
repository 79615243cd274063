import { DecisionRecorded, PolicyEvaluated, type EventEnvelope, type PolicyProfileRecord } from '@writ/contracts';
import { approvalDecider, fold, type ApprovalEvent, type ApprovalRecord } from '@writ/kernel';
import { describe, expect, it } from 'vitest';
import { policyVersions, profileIdOf } from './policy-drift.js';
import type { PolicyProfiles } from './ports.js';
import { resolutionDrafts, type ResolutionEvent } from './resolution-decision.js';

const SHA = 'e'.repeat(64);
const V1 = `sha256:${'1'.repeat(64)}`;
const V2 = `sha256:${'2'.repeat(64)}`;
const T0 = '2030-01-01T00:00:00.000Z';
const T1 = '2030-01-01T00:01:00.000Z';

function approval(overrides: Partial<Extract<ApprovalEvent, { type: 'approval.requested' }>['data']> = {}): ApprovalRecord {
  const requested: ApprovalEvent = {
    type: 'approval.requested',
    data: {
      approval_id: 'apr-1',
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: 'att-1',
      approval_type: 'action',
      requested_action_ref: 'action_request:ar-1',
      approval_packet_ref: `artifact:sha256:${SHA}`,
      requested_by: 'agent-1',
      policy_result_ref: 'policy_result:pr-1',
      expires_at: '2030-01-01T01:00:00.000Z',
      state_witness: { ref: `sha256:${'c'.repeat(64)}`, fingerprints: { src: 'absent' }, observed_at: T0 },
      at: T0,
      ...overrides,
    },
  };
  return fold(approvalDecider, [requested]) as ApprovalRecord;
}

function policyEvaluatedEvent(version: string, profileRef = `local_edit_allowed@${version}`, attemptId = 'att-1'): EventEnvelope {
  const payload = PolicyEvaluated.parse({
    policy_result: {
      policy_result_id: 'pr-1',
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: attemptId,
      action_request_id: 'ar-1',
      outcome: 'require_approval',
      action_class: 'execute_command',
      risk_band: 'critical',
      action_summary: 'execute_command: rm -rf build',
      risk_summary: 'destructive',
      policy_profile_ref: profileRef,
      policy_version: version,
      affected_resources: ['build'],
      reasoning_summary: 'destructive commands need a director',
      matched_rules: ['destructive'],
      witness_required: true,
      revalidation_conditions: [],
      approver_roles: ['director'],
      evaluated_at: T0,
      evaluated_by: 'writ-policy',
    },
    decision: {
      decision_id: 'dec-p',
      task_id: 'task-1',
      step_id: 'step-1',
      attempt_id: attemptId,
      decision_type: 'safety',
      summary: 'policy require_approval',
      rationale: 'destructive',
      evidence_refs: [],
      risk_level: 'critical',
      decided_by: 'writ-policy',
      reversible: true,
      created_at: T0,
    },
  });
  return { event_type: 'policy.evaluated', entity_type: 'decision', entity_id: 'dec-p', payload } as unknown as EventEnvelope;
}

function decisionOf(event: ResolutionEvent, state = approval(), events: EventEnvelope[] = []): DecisionRecorded {
  const [resolution, decision] = resolutionDrafts({
    state,
    event,
    events,
    resolutionKey: `apr-1:${event.type}:x`,
    actorId: 'writ-approval',
    causationId: 'cmd-1',
    occurredAt: T1,
    correlationId: 'task-1',
  });
  expect(resolution).toMatchObject({ event_type: event.type, entity_type: 'approval', entity_id: 'apr-1', attempt_id: 'att-1' });
  expect(decision).toMatchObject({ event_type: 'decision.recorded', entity_type: 'decision', causation_id: 'cmd-1', occurred_at: T1 });
  return DecisionRecorded.parse(decision.payload);
}

describe('resolution decisions (Hermit 8.8)', () => {
  const cases: Array<{ note: string; event: ResolutionEvent; decidedBy: string; rationale: string | RegExp }> = [
    { note: 'a grant with a note', event: { type: 'approval.granted', data: { resolved_by: 'dir-1', note: 'looks right', witness_validated: true, at: T1 } }, decidedBy: 'dir-1', rationale: 'looks right' },
    { note: 'a grant without one', event: { type: 'approval.granted', data: { resolved_by: 'dir-1', witness_validated: true, at: T1 } }, decidedBy: 'dir-1', rationale: /revalidated unchanged/ },
    { note: 'a denial', event: { type: 'approval.denied', data: { resolved_by: 'dir-2', at: T1 } }, decidedBy: 'dir-2', rationale: 'denied by dir-2' },
    { note: 'an expiry', event: { type: 'approval.expired', data: { resolved_by: 'writ-approval', at: T1 } }, decidedBy: 'writ-approval', rationale: /expired at 2030-01-01T01:00:00.000Z/ },
    { note: 'a cancellation', event: { type: 'approval.cancelled', data: { resolved_by: 'writ-orchestrator', reason: 'task ended', at: T1 } }, decidedBy: 'writ-orchestrator', rationale: 'task ended' },
    {
      note: 'a witness drift',
      event: { type: 'approval.invalidated', data: { resolved_by: 'dir-1', cause: 'witness_drift', drifted_resources: ['src', 'docs'], at: T1 } },
      decidedBy: 'dir-1',
      rationale: 'witness_drift (drifted: src, docs)',
    },
  ];
  it.each(cases)('records $note as a safety decision by its resolver, resting on the packet and witness', ({ event, decidedBy, rationale }) => {
    const recorded = decisionOf(event);
    expect(recorded).toMatchObject({ subject_ref: 'approval:apr-1', outcome_event: event.type, decision: { decision_type: 'safety', decided_by: decidedBy, reversible: false, created_at: T1 } });
    if (typeof rationale === 'string') expect(recorded.decision.rationale).toBe(rationale);
    else expect(recorded.decision.rationale).toMatch(rationale);
    expect(recorded.decision.evidence_refs.map((ref) => [ref.artifact_id, ref.selector?.kind ?? 'whole'])).toEqual([
      [`sha256-${SHA}`, 'whole'],
      [`sha256-${SHA}`, 'json_path'],
    ]);
  });

  it('takes the risk from the policy result when no packet is on the log, and high when nothing says', () => {
    const event: ResolutionEvent = { type: 'approval.denied', data: { resolved_by: 'dir-1', at: T1 } };
    expect(decisionOf(event, approval(), [policyEvaluatedEvent(V1)]).decision.risk_level).toBe('critical');
    expect(decisionOf(event).decision.risk_level).toBe('high');
  });

  it('cites no evidence it could not show: a packet ref that is not a stored artifact (older approvals)', () => {
    const event: ResolutionEvent = { type: 'approval.denied', data: { resolved_by: 'dir-1', at: T1 } };
    expect(decisionOf(event, approval({ approval_packet_ref: `sha256:${SHA}`, state_witness: undefined })).decision.evidence_refs).toEqual([]);
  });

  it('derives the same decision for the same resolution (a retried append is deduplicated)', () => {
    const event: ResolutionEvent = { type: 'approval.denied', data: { resolved_by: 'dir-1', at: T1 } };
    expect(decisionOf(event)).toEqual(decisionOf(event));
  });
});

describe('policy versions at grant time (Hermit 19.6)', () => {
  it('reads the profile id from a policy_profile_ref', () => {
    expect(profileIdOf(`local_edit_allowed@${V1}`)).toBe('local_edit_allowed');
    expect(profileIdOf('policy:local_edit_allowed')).toBe('local_edit_allowed');
    expect(profileIdOf('policy_profile:readonly@1')).toBe('readonly');
    expect(profileIdOf('Not A Profile')).toBeUndefined();
    expect(profileIdOf('../etc@1')).toBeUndefined();
  });

  function bucket(records: Record<string, Pick<PolicyProfileRecord, 'version'>>): PolicyProfiles & { asked: string[] } {
    const asked: string[] = [];
    return { asked, currentVersion: async (id: string) => (asked.push(id), records[id]?.version ?? null) };
  }

  it('compares the evaluated version with the stored one', async () => {
    const profiles = bucket({ local_edit_allowed: { version: V2 } });
    expect(await policyVersions([policyEvaluatedEvent(V1)], approval(), profiles)).toEqual({ evaluated: V1, current: V2 });
    expect(profiles.asked).toEqual(['local_edit_allowed']);
  });

  it('a profile not stored is null; a policy result missing from the log (or of another attempt) is unknown without asking', async () => {
    const profiles = bucket({});
    expect(await policyVersions([policyEvaluatedEvent(V1)], approval(), profiles)).toEqual({ evaluated: V1, current: null });
    expect(await policyVersions([], approval(), profiles)).toEqual({ evaluated: null, current: null });
    expect(await policyVersions([policyEvaluatedEvent(V1, undefined, 'att-other')], approval(), profiles)).toEqual({ evaluated: null, current: null });
    expect(profiles.asked).toEqual(['local_edit_allowed']);
  });
});
