import { describe, expect, it } from 'vitest';
import { fullPath, stepMarkedReady, storyIds, toProjectedEvents } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { nextAttemptStatus, stepsView } from './steps.view.js';

const ids = storyIds('st1');

describe('steps view (the step queue)', () => {
  it('given the whole governed path, when folded, then the step succeeded with its one attempt succeeded', async () => {
    const store = await foldStory(toProjectedEvents(fullPath(ids)));
    expect(store.row('steps', ids.step)).toMatchObject({
      step_id: ids.step,
      task_id: ids.task,
      kind: 'edit',
      title: 'Edit src/a.ts',
      status: 'succeeded',
      max_attempts: 3,
      attempt_count: 1,
      current_attempt_id: ids.attempt,
      current_attempt_no: 1,
      current_attempt_status: 'succeeded',
      blocked_reason: null,
      last_event_type: 'step.succeeded',
      planned_at: '2030-01-01T00:00:02.000Z',
    });
  });

  it('given the intake only, when folded, then the step is running and its attempt waits for policy', async () => {
    // the first ten events: ingress.received … attempt.awaiting_policy
    const store = await foldStory(toProjectedEvents(fullPath(ids).slice(0, 10)));
    expect(store.row('steps', ids.step)).toMatchObject({ status: 'running', current_attempt_status: 'awaiting_policy' });
  });

  it('given a step already running, when a step.marked_ready arrives (no edge from running), then the status stays and the event is recorded', async () => {
    const story = fullPath(ids).slice(0, 10);
    const events = toProjectedEvents([...story, stepMarkedReady(ids, 3)]);
    const store = await foldStory(events);
    expect(store.row('steps', ids.step)).toMatchObject({ status: 'running', last_event_type: 'step.marked_ready', last_task_seq: 10 });
  });

  it('given a step row, when an event at or below its last task_seq or from another task comes, then nothing changes', async () => {
    const events = toProjectedEvents(fullPath(ids));
    const store = await foldStory(events);
    const row = store.row('steps', ids.step)!;
    expect(stepsView.fold(row, events[6]!)).toBe(row);
    const foreign = { ...events.at(-2)!, aggregate: { type: 'task', id: 'task-other' }, envelope: { ...events.at(-2)!.envelope, task_seq: 99 } };
    expect(stepsView.fold(row, foreign)).toBe(row);
  });

  it('needs step.planned: other step events of an unknown step create no row', () => {
    const [, , , , , ready] = toProjectedEvents(fullPath(ids));
    expect(stepsView.fold(undefined, ready!)).toBeUndefined();
  });

  it('moves an attempt only along the kernel edges', () => {
    expect(nextAttemptStatus(null, 'attempt.created')).toBe('created');
    expect(nextAttemptStatus('created', 'attempt.leased')).toBe('leased');
    expect(nextAttemptStatus('created', 'attempt.executing')).toBeNull();
    expect(nextAttemptStatus('succeeded', 'attempt.failed')).toBeNull();
    expect(nextAttemptStatus('authorized', 'not.an.event')).toBeNull();
  });
});
