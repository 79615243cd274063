import { hasErrorCode } from '@writ/contracts';
import { createLogger } from '@writ/telemetry';
import { describe, expect, it } from 'vitest';
import { happyPath, storyIds, toProjectedEvents } from '../../test/governed-path.fixture.js';
import { MemoryLog, MemoryProjectionStore } from '../../test/memory-store.js';
import type { UpdatePublisher } from './ports.js';
import type { RawStoredEvent } from './projected-event.js';
import type { PublishedChange } from './published-change.js';
import { BACKLOG_CATCH_UP, CATCH_UP_BATCH, Projector, SKIPPING_CATCH_UP_INTERVAL_MS } from './projector.js';
import { rebuildProjection } from './rebuild.js';

const PREFIX = 'writ.evt';
const ids = storyIds('pj1');
const quiet = createLogger('projector-test', { level: 'silent' });

/** The log as the stream would deliver it: subject, sequence, envelope. */
function raws(): RawStoredEvent[] {
  return toProjectedEvents(happyPath(ids)).map((e) => ({ streamSeq: e.streamSeq, subject: `${PREFIX}.${e.aggregate.type}.${e.aggregate.id}`, payload: e.envelope }));
}

class Published implements UpdatePublisher {
  readonly changes: PublishedChange[] = [];
  publish(changes: readonly PublishedChange[]): void {
    this.changes.push(...changes);
  }
}

function rig(events = raws()) {
  const store = new MemoryProjectionStore();
  const published = new Published();
  const projector = new Projector({ store, log: new MemoryLog(events), publisher: published, eventsPrefix: PREFIX, logger: quiet });
  return { store, published, projector, events };
}

