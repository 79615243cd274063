import { describe, expect, it } from 'vitest';
import { actionRequest, receiptIssued, storyIds, taskOpening, toProjectedEvents, type StoryEvent } from '../../../test/governed-path.fixture.js';
import { memoryReceipt, memoryStory } from '../../../test/knowledge.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { memoryView } from './memory.view.js';

const ids = storyIds('mv1');
const opening = taskOpening(ids, actionRequest(ids));

/** `event` with its payload changed, as a forger (or a bug) would append it. */
function withPayload(event: StoryEvent, change: (payload: Record<string, unknown>) => Record<string, unknown>): StoryEvent {
  return { ...event, draft: { ...event.draft, event_id: `${event.draft.event_id}-x`, payload: change(event.draft.payload) } };
}

describe('memory view (issue 17)', () => {
  it('given a promotion, its receipt, an invalidation and its receipt, when folded, then one row keeps the record, marked invalidated, with its policy and both receipts', async () => {
    const receipt = receiptIssued(ids, 'succeeded', 20);
    const story = [...opening, ...memoryStory(ids, 'mem-1', { invalidateBy: 'attempt-inv' }).slice(0, 1), memoryReceipt(receipt, ids.attempt, 'rcpt-promote')];
    const invalidation = memoryStory(ids, 'mem-1', { invalidateBy: 'attempt-inv' }).slice(1);
    const rows = (await foldStory(toProjectedEvents([...story, ...invalidation, memoryReceipt(receipt, 'attempt-inv', 'rcpt-invalidate')]))).rows('memory');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      memory_id: 'mem-1',
      task_id: ids.task,
      status: 'invalidated',
      claim: 'the API listens on 8080',
      trust_tier: 'observed',
      evidence_refs: [{ kind: 'receipt', id: ids.receipt }],
      promotion_reason: 'every later task on this repository needs the port',
      policy_result_ref: `policy_result:${ids.policyResult}`,
      approval_ref: null,
      receipt_ref: 'receipt:rcpt-promote',
      attempt_id: ids.attempt,
      invalidation_attempt_id: 'attempt-inv',
      invalidation_receipt_ref: 'receipt:rcpt-invalidate',
      invalidated_by: ids.principal,
      invalidation_reason: 'the port moved',
    });
  });

  it('given a promotion forged with an untrusted tier, or of another stream\'s id, when folded, then no row is shown', async () => {
    const [promoted] = memoryStory(ids, 'mem-2');
    const untrusted = withPayload(promoted!, (payload) => ({ ...payload, record: { ...(payload['record'] as object), trust_tier: 'untrusted' } }));
    const elsewhere = withPayload(promoted!, (payload) => ({ ...payload, record: { ...(payload['record'] as object), memory_id: 'mem-other' } }));
    const rows = (await foldStory(toProjectedEvents([...opening, untrusted, elsewhere]))).rows('memory');
    expect(rows).toEqual([]);
  });

  it('given an invalidation naming another record, or a receipt of another class, then the row does not change', async () => {
    const events = toProjectedEvents([...opening, ...memoryStory(ids, 'mem-3')]);
    const row = (await foldStory(events)).rows('memory')[0]!;
    const [stray] = toProjectedEvents([withPayload(memoryStory(ids, 'mem-3', { invalidateBy: 'a-2' })[1]!, (payload) => ({ ...payload, memory_id: 'mem-other' }))], 99);
    expect(memoryView.fold(row, stray!)).toBe(row);
    const [toolReceipt] = toProjectedEvents([receiptIssued(ids, 'succeeded', 30)], 100);
    expect(memoryView.locate(toolReceipt!)).toBeUndefined();
  });
});
