import { describe, expect, it } from 'vitest';
import { happyPath, storyIds, toProjectedEvents, withPayload } from '../../test/governed-path.fixture.js';
import { foldStory } from '../../test/memory-store.js';
import { planEvent, withoutNul } from './project-event.js';

const ids = storyIds('pe1');

describe('planEvent', () => {
  it('locates the rows an event touches, view by view: the receipt event touches the timeline, task, action, receipt and attempt', () => {
    const receipt = toProjectedEvents(happyPath(ids)).find((e) => e.envelope.event_type === 'receipt.issued')!;
    expect(planEvent(receipt)).toEqual([
      { view: 'task_events', locator: { task_id: ids.task, task_seq: 17 } },
      { view: 'tasks', locator: { task_id: ids.task } },
      { view: 'actions', locator: { task_id: ids.task, attempt_id: ids.attempt } },
      { view: 'receipts', locator: { receipt_id: ids.receipt } },
      { view: 'attempts', locator: { attempt_id: ids.attempt } },
    ]);
  });

  it('given some views only (a partial rebuild), when planned, then only their rows are', () => {
    const receipt = toProjectedEvents(happyPath(ids)).find((e) => e.envelope.event_type === 'receipt.issued')!;
    expect(planEvent(receipt, ['receipts', 'tasks'])).toEqual([
      { view: 'tasks', locator: { task_id: ids.task } },
      { view: 'receipts', locator: { receipt_id: ids.receipt } },
    ]);
  });
});

describe('withoutNul', () => {
  it('replaces U+0000 (unwritable in Postgres text and jsonb) everywhere, keys included', () => {
    expect(withoutNul({ 'a\u0000': ['x\u0000y', 1, null, { b: 'c\u0000' }] })).toEqual({ 'a\uFFFD': ['x\uFFFDy', 1, null, { b: 'c\uFFFD' }] });
  });

  it('is applied to every changed row, so an event carrying U+0000 stays writable', async () => {
    const story = happyPath(ids);
    const created = story[1]!;
    story[1] = withPayload(created, { ...created.draft.payload, title: 'bad\u0000title' });
    const store = await foldStory(toProjectedEvents(story));
    expect(store.row('tasks', ids.task)?.title).toBe('bad\uFFFDtitle');
    expect(JSON.stringify(store.rows('task_events'))).not.toContain('\\u0000');
  });
});
