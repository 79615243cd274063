import { EventDraft } from '@writ/contracts';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalPath, at, storyIds, type StoryEvent, type StoryIds } from '../test/governed-path.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * `GET /v1/approvals/<id>` against the real NATS and Postgres: the approval as the approval
 * service left it in the log (packet artifact ref, state witness, a policy-drift invalidation
 * and the decision recorded with it), read back from the projection.
 */

const PACKET_SHA = 'f'.repeat(64);
const WITNESS = { ref: `sha256:${'c'.repeat(64)}`, fingerprints: { 'src/build': `dir:${'d'.repeat(64)}` }, observed_at: at(6) };

function approvalEvent(ids: StoryIds, type: string, entity: 'approval' | 'decision', entityId: string, seconds: number, payload: Record<string, unknown>): StoryEvent {
  const draft = EventDraft.parse({
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: type,
    entity_type: entity,
    entity_id: entityId,
    step_id: ids.step,
    attempt_id: ids.attempt,
    occurred_at: at(seconds),
    actor_type: 'service',
    actor_id: 'writ-approval',
    payload,
    causation_id: null,
    correlation_id: ids.task,
  });
  return { aggregate: 'task', aggregateId: ids.task, draft };
}

/** The approval path with a witnessed packet artifact, then a director's grant refused for policy drift. */
function driftStory(ids: StoryIds): StoryEvent[] {
  const base = approvalPath(ids).filter((event) => event.draft.event_type !== 'approval.requested');
  const packet = { action_summary: 'execute_command: make build', risk_band: 'high', expires_at: at(3606), state_witness_ref: WITNESS.ref };
  const decisionId = `dec-${ids.tag}-apr`;
  return [
    ...base,
    approvalEvent(ids, 'approval.requested', 'approval', ids.approval, 6, {
      approval_id: ids.approval,
      task_id: ids.task,
      step_id: ids.step,
      attempt_id: ids.attempt,
      approval_type: 'action',
      requested_action_ref: `action_request:${ids.actionRequest}`,
      approval_packet_ref: `artifact:sha256:${PACKET_SHA}`,
      requested_by: ids.principal,
      policy_result_ref: `policy_result:${ids.policyResult}`,
      expires_at: at(3606),
      state_witness: WITNESS,
      packet,
      at: at(6),
    }),
    approvalEvent(ids, 'approval.invalidated', 'approval', ids.approval, 9, { resolved_by: 'director-1', cause: 'policy_drift', note: 'the profile changed', at: at(9) }),
    approvalEvent(ids, 'decision.recorded', 'decision', decisionId, 9, {
      decision: {
        decision_id: decisionId,
        task_id: ids.task,
        step_id: ids.step,
        attempt_id: ids.attempt,
        decision_type: 'safety',
        summary: `approval ${ids.approval} invalidated by director-1`,
        rationale: 'policy_drift: the profile changed',
        evidence_refs: [{ artifact_id: `sha256-${PACKET_SHA}`, capture_method: 'approval_packet', trust_tier: 'policy_asserted' }],
        risk_level: 'high',
        decided_by: 'director-1',
        reversible: false,
        created_at: at(9),
      },
      subject_ref: `approval:${ids.approval}`,
      outcome_event: 'approval.invalidated',
    }),
  ];
}

describe('GET /v1/approvals/<id>', () => {
  let rig: Rig;
  let app: ProjectionApp;

  beforeAll(async () => {
    rig = await createRig();
    app = await rig.start();
  });

  afterAll(async () => {
    await rig?.dispose();
  });

  it('shows status, packet and its artifact ref, state witness, expiry, the resolution with its resolver and cause, and the decision', async () => {
    // given an approval invalidated for policy drift, with its decision, and a second approval of another task
    const ids = storyIds(uniqueName('det'));
    const other = storyIds(uniqueName('oth'));
    await rig.caughtUp(await rig.append([...driftStory(ids), ...driftStory(other)]));
    // when it is read
    const { status, body } = await http(app, `/v1/approvals/${ids.approval}`);
    // then
    expect(status).toBe(200);
    expect(body).toMatchObject({
      approval_id: ids.approval,
      task_id: ids.task,
      attempt_id: ids.attempt,
      status: 'invalidated',
      packet: { action_summary: 'execute_command: make build', state_witness_ref: WITNESS.ref },
      packet_ref: `artifact:sha256:${PACKET_SHA}`,
      state_witness: WITNESS,
      policy_result_ref: `policy_result:${ids.policyResult}`,
      requested_by: ids.principal,
      resolved_by: 'director-1',
      expires_at: at(3606),
      resolution: { event_type: 'approval.invalidated', status: 'invalidated', resolved_by: 'director-1', cause: 'policy_drift', note: 'the profile changed', drifted_resources: [] },
    });
    expect(body['decisions']).toEqual([expect.objectContaining({ decision_id: `dec-${ids.tag}-apr`, decided_by: 'director-1', decision_type: 'safety' })]);
  });

  it('answers a pending approval with no resolution, an unknown id with 404 and a malformed one with 400', async () => {
    const ids = storyIds(uniqueName('pen'));
    await rig.caughtUp(await rig.append(approvalPath(ids)));
    expect((await http(app, `/v1/approvals/${ids.approval}`)).body).toMatchObject({ status: 'pending', resolution: null, decisions: [], state_witness: null });
    expect(await http(app, '/v1/approvals/approval-nobody')).toMatchObject({ status: 404, body: { code: 'PROJECTION_NOT_FOUND' } });
    expect(await http(app, '/v1/approvals/not.an.id')).toMatchObject({ status: 400, body: { code: 'PROJECTION_REQUEST_INVALID' } });
  });
});
