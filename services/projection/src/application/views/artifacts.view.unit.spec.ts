import { describe, expect, it } from 'vitest';
import { artifactOf, executionCompleted, fullPath, storyIds, toProjectedEvents, withPayload } from '../../../test/governed-path.fixture.js';
import { foldStory } from '../../../test/memory-store.js';
import { planEvent } from '../project-event.js';
import { artifactsView } from './artifacts.view.js';

const ids = storyIds('ar1');

describe('artifacts view (the artifact catalog)', () => {
  it('given an execution that captured two artifacts, when folded, then each is catalogued with its hash, kind, size, task and attempt', async () => {
    const events = toProjectedEvents(fullPath(ids));
    const store = await foldStory(events);
    const first = artifactOf(ids, 1, 10);
    const recordedAt = events.find((event) => event.envelope.event_type === 'execution.completed')?.streamSeq;
    expect(store.rows('artifacts')).toHaveLength(2);
    expect(store.row('artifacts', first.artifact_id)).toEqual({
      artifact_id: first.artifact_id,
      sha256: first.content_hash,
      kind: 'command.transcript',
      class: 'evidence',
      media_type: 'text/plain',
      byte_size: first.byte_size,
      uri: first.uri,
      task_id: ids.task,
      step_id: ids.step,
      attempt_id: ids.attempt,
      producer: ids.executor,
      retention_class: 'task',
      sensitivity_class: 'internal',
      event_id: `${ids.task}-execution_completed`,
      event_type: 'execution.completed',
      task_seq: 17,
      created_at: '2030-01-01T00:00:10.000Z',
      // the log sequence of the event that recorded it
      row_version: recordedAt,
    });
  });

  it('plans one row per artifact, and one only for an artifact listed twice', () => {
    const twice = executionCompleted(ids, 'completed', 10, [artifactOf(ids, 1, 10), artifactOf(ids, 1, 10), artifactOf(ids, 2, 10)]);
    const [event] = toProjectedEvents([twice]);
    expect(planEvent({ ...event!, aggregate: { type: 'task', id: ids.task } }, ['artifacts'])).toEqual([
      { view: 'artifacts', locator: { artifact_id: `art-${ids.tag}-1` } },
      { view: 'artifacts', locator: { artifact_id: `art-${ids.tag}-2` } },
    ]);
  });

  it('is immutable: a second record of the same id changes nothing', async () => {
    const store = await foldStory(toProjectedEvents(fullPath(ids)));
    const row = store.row('artifacts', `art-${ids.tag}-1`)!;
    const [again] = toProjectedEvents([executionCompleted(ids, 'completed', 30, [{ ...artifactOf(ids, 1, 30), byte_size: 1 }])]);
    expect(artifactsView.fold(row, again!, { artifact_id: row.artifact_id })).toBe(row);
  });

  it('passes over an entry that is not an Artifact (the log holds what it holds)', () => {
    const broken = withPayload(executionCompleted(ids, 'completed', 10), { artifacts: [{ artifact_id: 'a-1', kind: 'x' }], outcome: 'completed' });
    const [event] = toProjectedEvents([broken]);
    expect(artifactsView.locate(event!)).toBeUndefined();
  });
});
