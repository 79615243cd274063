import { PUBLISHED_VIEWS } from '@writ/contracts/projection-rows';
import { createLogger } from '@writ/telemetry';
import { describe, expect, it } from 'vitest';
import { fullPath, storyIds, toProjectedEvents } from '../../test/governed-path.fixture.js';
import { MemoryLog, MemoryProjectionStore } from '../../test/memory-store.js';
import type { UpdatePublisher } from './ports.js';
import type { RawStoredEvent } from './projected-event.js';
import { Projector } from './projector.js';
import { sequenceChanges, type PublishedChange } from './published-change.js';

/**
 * Row versions and what is published with them (issue 16): a changed row of
 * a published view carries the log sequence of the event that changed it, and
 * each published change tells the version its view had before and how many of
 * the view's rows the version changed, so a reader can prove it missed nothing.
 */

const PREFIX = 'writ.evt';
const quiet = createLogger('published-change-test', { level: 'silent' });

class Captured implements UpdatePublisher {
  readonly changes: PublishedChange[] = [];
  publish(changes: readonly PublishedChange[]): void {
    this.changes.push(...changes);
  }
}

function log(tag: string): RawStoredEvent[] {
  return toProjectedEvents(fullPath(storyIds(tag))).map((e) => ({ streamSeq: e.streamSeq, subject: `${PREFIX}.${e.aggregate.type}.${e.aggregate.id}`, payload: e.envelope }));
}

function projector(events: RawStoredEvent[]) {
  const store = new MemoryProjectionStore();
  const published = new Captured();
  return { store, published, projector: new Projector({ store, log: new MemoryLog(events), publisher: published, eventsPrefix: PREFIX, logger: quiet }) };
}

/** Checks the contract a reader relies on, view by view: versions grow, each links to the one before, the counts match. */
function expectUnbrokenChains(changes: readonly PublishedChange[]): void {
  for (const view of PUBLISHED_VIEWS) {
    const ofView = changes.filter((change) => change.view === view);
    let held = 0;
    let current = 0;
    for (const change of ofView) {
      if (change.rowVersion !== current) {
        expect(change.prevVersion, `${view} @${change.rowVersion}`).toBe(held === 0 && current === 0 ? 0 : current);
        held = current;
        current = change.rowVersion;
      }
      expect(change.rowVersion).toBeGreaterThan(change.prevVersion);
      expect(change.versionRows).toBe(ofView.filter((other) => other.rowVersion === change.rowVersion).length);
    }
  }
}

describe('row versions and published changes', () => {
  it('given a governed path applied event by event, when each commits, then every changed row carries the sequence of its event and every view publishes an unbroken chain', async () => {
    // given
    const events = log('pc1');
    const { store, published, projector: p } = projector(events);
    // when
    for (const event of events) await p.handle(event);
    // then each published row's version is the stream sequence of the event that last changed it
    for (const change of published.changes) expect(change.row['row_version']).toBe(change.rowVersion);
    const completed = events.find((e) => (e.payload as { event_type: string }).event_type === 'execution.completed')?.streamSeq;
    const artifacts = published.changes.filter((change) => change.view === 'artifacts');
    expect(artifacts.map((change) => [change.rowVersion, change.versionRows, change.prevVersion])).toEqual([
      [completed, 2, 0],
      [completed, 2, 0],
    ]);
    expectUnbrokenChains(published.changes);
    // and the stored rows hold the version of their last change
    expect(store.row('tasks', storyIds('pc1').task)?.row_version).toBe(published.changes.filter((c) => c.view === 'tasks').at(-1)?.rowVersion);
  });

  it('given the same log caught up in one batch, then the rows and what is published equal the event-by-event run', async () => {
    const events = log('pc2');
    const one = projector(events);
    for (const event of events) await one.projector.handle(event);
    // when the whole log is applied as a catch-up (one transaction)
    const batch = projector(events);
    await batch.projector.catchUp();
    // then
    expect(await batch.store.snapshot()).toEqual(await one.store.snapshot());
    expect(batch.published.changes.map(({ view, id, rowVersion, prevVersion, versionRows }) => ({ view, id, rowVersion, prevVersion, versionRows }))).toEqual(
      one.published.changes.map(({ view, id, rowVersion, prevVersion, versionRows }) => ({ view, id, rowVersion, prevVersion, versionRows })),
    );
  });

  it('given an event that changes no row (a redelivered duplicate in the log), then nothing is published and no version moves', async () => {
    const events = log('pc3');
    const { store, published, projector: p } = projector(events);
    for (const event of events) await p.handle(event);
    const before = await store.snapshot();
    const count = published.changes.length;
    // when the last event is in the log again (a late copy: same task_seq)
    const last = events.at(-1) as RawStoredEvent;
    const again = projector([...events, { ...last, streamSeq: last.streamSeq + 1 }]);
    for (const event of events) await again.projector.handle(event);
    await again.projector.handle({ ...last, streamSeq: last.streamSeq + 1 });
    // then the rows are as before, and the copy published nothing
    expect((await again.store.snapshot()).views).toEqual(before.views);
    expect(again.published.changes.length).toBe(count);
    expect(published.changes.length).toBe(count);
  });

  it('given views that already hold rows, when a transaction publishes, then its first change of each view links to the committed version', () => {
    const row = { task_id: 't-1', row_version: 42 };
    const [change] = sequenceChanges([{ view: 'tasks', row } as never], { tasks: 17 });
    expect(change).toMatchObject({ view: 'tasks', id: 't-1', rowVersion: 42, prevVersion: 17, versionRows: 1 });
    // and a view that is not published (the raw timeline) publishes nothing
    expect(sequenceChanges([{ view: 'task_events', row: { task_id: 't-1', task_seq: 1 } } as never], {})).toEqual([]);
  });
});
