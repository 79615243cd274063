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

describe('approvals view: questions of blocked claims (docs/task-claims.md)', () => {
  const qids = storyIds('ap2');
  const asQuestion = (type: string, payload: Record<string, unknown>, base = approvalPath(qids).at(-1)!) => {
    const event = withPayload(base, payload);
    return { ...event, draft: { ...event.draft, event_type: type, entity_type: 'task' as const, entity_id: qids.task } };
  };
  const asked = {
    approval_id: 'qst-1',
    kind: 'question',
    claim_id: 'bcl-1',
    question: 'Which vault entry holds the deploy token? (token ghp_abcdefghijklmnopqrstuvwxyz0123 expired)',
    best_guess: 'the staging one',
    fallback_action: 'running the local tests',
    human_required_for: 'credential',
    requested_by: 'agent-1',
    at: '2030-01-01T00:00:09Z',
  };

  it('given question.asked, when folded, then the inbox holds a pending approval of kind question, secrets redacted', async () => {
    const store = await foldStory(toProjectedEvents([...approvalPath(qids), asQuestion('question.asked', asked)]));
    expect(store.row('approvals', 'qst-1')).toMatchObject({
      approval_id: 'qst-1',
      task_id: qids.task,
      status: 'pending',
      requested_by: 'agent-1',
      requested_at: '2030-01-01T00:00:09.000Z',
      packet: { kind: 'question', claim_id: 'bcl-1', best_guess: 'the staging one', human_required_for: 'credential' },
    });
    expect(JSON.stringify(store.row('approvals', 'qst-1')?.packet)).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123');
  });

  it('given question.withdrawn after the task ended, when folded, then the question leaves the inbox (cancelled)', async () => {
    const withdrawn = asQuestion('question.withdrawn', { approval_id: 'qst-1', reason: 'task ended (completed)', at: '2030-01-01T00:00:10Z' });
    const store = await foldStory(toProjectedEvents([...approvalPath(qids), asQuestion('question.asked', asked), withdrawn]));
    expect(store.row('approvals', 'qst-1')).toMatchObject({ status: 'cancelled', resolution_note: 'task ended (completed)' });
  });
});