describe('Projector', () => {
  it('applies events in order, moving the checkpoint one by one, and publishes what changed', async () => {
    const { store, published, projector, events } = rig();
    for (const event of events) expect(await projector.handle(event)).toBe('applied');
    expect(store.lastSeq).toBe(events.length);
    expect(store.row('actions', ids.actionRequest)?.status).toBe('succeeded');
    expect(published.changes.filter((c) => c.view === 'actions').at(-1)?.row).toMatchObject({ status: 'succeeded' });
  });

  it('given views folded from a longer log (a recreated stream, another deployment), when catching up at start, then it refuses with PROJECTION_CHECKPOINT_AHEAD and folds nothing', async () => {
    // given views whose checkpoint is past the end of this log
    const { store, published, projector, events } = rig();
    for (const event of events) await projector.handle(event);
    const shorter = new Projector({ store, log: new MemoryLog(events.slice(0, 3)), publisher: published, eventsPrefix: PREFIX, logger: quiet });
    const before = await store.snapshot();
    // when it catches up at start
    const refused = await shorter.catchUp().catch((error: unknown) => error);
    // then it refuses by code, naming both positions, and the views are untouched
    expect(hasErrorCode(refused, 'PROJECTION_CHECKPOINT_AHEAD')).toBe(true);
    expect((refused as Error).message).toMatch(new RegExp(`at stream seq ${events.length} but the log ends at 3`));
    expect(await store.snapshot()).toEqual(before);
  });

  it('skips a redelivered event at or below the checkpoint: nothing written, nothing published', async () => {
    const { store, published, projector, events } = rig();
    for (const event of events) await projector.handle(event);
    const before = await store.snapshot();
    const publishedBefore = published.changes.length;
    expect(await projector.handle(events[4]!)).toBe('skipped');
    expect(await store.snapshot()).toEqual(before);
    expect(published.changes.length).toBe(publishedBefore);
  });

  it('fills a gap from the log before applying a later event (a failed event retried after its successors)', async () => {
    // given events 1..3 applied and 4 failed (its redelivery comes later)
    const { store, projector, events } = rig();
    for (const event of events.slice(0, 3)) await projector.handle(event);
    // when event 6 arrives first
    expect(await projector.handle(events[5]!)).toBe('applied');
    // then 4 and 5 were read from the log and applied before it, and 4's redelivery is skipped
    expect(store.lastSeq).toBe(6);
    expect(await projector.handle(events[3]!)).toBe('skipped');
  });

  it('given junk the log judged (invariant 10), when it is delivered, then the checkpoint moves past it, its record is kept, and nothing is retried or dead-lettered', async () => {
    // given a log with junk at stream seq 3
    const events = raws();
    const record = { stream: 'EVENTS', subject: events[2]!.subject, stream_seq: 3, reason: 'QUARANTINE_NOT_JSON' as const, sha256: 'a'.repeat(64), bytes: 4, detail: 'the bytes are not UTF-8 JSON' };
    const logged = [...events.slice(0, 2), { streamSeq: 3, subject: events[2]!.subject, payload: undefined, quarantined: record }, ...events.slice(2).map((e) => ({ ...e, streamSeq: e.streamSeq + 1 }))];
    const { store, projector } = rig(logged);
    // when every message is delivered
    for (const message of logged) expect(await projector.handle(message)).toBe('applied');
    // then all were passed, the junk is recorded, and the rows are those of the log without it
    expect(store.lastSeq).toBe(logged.length);
    expect(await store.quarantined(10)).toEqual({ total: 1, by_reason: { QUARANTINE_NOT_JSON: 1 }, latest: [record] });
    expect(store.row('actions', ids.actionRequest)?.status).toBe('succeeded');
  });

  it('given a log that hands over a message unjudged that is not an envelope, then it is passed over and recorded as quarantined too', async () => {
    const { store, projector, events } = rig([...raws().slice(0, 2), { streamSeq: 3, subject: `${PREFIX}.task.${ids.task}`, payload: { hello: 'world' } }]);
    for (const event of events) await projector.handle(event);
    expect(store.lastSeq).toBe(3);
    expect((await store.quarantined(1)).by_reason).toEqual({ QUARANTINE_NOT_ENVELOPE: 1 });
  });

  it('a database outage applies nothing and surfaces PROJECTION_DB_UNAVAILABLE-like failures unchanged for a retry', async () => {
    const { store, projector, events } = rig();
    store.failWith = Object.assign(new Error('down'), { code: 'PROJECTION_DB_UNAVAILABLE' });
    await expect(projector.handle(events[0]!)).rejects.toSatisfy((error) => hasErrorCode(error, 'PROJECTION_DB_UNAVAILABLE'));
    store.failWith = undefined;
    expect(store.lastSeq).toBe(0);
    expect(await projector.handle(events[0]!)).toBe('applied');
  });

  it('given a message that is not an envelope in the log, when catching up, then it is passed over (as handle does) and what follows is applied', async () => {
    const events = raws();
    const junk = { ...events[2]!, payload: { hello: 'world' } };
    const { store, projector } = rig([...events.slice(0, 2), junk, ...events.slice(3)]);
    expect(await projector.catchUp()).toBe(events.length);
    expect(store.lastSeq).toBe(events.length);
    expect((await store.quarantined(10)).latest.map((r) => r.stream_seq)).toEqual([3]);
    // and its later delivery is a redelivery, skipped
    expect(await projector.handle(junk)).toBe('skipped');
  });

  it('given a delivery with a backlog behind it, when it is handled, then the log is applied in batches, the rows are those of a one-by-one fold, and the deliveries behind it are skipped', async () => {
    // given event 1 applied, and the rest of the story already in the log
    const { store, published, projector, events } = rig();
    expect(events.length).toBeLessThanOrEqual(CATCH_UP_BATCH);
    await projector.handle(events[0]!);
    let transactions = 0;
    const transaction = store.transaction.bind(store);
    store.transaction = (work) => {
      transactions += 1;
      return transaction(work);
    };
    // when event 2 arrives with a backlog behind it
    expect(await projector.handle({ ...events[1]!, pending: BACKLOG_CATCH_UP })).toBe('applied');
    // then one transaction applied everything the log holds
    expect(transactions).toBe(1);
    expect(store.lastSeq).toBe(events.length);
    const oneByOne = rig();
    for (const event of oneByOne.events) await oneByOne.projector.handle(event);
    expect(await store.snapshot()).toEqual(await oneByOne.store.snapshot());
    expect(published.changes.filter((c) => c.view === 'actions').at(-1)?.row).toMatchObject({ status: 'succeeded' });
    // and the deliveries behind it cost no transaction
    for (const event of events.slice(2)) expect(await projector.handle({ ...event, pending: 0 })).toBe('skipped');
    expect(transactions).toBe(1);
  });

  it('given the durable walking back over deliveries a catch-up applied while the log grows, when it skips them, then the views catch up from the log at most once per interval instead of waiting for it', async () => {
    // given the first half of the story caught up (the durable still at its start), and a clock
    const events = raws();
    const half = Math.floor(events.length / 2);
    const log = new MemoryLog(events.slice(0, half));
    const store = new MemoryProjectionStore();
    let now = 0;
    const projector = new Projector({ store, log, publisher: new Published(), eventsPrefix: PREFIX, logger: quiet, now: () => now });
    expect(await projector.handle({ ...events[0]!, pending: BACKLOG_CATCH_UP })).toBe('applied');
    expect(store.lastSeq).toBe(half);
    // when the rest of the story reaches the log and the durable skips redeliveries with a backlog behind them
    log.events.push(...events.slice(half));
    expect(await projector.handle({ ...events[1]!, pending: BACKLOG_CATCH_UP })).toBe('skipped');
    // then within the interval nothing is read from the log
    expect(store.lastSeq).toBe(half);
    // and once it has passed, the next skipped delivery brings the views to the end of the log
    now += SKIPPING_CATCH_UP_INTERVAL_MS;
    expect(await projector.handle({ ...events[2]!, pending: BACKLOG_CATCH_UP })).toBe('skipped');
    expect(store.lastSeq).toBe(events.length);
    // and a skipped delivery with no backlog behind it never reads the log
    log.events.push({ ...events.at(-1)!, streamSeq: events.length + 1 });
    now += SKIPPING_CATCH_UP_INTERVAL_MS;
    expect(await projector.handle({ ...events[3]!, pending: 0 })).toBe('skipped');
    expect(store.lastSeq).toBe(events.length);
  });

  it('given a backlog longer than one delivery may apply, when deliveries arrive, then each applies at most its share and the views reach the end over the next ones', async () => {
    // given event 1 applied and the rest of the story in the log, at most 5 messages per delivery
    const events = raws();
    const store = new MemoryProjectionStore();
    let now = 0;
    const projector = new Projector({ store, log: new MemoryLog(events), publisher: new Published(), eventsPrefix: PREFIX, logger: quiet, now: () => now, catchUpPerDelivery: 5 });
    await projector.handle(events[0]!);
    expect(events.length).toBeGreaterThan(11);
    // when event 2 arrives with a backlog behind it
    expect(await projector.handle({ ...events[1]!, pending: BACKLOG_CATCH_UP })).toBe('applied');
    // then 5 messages were applied (2..6), not the whole log
    expect(store.lastSeq).toBe(6);
    // and the next deliveries (skipped, backlog behind them) bring the rest, one share per interval
    while (store.lastSeq < events.length) {
      now += SKIPPING_CATCH_UP_INTERVAL_MS;
      const before = store.lastSeq;
      expect(await projector.handle({ ...events[2]!, pending: BACKLOG_CATCH_UP })).toBe('skipped');
      expect(store.lastSeq - before).toBeLessThanOrEqual(5);
      expect(store.lastSeq).toBeGreaterThan(before);
    }
    // and the views equal a one-by-one fold
    const oneByOne = rig();
    for (const event of oneByOne.events) await oneByOne.projector.handle(event);
    expect(await store.snapshot()).toEqual(await oneByOne.store.snapshot());
  });

  it('given a delivery with fewer than BACKLOG_CATCH_UP messages behind it, when it is handled, then it alone is applied', async () => {
    const { store, projector, events } = rig();
    expect(await projector.handle({ ...events[0]!, pending: BACKLOG_CATCH_UP - 1 })).toBe('applied');
    expect(store.lastSeq).toBe(1);
  });

  describe('group commit', () => {
    /** Counts the store's transactions from here on. */
    function countTransactions(store: MemoryProjectionStore): { readonly count: () => number } {
      let transactions = 0;
      const transaction = store.transaction.bind(store);
      store.transaction = (work) => {
        transactions += 1;
        return transaction(work);
      };
      return { count: () => transactions };
    }

    it('given deliveries handed over together, out of order, when they are handled, then one transaction applies them in stream order and each settles applied; the rows equal a one-by-one fold', async () => {
      // given a whole story delivered at once, in shuffled order
      const { store, published, projector, events } = rig();
      const transactions = countTransactions(store);
      const shuffled = [...events].reverse();
      // when every delivery is handed over before any settles
      const outcomes = await Promise.all(shuffled.map((event) => projector.handle({ ...event, pending: 0 })));
      // then each is applied, all in one transaction
      expect(outcomes).toEqual(shuffled.map(() => 'applied'));
      expect(transactions.count()).toBe(1);
      expect(store.lastSeq).toBe(events.length);
      const oneByOne = rig();
      for (const event of oneByOne.events) await oneByOne.projector.handle(event);
      expect(await store.snapshot()).toEqual(await oneByOne.store.snapshot());
      expect(published.changes).toEqual(oneByOne.published.changes);
    });

    it('given a delivery handed over while a group is being committed, when that commit ends, then the delivery is applied in the next group, not left waiting', async () => {
      // given event 1 being committed, and event 2 arriving during its transaction
      const { store, projector, events } = rig();
      const transaction = store.transaction.bind(store);
      let second: Promise<unknown> | undefined;
      store.transaction = (work) => {
        second ??= projector.handle(events[1]!);
        return transaction(work);
      };
      // when event 1 settles
      expect(await projector.handle(events[0]!)).toBe('applied');
      // then event 2 settles too, applied after it
      expect(await second).toBe('applied');
      expect(store.lastSeq).toBe(2);
    });

    it('given a group with a hole (another instance took those deliveries), when it is handled, then the hole is filled from the log first and every run is applied in order', async () => {
      // given deliveries 1-2 and 5-6 handed over together; 3-4 went elsewhere and are only in the log
      const { store, projector, events } = rig();
      const handed = [events[0]!, events[1]!, events[4]!, events[5]!];
      // when they are handled
      const outcomes = await Promise.all(handed.map((event) => projector.handle({ ...event, pending: 0 })));
      // then all four settle applied, and the checkpoint passed 3-4 in order
      expect(outcomes).toEqual(['applied', 'applied', 'applied', 'applied']);
      expect(store.lastSeq).toBe(6);
      const oneByOne = rig();
      for (const event of oneByOne.events.slice(0, 6)) await oneByOne.projector.handle(event);
      expect(await store.snapshot()).toEqual(await oneByOne.store.snapshot());
    });

    it('given a database outage during a group, when it is handled, then every delivery of the group fails with the outage code and nothing is applied; their redelivery applies them', async () => {
      // given a store that is down
      const { store, projector, events } = rig();
      store.failWith = Object.assign(new Error('down'), { code: 'PROJECTION_DB_UNAVAILABLE' });
      // when three deliveries are handed over together
      const settled = await Promise.allSettled(events.slice(0, 3).map((event) => projector.handle(event)));
      // then each is refused with the code, and the checkpoint has not moved
      for (const outcome of settled) {
        expect(outcome.status).toBe('rejected');
        expect(hasErrorCode((outcome as PromiseRejectedResult).reason, 'PROJECTION_DB_UNAVAILABLE')).toBe(true);
      }
      expect(store.lastSeq).toBe(0);
      // and once it is back, their redelivery applies them
      store.failWith = undefined;
      expect(await Promise.all(events.slice(0, 3).map((event) => projector.handle(event)))).toEqual(['applied', 'applied', 'applied']);
      expect(store.lastSeq).toBe(3);
    });

    it('given deliveries that carry their bytes, when they arrive together, then the log judges the run in one call (a get per aggregate, not per event); without bytes, each is read', async () => {
      // given a log that counts the runs it judged
      const events = raws();
      const log = new MemoryLog(events);
      const store = new MemoryProjectionStore();
      const projector = new Projector({ store, log, publisher: new Published(), eventsPrefix: PREFIX, logger: quiet });
      const bytes = new TextEncoder().encode('delivered');
      // when the first half arrives with its bytes, then the rest without
      const half = Math.floor(events.length / 2);
      await Promise.all(events.slice(0, half).map((event) => projector.handle({ ...event, data: bytes })));
      await Promise.all(events.slice(half).map((event) => projector.handle(event)));
      // then one run was judged whole, and every event is applied
      expect(log.runsJudged).toBe(1);
      expect(store.lastSeq).toBe(events.length);
    });

    it('given the same delivery twice in one group, when it is handled, then it is applied once and the copy is skipped', async () => {
      const { store, projector, events } = rig();
      const outcomes = await Promise.all([projector.handle(events[0]!), projector.handle(events[1]!), projector.handle(events[1]!)]);
      expect([...outcomes].sort()).toEqual(['applied', 'applied', 'skipped']);
      expect(store.lastSeq).toBe(2);
    });
  });

  it('catchUp applies whatever the log holds beyond the checkpoint', async () => {
    const { store, projector, events } = rig();
    await projector.handle(events[0]!);
    expect(await projector.catchUp()).toBe(events.length - 1);
    expect(store.lastSeq).toBe(events.length);
    expect(await projector.catchUp()).toBe(0);
  });
});

