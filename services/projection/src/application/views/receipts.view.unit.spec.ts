import { describe, expect, it } from 'vitest';
import { fakeJws, happyPath, receiptIssued, storyIds, toProjectedEvents } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { receiptsView } from './receipts.view.js';

const ids = storyIds('r1');

describe('receipts view', () => {
  it('keeps the receipt as signed, its JWS and hash, and the action it closes', async () => {
    const jws = fakeJws({ receipt_id: ids.receipt }, 'receipt-k1');
    const story = happyPath(ids).map((e) => (e.draft.event_type === 'receipt.issued' ? receiptIssued(ids, 'succeeded', 13, jws) : e));
    const row = (await foldStory(toProjectedEvents(story))).row('receipts', ids.receipt);
    expect(row).toMatchObject({
      receipt_id: ids.receipt,
      task_id: ids.task,
      attempt_id: ids.attempt,
      action_request_id: ids.actionRequest,
      result_code: 'succeeded',
      receipt_class: 'tool_execution',
      jws,
      receipt_hash: 'a'.repeat(64),
      created_at: '2030-01-01T00:00:13.000Z',
    });
    expect(row?.receipt).toMatchObject({ receipt_id: ids.receipt, capability_grant_ref: `grant:${ids.grant}` });
  });

  it('is immutable: a second receipt.issued of the same id changes nothing', async () => {
    const events = toProjectedEvents(happyPath(ids));
    const store = await foldStory(events);
    const row = store.row('receipts', ids.receipt);
    const [again] = toProjectedEvents([receiptIssued(ids, 'failed', 40)], 99);
    expect(receiptsView.fold(row, again!)).toBe(row);
  });
});
