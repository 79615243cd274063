import { describe, expect, it } from 'vitest';
import { attemptPolicyDenied, fullPath, grantRenewal, happyPath, storyIds, taskOpening, actionRequest, ingressReceived, policyEvaluated, fakeJws, attemptLeased, toProjectedEvents } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { attemptsView } from './attempts.view.js';

const ids = storyIds('at1');

describe('attempts view', () => {
  it('given the whole governed path, when folded, then the attempt succeeded with the ids of what decided, ran and receipted it', async () => {
    const store = await foldStory(toProjectedEvents(fullPath(ids)));
    expect(store.row('attempts', ids.attempt)).toMatchObject({
      attempt_id: ids.attempt,
      task_id: ids.task,
      step_id: ids.step,
      attempt_no: 1,
      status: 'succeeded',
      action_request_id: ids.actionRequest,
      action_class: 'write_local',
      policy_outcome: 'allow',
      risk_band: 'low',
      approval_id: null,
      grant_id: ids.grant,
      execution_outcome: 'completed',
      result_code: 'succeeded',
      receipt_id: ids.receipt,
      reason_code: null,
      last_event_type: 'attempt.succeeded',
      created_at: '2030-01-01T00:00:02.000Z',
    });
  });

  it('given a policy deny, when folded, then the attempt failed with the policy outcome', async () => {
    const opening = taskOpening(ids, actionRequest(ids), 2);
    const story = [ingressReceived(ids, fakeJws(actionRequest(ids))), ...opening.slice(0, 6), attemptLeased(ids, 2), opening[6]!, policyEvaluated(ids, 'deny', 4), attemptPolicyDenied(ids, 5)];
    const store = await foldStory(toProjectedEvents(story));
    expect(store.row('attempts', ids.attempt)).toMatchObject({ status: 'failed', policy_outcome: 'deny', risk_band: 'high' });
  });

  it('given the fixture path without attempt.leased, when folded, then the status stops where the kernel edges stop (it records, it does not invent)', async () => {
    const store = await foldStory(toProjectedEvents(happyPath(ids)));
    // created → awaiting_policy is no edge: the attempt stays created, yet the fields fill in
    expect(store.row('attempts', ids.attempt)).toMatchObject({ status: 'created', grant_id: ids.grant, receipt_id: ids.receipt });
  });

  it('given a renewal attached while the attempt executes (its grant\'s use never started), when folded, then the attempt stays executing and names the renewal as its grant', async () => {
    const executing = fullPath(ids).slice(0, 17);
    expect(executing.at(-1)?.draft.event_type).toBe('attempt.executing');
    const store = await foldStory(toProjectedEvents([...executing, ...grantRenewal(ids, 400)]));
    expect(store.row('attempts', ids.attempt)).toMatchObject({ status: 'executing', grant_id: `${ids.grant}-r1`, last_event_type: 'attempt.grant_renewed' });
  });

  it('needs attempt.created: other events of an unknown attempt create no row', () => {
    const events = toProjectedEvents(fullPath(ids));
    expect(attemptsView.fold(undefined, events.find((e) => e.envelope.event_type === 'attempt.executing')!)).toBeUndefined();
  });
});
