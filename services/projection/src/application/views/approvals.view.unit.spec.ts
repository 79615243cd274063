import { describe, expect, it } from 'vitest';
import { approvalPath, approvalResolved, storyIds, toProjectedEvents, withPayload } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';

const ids = storyIds('ap1');

describe('approvals view', () => {
  it('opens a pending approval with its packet refs, requester and expiry', async () => {
    const store = await foldStory(toProjectedEvents(approvalPath(ids)));
    expect(store.row('approvals', ids.approval)).toMatchObject({
      approval_id: ids.approval,
      task_id: ids.task,
      step_id: ids.step,
      attempt_id: ids.attempt,
      status: 'pending',
      requested_by: ids.principal,
      resolved_by: null,
      requested_at: '2030-01-01T00:00:06.000Z',
      expires_at: '2030-01-01T01:00:06.000Z',
      packet: { approval_type: 'action', approval_packet_ref: `artifact:packet-${ids.tag}`, requested_action_ref: `action_request:${ids.actionRequest}` },
    });
  });

  it('records the resolution once: a granted approval is not denied afterwards', async () => {
    const store = await foldStory(toProjectedEvents([...approvalPath(ids), approvalResolved(ids, 'granted', 7), approvalResolved(ids, 'denied', 8)]));
    expect(store.row('approvals', ids.approval)).toMatchObject({ status: 'granted', resolved_by: 'director-1', resolved_at: '2030-01-01T00:00:07.000Z', resolution_note: 'ok' });
  });

  it('a granted approval may still be invalidated', async () => {
    const story = approvalPath(ids);
    const invalidated = withPayload(approvalResolved(ids, 'granted', 8), { resolved_by: 'approval', cause: 'witness_drift', at: '2030-01-01T00:00:08Z' });
    const event = { ...invalidated, draft: { ...invalidated.draft, event_type: 'approval.invalidated' } };
    const store = await foldStory(toProjectedEvents([...story, approvalResolved(ids, 'granted', 7), event]));
    expect(store.row('approvals', ids.approval)).toMatchObject({ status: 'invalidated', resolution_note: 'witness_drift' });
  });

  it('keeps a packet carried in the event, without secret-shaped values', async () => {
    const story = approvalPath(ids);
    const requested = story.at(-1)!;
    const withPacket = withPayload(requested, { ...requested.draft.payload, packet: { action_summary: 'write src/a.ts', api_key: 'sk-live-123' } });
    const store = await foldStory(toProjectedEvents([...story.slice(0, -1), withPacket]));
    expect(store.row('approvals', ids.approval)?.packet).toEqual({ action_summary: 'write src/a.ts', api_key: '[REDACTED]' });
  });
});
