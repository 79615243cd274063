import { describe, expect, it } from 'vitest';
import { at, cellLifecycle, fullPath, storyIds, toProjectedEvents, type StoryEvent } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { cellsView, executionCellId } from './cells.view.js';

const ids = storyIds('ce1');

describe('cells view', () => {
  it('given a cell created, prepared, activated, checkpointed and closed, when folded, then it is CLOSED with its seats, backend and checkpoint', async () => {
    const store = await foldStory(toProjectedEvents(cellLifecycle('cell-1', 'director-1')));
    expect(store.row('cells', 'cell-1')).toMatchObject({
      source: 'cell',
      status: 'CLOSED',
      director_id: 'director-1',
      backend: 'docker',
      participants: [
        { participant_id: 'director-1', principal_id: 'director-1', role: 'director', status: 'accepted' },
        { participant_id: 'executor-1', principal_id: 'executor-1', role: 'executor', status: 'accepted' },
      ],
      checkpoints: 1,
      last_checkpoint_id: 'cell-1-cp1',
      closed_reason: 'explicit',
      last_event_type: 'cell.closed',
      last_cell_seq: 7,
      created_at: at(1),
    });
  });

  it('given a final checkpoint completed, when folded, then the cell stays CHECKPOINTING until it is closed', async () => {
    const store = await foldStory(toProjectedEvents(cellLifecycle('cell-2', 'director-1').slice(0, 6)));
    expect(store.row('cells', 'cell-2')?.status).toBe('CHECKPOINTING');
  });

  it('is tolerant: an event type it does not know creates the row, is recorded, and changes nothing else', async () => {
    const [first] = cellLifecycle('cell-3', 'director-1');
    const unknown: StoryEvent = { ...first!, draft: { ...first!.draft, event_type: 'cell.graveyarded', payload: { note: 'kept for 30 min' } } };
    const store = await foldStory(toProjectedEvents([unknown]));
    expect(store.row('cells', 'cell-3')).toMatchObject({ status: null, last_event_type: 'cell.graveyarded', participants: [] });
  });

  it("given a task's executions, when folded, then its execution cell carries the container, the environment applied and the outcome", async () => {
    const store = await foldStory(toProjectedEvents(fullPath(ids)));
    expect(store.row('cells', executionCellId(ids.task))).toMatchObject({
      source: 'execution',
      task_id: ids.task,
      status: null,
      image: 'writ/cell:1',
      network_mode: 'none',
      executions: 1,
      last_execution_outcome: 'completed',
      last_event_type: 'execution.completed',
    });
    expect(store.row('cells', executionCellId(ids.task))?.container_id).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a duplicate (seq at or below the last folded) changes nothing', async () => {
    const events = toProjectedEvents(cellLifecycle('cell-4', 'director-1'));
    const store = await foldStory(events);
    const row = store.row('cells', 'cell-4')!;
    expect(cellsView.fold(row, events[2]!)).toBe(row);
  });

  it("given a task's cell events and its executions, when folded, then they meet in the row of the cell named after the task", async () => {
    const store = await foldStory(toProjectedEvents([...cellLifecycle(ids.task, 'director-1').slice(0, 4), ...fullPath(ids)]));
    expect(store.rows('cells')).toHaveLength(1);
    expect(store.row('cells', ids.task)).toMatchObject({
      source: 'cell',
      task_id: ids.task,
      status: 'ACTIVE',
      backend: 'docker',
      image: 'writ/cell:1',
      executions: 1,
      last_cell_seq: 4,
      last_task_seq: 17,
      last_event_type: 'execution.completed',
    });
  });
});
