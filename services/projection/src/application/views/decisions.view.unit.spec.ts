import { describe, expect, it } from 'vitest';
import { fullPath, resolvedApprovalPath, storyIds, toProjectedEvents } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { decisionsView } from './decisions.view.js';

const ids = storyIds('dc1');

describe('decisions view (the decision timeline)', () => {
  it('given an approval path resolved, when folded, then the policy decision and the resolution decision are in log order', async () => {
    const store = await foldStory(toProjectedEvents(resolvedApprovalPath(ids, 'granted')));
    const rows = store.rows('decisions').sort((a, b) => a.task_seq - b.task_seq);
    expect(rows.map((r) => [r.source, r.decision_id])).toEqual([
      ['policy.evaluated', ids.decision],
      ['decision.recorded', `${ids.decision}-resolution`],
    ]);
    expect(rows[0]).toMatchObject({
      task_id: ids.task,
      decision_type: 'safety',
      summary: 'policy: require_approval',
      decided_by: 'policy',
      policy_result_id: ids.policyResult,
      policy_outcome: 'require_approval',
      policy_profile: 'local_edit_allowed',
      policy_version: 'v1',
      subject_ref: null,
    });
    expect(rows[1]).toMatchObject({ decided_by: 'director-1', subject_ref: `approval:${ids.approval}`, outcome_event: 'approval.granted', policy_outcome: null, reversible: false });
  });

  it('keeps one row per event: a redelivered decision changes nothing', async () => {
    const events = toProjectedEvents(fullPath(ids));
    const store = await foldStory(events);
    const row = store.rows('decisions')[0]!;
    expect(decisionsView.fold(row, events.find((e) => e.envelope.event_type === 'policy.evaluated')!)).toBe(row);
  });

  it('redacts secret-shaped text in a rationale', async () => {
    const story = resolvedApprovalPath(ids, 'denied');
    const recorded = story.at(-1)!;
    const decision = { ...(recorded.draft.payload['decision'] as Record<string, unknown>), rationale: 'token=abc123def456 leaked' };
    story[story.length - 1] = { ...recorded, draft: { ...recorded.draft, payload: { ...recorded.draft.payload, decision } } };
    const store = await foldStory(toProjectedEvents(story));
    expect(JSON.stringify(store.rows('decisions'))).not.toContain('abc123def456');
  });
});