describe('rebuildProjection', () => {
  it('replays the log into a fresh store and finds every view identical to the live one', async () => {
    const { store: live, projector, events } = rig();
    for (const event of events) await projector.handle(event);
    const report = await rebuildProjection({ log: new MemoryLog(events), live, target: new MemoryProjectionStore(), eventsPrefix: PREFIX });
    expect(report.identical).toBe(true);
    expect(report.lastSeq).toBe(events.length);
    expect(report.views.find((v) => v.view === 'task_events')?.live.rows).toBe(19);
  });

  it('detects a live row that the log does not explain', async () => {
    const { store: live, projector, events } = rig();
    for (const event of events) await projector.handle(event);
    const row = live.row('actions', ids.actionRequest)!;
    live.tables.get('actions')!.set(ids.actionRequest, { ...row, status: 'failed' });
    const report = await rebuildProjection({ log: new MemoryLog(events), live, target: new MemoryProjectionStore(), eventsPrefix: PREFIX });
    expect(report.identical).toBe(false);
    expect(report.views.filter((v) => !v.match).map((v) => v.view)).toEqual(['actions']);
  });

  it('refuses a target that already holds a projection', async () => {
    const { store: live, projector, events } = rig();
    await projector.handle(events[0]!);
    await expect(rebuildProjection({ log: new MemoryLog(events), live, target: live, eventsPrefix: PREFIX })).rejects.toSatisfy((error) =>
      hasErrorCode(error, 'PROJECTION_REBUILD_TARGET_INVALID'),
    );
  });
});
