import { describe, expect, it } from 'vitest';
import { happyPath, storyIds, taskCompleted, toProjectedEvents, withPayload } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { tasksView } from './tasks.view.js';

const ids = storyIds('t1');

describe('tasks view', () => {
  it('creates the task from task.created and moves its status along the kernel edges', async () => {
    // given a task opened, run and completed
    const store = await foldStory(toProjectedEvents(happyPath(ids)));
    // then it is completed, with its title, owner, profile and last event
    expect(store.row('tasks', ids.task)).toMatchObject({
      task_id: ids.task,
      status: 'completed',
      owner_principal_id: ids.principal,
      policy_profile: 'local_edit_allowed',
      last_task_seq: 19,
      last_event_type: 'task.completed',
      created_at: '2030-01-01T00:00:02.000Z',
      updated_at: '2030-01-01T00:00:15.000Z',
    });
  });

  it('stays running after the opening events', async () => {
    const events = toProjectedEvents(happyPath(ids).slice(0, 8));
    expect((await foldStory(events)).row('tasks', ids.task)?.status).toBe('running');
  });

  it('ignores a transition the kernel does not allow from the current status, but still records the event', async () => {
    // given a task that completed
    const events = toProjectedEvents([...happyPath(ids), taskCompleted(ids, 16)]);
    const store = await foldStory(events);
    // then a second task.completed (completed → completed is no edge) leaves the status, and moves last_task_seq
    expect(store.row('tasks', ids.task)).toMatchObject({ status: 'completed', last_task_seq: 20 });
  });

  it('needs task.created to exist: events of an unknown task create no row', () => {
    const [, ready] = toProjectedEvents(happyPath(ids)).slice(1);
    expect(tasksView.fold(undefined, ready!)).toBeUndefined();
  });

  it('an event at or below the last folded task_seq changes nothing', async () => {
    const events = toProjectedEvents(happyPath(ids));
    const store = await foldStory(events);
    const row = store.row('tasks', ids.task);
    expect(tasksView.fold(row, events[5]!)).toBe(row);
  });

  it('falls back to the id when the title is missing', () => {
    const [created] = toProjectedEvents([withPayload(happyPath(ids)[1]!, { at: '2030-01-01T00:00:02Z' })]);
    expect(tasksView.fold(undefined, { ...created!, aggregate: { type: 'task', id: ids.task } })).toMatchObject({ title: ids.task, goal: '' });
  });
});
