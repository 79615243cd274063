import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { EventDraft, EventEnvelope } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import { connectTestNats, deleteStreams, NATS_URL, startNatsPullBlackhole, testNatsAuth, uniqueName, waitFor } from '@writ/testing';
import { taskDraft } from '../test/support/drafts.js';
import { testStreamNames } from '../test/support/test-stream.js';
import { sealEvent } from './event-chain.js';
import { EventStore, type StoredEvent } from './event-store.js';
import { isEventStoreError } from './eventstore-errors.js';
import type { EventStoreConfigInput } from './stream-config.js';

function link(event: EventEnvelope): { taskSeq: number; hash: string } {
  return { taskSeq: event.task_seq, hash: event.hash };
}

describe('EventStore (real NATS)', () => {
  let nc: NatsConnection;
  const streams: string[] = [];

  beforeAll(async () => {
    nc = await connectTestNats('eventstore-int');
  });

  afterAll(async () => {
    await deleteStreams(nc, ...streams);
    await nc.close();
  });

  async function openStore(overrides: EventStoreConfigInput = {}, connection: NatsConnection = nc): Promise<EventStore> {
    const names = testStreamNames();
    streams.push(names.stream);
    return EventStore.open(connection, { ...names, ...overrides });
  }

  /** A second store (own head cache) on the same stream, as another process would have. */
  function sibling(store: EventStore, connection: NatsConnection = nc): Promise<EventStore> {
    const { stream, subjectPrefix, maxBytes, maxMsgSize } = store.config;
    return EventStore.open(connection, { stream, subjectPrefix, maxBytes, maxMsgSize });
  }

  function drafts(taskId: string, count: number): EventDraft[] {
    return Array.from({ length: count }, (_, n) => taskDraft(taskId, { payload: { n } }));
  }

  /** Publishes a message straight onto the stream, bypassing the store, as a tamperer would. */
  async function publishRaw(subject: string, body: unknown): Promise<number> {
    const ack = await jetstream(nc).publish(subject, JSON.stringify(body));
    return ack.seq;
  }

  describe('append and read', () => {
    it('appends a new task and reads it back as a valid chain', async () => {
      // given an empty task
      const store = await openStore();
      const taskId = uniqueName('task');
      // when three events are appended at expectedSeq 0
      const result = await store.append(taskId, drafts(taskId, 3), 0);
      // then they are task_seq 1..3, chained, on the task's subject
      expect(result.taskSeq).toBe(3);
      expect(result.events.map((e) => [e.taskSeq, e.duplicate])).toEqual([
        [1, false],
        [2, false],
        [3, false],
      ]);
      const read = await store.read(taskId);
      expect(read.map((s) => s.event.task_seq)).toEqual([1, 2, 3]);
      expect(read.map((s) => s.streamSeq)).toEqual(result.events.map((e) => e.streamSeq));
      expect(read.every((s) => s.subject === `${store.config.subjectPrefix}.task.${taskId}`)).toBe(true);
      expect(read[0]!.event.prev_event_hash).toBeNull();
      expect(read[1]!.event.prev_event_hash).toBe(read[0]!.event.hash);
      expect(read[2]!.event.hash).toBe(result.hash);
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: true, length: 3, head: { taskSeq: 3, streamSeq: result.streamSeq } });
      expect(await store.head(taskId)).toEqual({ taskSeq: 3, streamSeq: result.streamSeq, hash: result.hash });
    });

    it('continues a task from the head another store wrote', async () => {
      // given a task written by one store
      const writer = await openStore();
      const taskId = uniqueName('task');
      await writer.append(taskId, drafts(taskId, 2), 0);
      // when another store (empty cache) appends at the head it was told
      const other = await sibling(writer);
      const result = await other.append(taskId, drafts(taskId, 1), 2);
      // then the chain continues
      expect(result.taskSeq).toBe(3);
      expect((await writer.verifyChain(taskId)).ok).toBe(true);
    });

    it('reads a task with no events as empty', async () => {
      const store = await openStore();
      const taskId = uniqueName('task');
      expect(await store.read(taskId)).toEqual([]);
      expect(await store.head(taskId)).toEqual({ taskSeq: 0, streamSeq: 0, hash: null });
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: true, length: 0 });
    });

    it('keeps tasks apart on one stream', async () => {
      // given two tasks appended to in turn
      const store = await openStore();
      const [a, b] = [uniqueName('task'), uniqueName('task')];
      await store.append(a, drafts(a, 1), 0);
      await store.append(b, drafts(b, 2), 0);
      await store.append(a, drafts(a, 1), 1);
      // then each reads only its own events, numbered from 1
      expect((await store.read(a)).map((s) => s.event.task_seq)).toEqual([1, 2]);
      expect((await store.read(b)).map((s) => s.event.task_id)).toEqual([b, b]);
    });
  });

  describe('optimistic concurrency', () => {
    it('rejects an append at a stale expectedSeq with a conflict carrying both sequences', async () => {
      // given a task at task_seq 2
      const store = await openStore();
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 2), 0);
      // when appending as if it were new, or ahead of the log
      // then each is a conflict naming the expected and actual task_seq
      await expect(store.append(taskId, drafts(taskId, 1), 0)).rejects.toMatchObject({
        code: 'EVENTSTORE_CONFLICT',
        details: { expectedSeq: 0, actualSeq: 2, appended: [] },
      });
      await expect(store.append(taskId, drafts(taskId, 1), 1)).rejects.toMatchObject({
        code: 'EVENTSTORE_CONFLICT',
        details: { expectedSeq: 1, actualSeq: 2 },
      });
      await expect(store.append(taskId, drafts(taskId, 1), 5)).rejects.toMatchObject({
        code: 'EVENTSTORE_CONFLICT',
        details: { expectedSeq: 5, actualSeq: 2 },
      });
      expect((await store.read(taskId)).length).toBe(2);
    });

    it('turns a stale head cache into a conflict, then recovers after a re-read', async () => {
      // given store A wrote task_seq 1 (and caches it), then store B wrote task_seq 2
      const a = await openStore();
      const b = await sibling(a);
      const taskId = uniqueName('task');
      await a.append(taskId, drafts(taskId, 1), 0);
      await b.append(taskId, drafts(taskId, 1), 1);
      // when A appends at what its cache says, then it loses
      await expect(a.append(taskId, drafts(taskId, 1), 1)).rejects.toMatchObject({
        code: 'EVENTSTORE_CONFLICT',
        details: { expectedSeq: 1, actualSeq: 2 },
      });
      // when A re-reads and retries, then it appends after B's event
      const head = await a.head(taskId);
      expect((await a.append(taskId, drafts(taskId, 1), head.taskSeq)).taskSeq).toBe(3);
      expect((await b.verifyChain(taskId)).ok).toBe(true);
    });

    it('lets exactly one of ten racing writers win each sequence; retries land every event exactly once', async () => {
      // given ten writers, each on its own connection and store, and one task
      const first = await openStore();
      const connections = await Promise.all(Array.from({ length: 10 }, (_, i) => connectTestNats(`eventstore-writer-${i}`)));
      try {
        const writers = await Promise.all(connections.map((c) => sibling(first, c)));
        const taskId = uniqueName('task');
        const mine = writers.map(() => taskDraft(taskId));

        // when all ten append at expectedSeq 0 at once
        const race = await Promise.allSettled(writers.map((w, i) => w.append(taskId, [mine[i]!], 0)));

        // then one wins task_seq 1 and nine get a conflict pointing at it
        const winners = race.filter((r) => r.status === 'fulfilled');
        const losers = race.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(winners).toHaveLength(1);
        expect(losers).toHaveLength(9);
        for (const loser of losers) {
          expect(loser.reason).toMatchObject({ code: 'EVENTSTORE_CONFLICT', details: { expectedSeq: 0, actualSeq: 1 } });
        }

        // when the losers re-read and retry until they land
        const won: number[] = [(winners[0] as PromiseFulfilledResult<{ taskSeq: number }>).value.taskSeq];
        await Promise.all(
          race.map(async (r, i) => {
            if (r.status === 'fulfilled') return;
            for (let attempt = 0; attempt < 100; attempt++) {
              const head = await writers[i]!.head(taskId);
              try {
                won.push((await writers[i]!.append(taskId, [mine[i]!], head.taskSeq)).taskSeq);
                return;
              } catch (error) {
                if (!isEventStoreError(error, 'EVENTSTORE_CONFLICT')) throw error;
              }
            }
            throw new Error(`writer ${i} never landed its event`);
          }),
        );

        // then each sequence had exactly one winner
        expect([...won].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        // and every writer's event is there exactly once, in a valid chain 1..10
        const read = await first.read(taskId);
        expect(read.map((s) => s.event.task_seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        expect(new Set(read.map((s) => s.event.event_id))).toEqual(new Set(mine.map((d) => d.event_id)));
        expect((await first.verifyChain(taskId)).ok).toBe(true);
      } finally {
        await Promise.all(connections.map((c) => c.close()));
      }
    });

    it('keeps a valid chain under many concurrent multi-event writers', async () => {
      // given five writers that each append three batches of two events to one task
      const first = await openStore();
      const writers = await Promise.all(Array.from({ length: 5 }, () => sibling(first)));
      const taskId = uniqueName('task');
      // when they all run at once, re-reading and retrying on conflict
      await Promise.all(
        writers.map(async (writer) => {
          for (let batch = 0; batch < 3; batch++) {
            const events = drafts(taskId, 2);
            for (;;) {
              const head = await writer.head(taskId);
              try {
                await writer.append(taskId, events, head.taskSeq);
                break;
              } catch (error) {
                if (!isEventStoreError(error, 'EVENTSTORE_CONFLICT')) throw error;
                // A conflict after the first event leaves a stored prefix; resend only the rest.
                const stored = new Set(error.details.appended.map((e) => e.eventId));
                events.splice(0, events.length, ...events.filter((d) => !stored.has(d.event_id)));
                if (events.length === 0) break;
              }
            }
          }
        }),
      );
      // then all 30 events are stored once, as one chain
      const read = await first.read(taskId);
      expect(read).toHaveLength(30);
      expect(new Set(read.map((s) => s.event.event_id)).size).toBe(30);
      expect((await first.verifyChain(taskId)).ok).toBe(true);
    });
  });

  describe('idempotency', () => {
    it('stores a re-sent append once and reports the original sequences as duplicates', async () => {
      // given an append of two events that landed
      const store = await openStore();
      const taskId = uniqueName('task');
      const batch = drafts(taskId, 2);
      const original = await store.append(taskId, batch, 0);
      // when the same append is sent again, by this store and by a fresh one
      const again = await store.append(taskId, batch, 0);
      const elsewhere = await (await sibling(store)).append(taskId, batch, 0);
      // then nothing new is stored and the original sequences come back, marked duplicate
      for (const retry of [again, elsewhere]) {
        expect(retry.events.map((e) => [e.taskSeq, e.streamSeq, e.hash, e.duplicate])).toEqual(
          original.events.map((e) => [e.taskSeq, e.streamSeq, e.hash, true]),
        );
      }
      expect((await store.read(taskId)).length).toBe(2);
    });

    it('dedupes by idempotency key even when the event id differs', async () => {
      // given an event appended under an idempotency key
      const store = await openStore();
      const taskId = uniqueName('task');
      const first = await store.append(taskId, [taskDraft(taskId, { idempotency_key: 'grant-issue-1' })], 0);
      // when another event with the same key is appended (a re-run decider minting a new id)
      const second = await store.append(taskId, [taskDraft(taskId, { idempotency_key: 'grant-issue-1' })], 0);
      // then the original is returned and the log holds one event
      expect(second.events[0]).toMatchObject({ duplicate: true, streamSeq: first.events[0]!.streamSeq, eventId: first.events[0]!.eventId });
      expect((await store.read(taskId)).length).toBe(1);
    });

    it('scopes keys per task, so equal keys on two tasks are two events', async () => {
      const store = await openStore();
      const [a, b] = [uniqueName('task'), uniqueName('task')];
      await store.append(a, [taskDraft(a, { idempotency_key: 'k' })], 0);
      const other = await store.append(b, [taskDraft(b, { idempotency_key: 'k' })], 0);
      expect(other.events[0]!.duplicate).toBe(false);
    });

    it('completes a multi-event append that stopped half way when it is retried', async () => {
      // given an append of three events of which only the first landed (the writer died)
      const store = await openStore();
      const taskId = uniqueName('task');
      const batch = drafts(taskId, 3);
      await store.append(taskId, batch.slice(0, 1), 0);
      expect((await store.verifyChain(taskId)).ok).toBe(true);
      // when the whole append is retried as it was
      const retry = await store.append(taskId, batch, 0);
      // then the prefix is recognised and the rest appended, as one valid chain
      expect(retry.events.map((e) => [e.taskSeq, e.duplicate])).toEqual([
        [1, true],
        [2, false],
        [3, false],
      ]);
      expect((await store.read(taskId)).map((s) => s.event.event_id)).toEqual(batch.map((d) => d.event_id));
      expect((await store.verifyChain(taskId)).ok).toBe(true);
    });

    it('refuses one append with two events under the same key', async () => {
      const store = await openStore();
      const taskId = uniqueName('task');
      const twice = [taskDraft(taskId, { idempotency_key: 'same' }), taskDraft(taskId, { idempotency_key: 'same' })];
      await expect(store.append(taskId, twice, 0)).rejects.toMatchObject({ code: 'EVENTSTORE_REQUEST_INVALID' });
      expect((await store.head(taskId)).taskSeq).toBe(0);
    });
  });

  describe('validation and limits', () => {
    it('refuses an invalid draft with the contract code and writes nothing', async () => {
      // given a batch whose second draft has no event type
      const store = await openStore();
      const taskId = uniqueName('task');
      const { event_type: _missing, ...broken } = taskDraft(taskId);
      // when it is appended, then the contract code comes back and the task stays empty
      await expect(store.append(taskId, [taskDraft(taskId), broken], 0)).rejects.toMatchObject({ code: 'CONTRACT_INVALID' });
      expect((await store.head(taskId)).taskSeq).toBe(0);
    });

    it.each([
      { note: 'a task id that is not a subject token', taskId: 'a.b', expectedSeq: 0, code: 'CONTRACT_INVALID' },
      { note: 'a negative expectedSeq', taskId: 'task-x', expectedSeq: -1, code: 'EVENTSTORE_REQUEST_INVALID' },
      { note: 'a fractional expectedSeq', taskId: 'task-x', expectedSeq: 1.5, code: 'EVENTSTORE_REQUEST_INVALID' },
    ])('refuses $note', async ({ taskId, expectedSeq, code }) => {
      const store = await openStore();
      await expect(store.append(taskId, [taskDraft('task-x')], expectedSeq)).rejects.toMatchObject({ code });
    });

    it('refuses a replay from a sequence that is not positive', async () => {
      const store = await openStore();
      await expect(store.replay(0, () => undefined)).rejects.toMatchObject({ code: 'EVENTSTORE_REQUEST_INVALID' });
    });

    it('refuses an empty append and a non-JSON payload', async () => {
      const store = await openStore();
      const taskId = uniqueName('task');
      await expect(store.append(taskId, [], 0)).rejects.toMatchObject({ code: 'EVENTSTORE_REQUEST_INVALID' });
      await expect(store.append(taskId, [taskDraft(taskId, { payload: { n: Number.POSITIVE_INFINITY } })], 0)).rejects.toMatchObject({
        code: 'CONTRACT_INVALID',
      });
    });

    it('refuses an event over the size limit before writing any of its batch', async () => {
      // given a batch whose second event is larger than the limit
      const store = await openStore({ maxMsgSize: 4096 });
      const taskId = uniqueName('task');
      const big = taskDraft(taskId, { payload: { blob: 'x'.repeat(8192) } });
      // when it is appended, then it is refused and the task stays empty
      await expect(store.append(taskId, [taskDraft(taskId), big], 0)).rejects.toMatchObject({
        code: 'EVENTSTORE_EVENT_TOO_LARGE',
        details: { eventId: big.event_id, maxBytes: 4096 },
      });
      expect((await store.head(taskId)).taskSeq).toBe(0);
    });

    it('refuses writes when the log is full, and keeps every event it has', async () => {
      // given a log with a tiny byte limit
      const store = await openStore({ maxBytes: 8 * 1024 });
      const taskId = uniqueName('task');
      // when events are appended until it refuses
      let seq = 0;
      let refusal: unknown;
      while (refusal === undefined && seq < 100) {
        try {
          seq = (await store.append(taskId, drafts(taskId, 1), seq)).taskSeq;
        } catch (error) {
          refusal = error;
        }
      }
      // then the refusal is typed, and nothing old was dropped to make room
      expect(refusal).toMatchObject({ code: 'EVENTSTORE_STREAM_FULL' });
      const read = await store.read(taskId);
      expect(read.length).toBe(seq);
      expect(read[0]!.event.task_seq).toBe(1);
    });
  });

  describe('read cache', () => {
    it('given a task read once, when another store appends several events, then a read returns exactly what a fresh store reads', async () => {
      // given
      const store = await openStore();
      const other = await sibling(store);
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 3), 0);
      expect(await store.read(taskId)).toHaveLength(3);
      // when one event, then a batch of four, land from elsewhere
      await other.append(taskId, drafts(taskId, 1), 3);
      const afterOne = await store.read(taskId);
      await other.append(taskId, drafts(taskId, 4), 4);
      // then
      expect(afterOne.map((stored) => stored.event.task_seq)).toEqual([1, 2, 3, 4]);
      const fresh = await (await sibling(store)).read(taskId);
      expect(await store.read(taskId)).toEqual(fresh);
      expect(fresh).toHaveLength(8);
    });

    it('given a task read once, when this store appends a batch, then the next read holds the batch as stored', async () => {
      // given
      const store = await openStore();
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 2), 0);
      await store.read(taskId);
      // when
      await store.append(taskId, drafts(taskId, 3), 2);
      // then
      expect(await store.read(taskId)).toEqual(await (await sibling(store)).read(taskId));
    });

    it('given a cached task, when a rival event 3 lands after it, then the read keeps the chain and quarantines the rival as a fresh store does', async () => {
      // given a task read (and cached) with three events
      const store = await openStore();
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 3), 0);
      const events = await store.read(taskId);
      // when a second event 3 is stored after them
      const subject = `${store.config.subjectPrefix}.task.${taskId}`;
      const seq = await publishRaw(subject, sealEvent(taskDraft(taskId), taskId, { taskSeq: events[1]!.event.task_seq, hash: events[1]!.event.hash }));
      // then the cached read and a fresh one agree: the chain stands, the rival is quarantined as a late fork branch
      expect(await store.read(taskId)).toEqual(events);
      expect(await (await sibling(store)).read(taskId)).toEqual(events);
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: true, length: 3, quarantined: [{ stream_seq: seq, reason: 'QUARANTINE_FORKED' }] });
    });

    it('given a cold reader, when it reads a task of a governed action\'s length, then it opens no consumer on the stream (message gets only), and a longer task streams through one', async () => {
      // given a short and a long task, and a store that has read neither
      const store = await openStore();
      const jsm = await jetstreamManager(nc);
      const consumers = async () => (await jsm.streams.info(store.config.stream)).state.consumer_count;
      const short = uniqueName('task');
      const long = uniqueName('task');
      await store.append(short, drafts(short, 20), 0);
      await store.append(long, drafts(long, 40), 0);
      const reader = await sibling(store);
      const before = await consumers();
      // when it reads the short one
      const read = await reader.read(short);
      // then every event, and no consumer was created for it
      expect(read.map((stored) => stored.event.task_seq)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
      expect(await consumers()).toBe(before);
      // and the long one (past the gets) equals a fresh read through a consumer
      expect((await reader.read(long)).map((stored) => stored.event.task_seq)).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
      expect(await consumers()).toBe(before + 1);
    });

    it('given a follower that judged a task through its deliveries, when it is asked about each next delivery, then it answers as a fresh store does, including junk and a rival stored in between', async () => {
      // given a task of two events a follower has judged, then junk, a third event and a rival of it
      const store = await openStore();
      const follower = await sibling(store);
      const taskId = uniqueName('task');
      const subject = `${store.config.subjectPrefix}.task.${taskId}`;
      const first = await store.append(taskId, drafts(taskId, 2), 0);
      const firstSeqs = first.events.map((stored) => stored.streamSeq);
      for (const seq of firstSeqs) expect(await follower.entryAt(subject, seq)).toMatchObject({ kind: 'event' });
      const junk = await publishRaw(subject, { not: 'an event' });
      const third = await store.append(taskId, drafts(taskId, 1), 2);
      const events = await store.read(taskId);
      const rival = await publishRaw(subject, sealEvent(taskDraft(taskId), taskId, link(events[1]!.event)));
      // when the follower is asked about the third event first (the junk is read on the way), then the junk, then the rival
      const fresh = await sibling(store);
      const thirdSeq = third.events[0]!.streamSeq;
      // then each answer is a fresh store's
      expect(await follower.entryAt(subject, thirdSeq)).toEqual(await fresh.entryAt(subject, thirdSeq));
      expect(await follower.entryAt(subject, junk)).toEqual(await fresh.entryAt(subject, junk));
      expect(await follower.entryAt(subject, rival)).toEqual(await fresh.entryAt(subject, rival));
      expect(await follower.entryAt(subject, rival)).toMatchObject({ kind: 'quarantined', record: { reason: 'QUARANTINE_FORKED' } });
      expect(await follower.read(taskId)).toEqual(events);
    });

    it('given a follower that judged a task, when the stream is recreated with other messages at the same sequences, then it judges what is stored now, not what it cached', async () => {
      // given a follower that judged the two events of a task
      const store = await openStore();
      const follower = await sibling(store);
      const taskId = uniqueName('task');
      const subject = `${store.config.subjectPrefix}.task.${taskId}`;
      const stored = await store.append(taskId, drafts(taskId, 2), 0);
      const seqs = stored.events.map((event) => event.streamSeq);
      expect(await follower.entryAt(subject, seqs[1]!)).toMatchObject({ kind: 'event', event: { hash: stored.events[1]!.hash } });
      // when the stream is deleted and created again, and other events of the same task land at the same sequences
      const jsm = await jetstreamManager(nc);
      const config = (await jsm.streams.info(store.config.stream)).config;
      await jsm.streams.delete(store.config.stream);
      await jsm.streams.add(config);
      const writer = await sibling(store);
      const again = await writer.append(taskId, drafts(taskId, 2).map((draft) => ({ ...draft, payload: { other: true } })), 0);
      expect(again.events.map((event) => event.streamSeq)).toEqual(seqs);
      // then the follower answers with the event stored now
      expect(await follower.entryAt(subject, seqs[1]!)).toMatchObject({ kind: 'event', event: { hash: again.events[1]!.hash } });
    });

    describe('readThrough', () => {
      /** Counts the message gets on `stream` while `during` runs. */
      async function getsDuring(stream: string, during: () => Promise<unknown>): Promise<number> {
        let gets = 0;
        const watch = nc.subscribe(`$JS.API.STREAM.MSG.GET.${stream}`, { callback: () => void gets++ });
        await nc.flush();
        try {
          await during();
          await nc.flush();
        } finally {
          watch.unsubscribe();
        }
        return gets;
      }

      it('given a store that wrote the task, when asked through an event it wrote, then it answers with the task as written and sends no request', async () => {
        // given a task this store wrote in two appends
        const store = await openStore();
        const taskId = uniqueName('task');
        await store.append(taskId, drafts(taskId, 2), 0);
        await store.read(taskId);
        const second = await store.append(taskId, drafts(taskId, 2), 2);
        const delivered = second.events[0]!;
        // when a consumer delivers event 3 and the handler reads through it
        let events: StoredEvent[] = [];
        const gets = await getsDuring(store.config.stream, async () => (events = await store.readThrough(taskId, delivered.streamSeq, delivered.hash)));
        // then the four events, and no get
        expect(events.map((stored) => stored.event.task_seq)).toEqual([1, 2, 3, 4]);
        expect(events).toEqual(await (await sibling(store)).read(taskId));
        expect(gets).toBe(0);
      });

      it('given a cache behind the log, when an append decided on it conflicts, then the next readThrough reads the log to its end', async () => {
        // given a store that holds the task through event 2, and event 3 written by another store
        const store = await openStore();
        const other = await sibling(store);
        const taskId = uniqueName('task');
        const first = await store.append(taskId, drafts(taskId, 2), 0);
        await store.read(taskId);
        await other.append(taskId, drafts(taskId, 1), 2);
        // when it reads through event 2 (answered from the cache) and appends on what it read
        const behind = await store.readThrough(taskId, first.events[1]!.streamSeq, first.events[1]!.hash);
        expect(behind).toHaveLength(2);
        await expect(store.append(taskId, drafts(taskId, 1), 2)).rejects.toMatchObject({ code: 'EVENTSTORE_CONFLICT' });
        // then the redelivered event reads the whole log
        const again = await store.readThrough(taskId, first.events[1]!.streamSeq, first.events[1]!.hash);
        expect(again.map((stored) => stored.event.task_seq)).toEqual([1, 2, 3]);
      });

      it('given a delivered copy whose hash is not the cached event\'s, when read through, then the log is read instead of the cache', async () => {
        // given a store that holds the task through event 2, and a later event written by another store
        const store = await openStore();
        const other = await sibling(store);
        const taskId = uniqueName('task');
        const first = await store.append(taskId, drafts(taskId, 2), 0);
        await store.read(taskId);
        await other.append(taskId, drafts(taskId, 1), 2);
        // when the delivery at event 2's position carries another hash
        let events: StoredEvent[] = [];
        const gets = await getsDuring(store.config.stream, async () => (events = await store.readThrough(taskId, first.events[1]!.streamSeq, 'f'.repeat(64))));
        // then the log was asked, and its answer is the whole task
        expect(gets).toBeGreaterThan(0);
        expect(events.map((stored) => stored.event.task_seq)).toEqual([1, 2, 3]);
      });
    });

    it('given the cache turned off, when a task is read twice, then both reads verify and agree', async () => {
      const store = await openStore({ readCacheEvents: 0 });
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 2), 0);
      const first = await store.read(taskId);
      await store.append(taskId, drafts(taskId, 1), 2);
      expect(await store.read(taskId)).toEqual([...first, expect.objectContaining({ event: expect.objectContaining({ task_seq: 3 }) })]);
    });
  });

  describe("entriesOf (a consumer's delivery)", () => {
    /** The stream's messages from `from` to `to` as a durable consumer would deliver them. */
    async function delivered(store: EventStore, from: number, to: number): Promise<Array<{ subject: string; streamSeq: number; data: Uint8Array }>> {
      const jsm = await jetstreamManager(nc);
      const run = [];
      for (let seq = from; seq <= to; seq++) {
        const message = await jsm.streams.getMessage(store.config.stream, { seq });
        run.push({ subject: message!.subject, streamSeq: seq, data: message!.data });
      }
      return run;
    }

    /** What a store that never saw the log answers for each message, one get per message. */
    async function entriesOneByOne(store: EventStore, run: ReadonlyArray<{ subject: string; streamSeq: number }>) {
      const fresh = await sibling(store);
      const entries = [];
      for (const message of run) entries.push(await fresh.entryAt(message.subject, message.streamSeq));
      return entries;
    }

    it('given two tasks interleaved with junk and a follower that judged the first half, when the second half is delivered as one run, then each entry is what entryAt says and the follower asks the server once per task, not once per message', async () => {
      // given two tasks whose events interleave, junk on one of them, and a follower that judged the first half
      const store = await openStore();
      const [a, b] = [uniqueName('task'), uniqueName('task')];
      await store.append(a, drafts(a, 2), 0);
      await store.append(b, drafts(b, 2), 0);
      const half = (await store.append(a, drafts(a, 1), 2)).events[0]!.streamSeq;
      const follower = await sibling(store);
      expect((await follower.entriesOf(await delivered(store, 1, half))).map((entry) => entry.kind)).toEqual(['event', 'event', 'event', 'event', 'event']);
      await store.append(b, drafts(b, 3), 2);
      await store.append(a, drafts(a, 4), 3);
      const junk = await publishRaw(`${store.config.subjectPrefix}.task.${b}`, { not: 'an event' });
      const last = (await store.append(b, drafts(b, 1), 5)).events[0]!.streamSeq;
      const run = await delivered(store, half + 1, last);
      // when the second half is delivered as one run
      const before = nc.stats().outMsgs;
      const entries = await follower.entriesOf(run);
      const requests = nc.stats().outMsgs - before;
      // then every entry is a fresh store's, the junk quarantined as it would be
      expect(entries).toEqual(await entriesOneByOne(store, run));
      expect(entries.find((entry) => entry.streamSeq === junk)).toMatchObject({ kind: 'quarantined', record: { reason: 'QUARANTINE_NOT_ENVELOPE' } });
      // and the 8 events of two tasks cost a get per task and one for the junk's own bytes (judged on the log's copy)
      expect(run).toHaveLength(9);
      expect(requests).toBeLessThanOrEqual(4);
      expect(await follower.read(b)).toEqual(await store.read(b));
    });

    it('given delivered bytes that are not what the log stores (a forged first message, junk or a replayed event in place of an event), when the run is judged, then every entry is the log\'s own', async () => {
      // given a task of four events a follower has judged up to its first
      const store = await openStore();
      const taskId = uniqueName('task');
      const appended = await store.append(taskId, drafts(taskId, 4), 0);
      const seqs = appended.events.map((stored) => stored.streamSeq);
      const follower = await sibling(store);
      await follower.entriesOf(await delivered(store, seqs[0]!, seqs[0]!));
      const genuine = await delivered(store, seqs[1]!, seqs[3]!);
      const expected = await entriesOneByOne(store, genuine);
      const forgeries = {
        'another event in place of the first': [{ ...genuine[0]!, data: genuine[1]!.data }, ...genuine.slice(1)],
        'junk in place of the second': [genuine[0]!, { ...genuine[1]!, data: new TextEncoder().encode('{"not":"an event"}') }, genuine[2]!],
        'the first replayed in place of the third': [genuine[0]!, genuine[1]!, { ...genuine[2]!, data: genuine[0]!.data }],
      };
      for (const [forgery, run] of Object.entries(forgeries)) {
        // when the forged run is judged by a follower in that state
        const judge = await sibling(store);
        await judge.entriesOf(await delivered(store, seqs[0]!, seqs[0]!));
        // then the entries are the log's
        expect(await judge.entriesOf(run), forgery).toEqual(expected);
        expect((await judge.entriesOf(run)).map((entry) => entry.kind), forgery).toEqual(['event', 'event', 'event']);
      }
    });

    it('given a run that skips a stream sequence, when it is judged, then it is refused (EVENTSTORE_REQUEST_INVALID): a gap could hide a message of the aggregate', async () => {
      const store = await openStore();
      const taskId = uniqueName('task');
      const seqs = (await store.append(taskId, drafts(taskId, 3), 0)).events.map((stored) => stored.streamSeq);
      const run = await delivered(store, seqs[0]!, seqs[2]!);
      const refused = await store.entriesOf([run[0]!, run[2]!]).catch((error: unknown) => error);
      expect(isEventStoreError(refused, 'EVENTSTORE_REQUEST_INVALID')).toBe(true);
    });
  });

  describe('chain verification against tampering', () => {
    /** A task with two honest events; returns their envelopes. */
    async function honestTask(store: EventStore): Promise<{ taskId: string; subject: string; events: EventEnvelope[] }> {
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 2), 0);
      return { taskId, subject: `${store.config.subjectPrefix}.task.${taskId}`, events: (await store.read(taskId)).map((s) => s.event) };
    }


    it('catches an event modified after sealing, and refuses to read or extend that task', async () => {
      // given a third event whose payload was altered after it was sealed
      const store = await openStore();
      const { taskId, subject, events } = await honestTask(store);
      const sealed = sealEvent(taskDraft(taskId), taskId, link(events[1]!));
      const seq = await publishRaw(subject, { ...sealed, payload: { note: 'altered' } });
      // then verification points at it, reading refuses, and so does appending onto it
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: false, reason: 'modified', taskSeq: 3, streamSeq: seq });
      await expect(store.read(taskId)).rejects.toMatchObject({ code: 'EVENTSTORE_CHAIN_BROKEN', details: { reason: 'modified', streamSeq: seq } });
      await expect(store.append(taskId, drafts(taskId, 1), 3)).rejects.toMatchObject({ code: 'EVENTSTORE_CHAIN_BROKEN' });
    });

    it('catches a dropped event', async () => {
      // given event 4 chained onto an event 3 that never reached the log
      const store = await openStore();
      const { taskId, subject, events } = await honestTask(store);
      const missing = sealEvent(taskDraft(taskId), taskId, link(events[1]!));
      const seq = await publishRaw(subject, sealEvent(taskDraft(taskId), taskId, link(missing)));
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: false, reason: 'dropped', taskSeq: 3, streamSeq: seq });
    });

    it('catches reordered events', async () => {
      // given events 3 and 4 stored as 4, 3
      const store = await openStore();
      const { taskId, subject, events } = await honestTask(store);
      const third = sealEvent(taskDraft(taskId), taskId, link(events[1]!));
      const fourth = sealEvent(taskDraft(taskId), taskId, link(third));
      const seq = await publishRaw(subject, fourth);
      await publishRaw(subject, third);
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: false, reason: 'reordered', taskSeq: 3, streamSeq: seq });
    });

    it('surfaces a late rival for event 2 as a quarantined fork branch, never merged, and catches a fork that goes on', async () => {
      // given a rival event 2 that a second writer got in after the first (e.g. across a leader change)
      const store = await openStore();
      const { taskId, subject, events } = await honestTask(store);
      const rival = sealEvent(taskDraft(taskId), taskId, link(events[0]!));
      const rivalSeq = await publishRaw(subject, rival);
      // then the chain keeps the event 2 stored first and the rival is quarantined, with its reason
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: true, length: 2, quarantined: [{ stream_seq: rivalSeq, reason: 'QUARANTINE_FORKED' }] });
      expect((await store.read(taskId)).map((s) => s.event.hash)).toEqual(events.map((e) => e.hash));
      // when the second writer goes on from its rival, then the chain is broken there: two histories, never merged
      const seq = await publishRaw(subject, sealEvent(taskDraft(taskId), taskId, link(rival)));
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: false, reason: 'forked', taskSeq: 3, streamSeq: seq });
      await expect(store.read(taskId)).rejects.toMatchObject({ code: 'EVENTSTORE_CHAIN_BROKEN', details: { reason: 'forked' } });
    });

    it('catches an event whose bytes were replaced by junk, as soon as an event follows it', async () => {
      // given a chain whose third event reached the log as junk (its bytes changed), and a fourth chained onto the real third
      const store = await openStore();
      const { taskId, subject, events } = await honestTask(store);
      const third = sealEvent(taskDraft(taskId), taskId, link(events[1]!));
      const junkSeq = await publishRaw(subject, { hello: 'world' });
      const seq = await publishRaw(subject, sealEvent(taskDraft(taskId), taskId, link(third)));
      // then the junk alone is not a break, but the event that needs what it replaced is
      expect(await store.verifyChain(taskId)).toMatchObject({
        ok: false,
        reason: 'modified',
        taskSeq: 3,
        streamSeq: seq,
        quarantined: [{ stream_seq: junkSeq, reason: 'QUARANTINE_NOT_ENVELOPE' }],
      });
    });
  });

  describe('quarantine (invariant 10)', () => {
    async function publishBytes(subject: string, bytes: Uint8Array | string): Promise<number> {
      return (await jetstream(nc).publish(subject, bytes)).seq;
    }

    it('given junk between the events of a task, when it is read, verified and appended to, then the junk is skipped and the chain goes on', async () => {
      // given a task with two events, then bytes that are not JSON, JSON that is not an envelope and another task's event
      const store = await openStore();
      const reported: string[] = [];
      store.onQuarantine((record) => reported.push(`${record.stream_seq}:${record.reason}`));
      const taskId = uniqueName('task');
      const subject = `${store.config.subjectPrefix}.task.${taskId}`;
      await store.append(taskId, drafts(taskId, 2), 0);
      const notJson = await publishBytes(subject, new Uint8Array([0xff, 0xfe, 0x00, 0x7b]));
      const notEnvelope = await publishRaw(subject, { hello: 'world' });
      const foreign = await publishRaw(subject, sealEvent(taskDraft('other-task'), 'other-task', { taskSeq: 0, hash: null }));
      // when the task is read
      const events = await store.read(taskId);
      // then it is the two events, and each junk message is reported once with its reason and the SHA-256 of its bytes
      expect(events.map((s) => s.event.task_seq)).toEqual([1, 2]);
      expect(reported).toEqual([`${notJson}:QUARANTINE_NOT_JSON`, `${notEnvelope}:QUARANTINE_NOT_ENVELOPE`, `${foreign}:QUARANTINE_WRONG_AGGREGATE`]);
      const verification = await store.verifyChain(taskId);
      expect(verification).toMatchObject({ ok: true, length: 2, head: { taskSeq: 2, streamSeq: foreign } });
      expect(verification.quarantined[0]).toEqual({
        stream: store.config.stream,
        subject,
        stream_seq: notJson,
        reason: 'QUARANTINE_NOT_JSON',
        sha256: sha256Hex(new Uint8Array([0xff, 0xfe, 0x00, 0x7b])),
        bytes: 4,
        detail: 'the bytes are not UTF-8 JSON',
      });
      // and the head is the last event, guarded by the last message (the junk)
      expect(await store.head(taskId)).toEqual({ taskSeq: 2, streamSeq: foreign, hash: events[1]!.event.hash });
      // when an event is appended after the junk, then it links to the last event and the task reads on, also from a fresh store
      const appended = await store.append(taskId, drafts(taskId, 1), 2);
      expect(appended).toMatchObject({ taskSeq: 3 });
      const fresh = await (await sibling(store)).read(taskId);
      expect(fresh.map((s) => [s.event.task_seq, s.event.prev_event_hash])).toEqual([
        [1, null],
        [2, events[0]!.event.hash],
        [3, events[1]!.event.hash],
      ]);
      expect(reported).toHaveLength(3);
    });

    it('given a writer that read the task, when junk lands before its append, then the append still lands on the chain (no conflict)', async () => {
      // given a task read by a writer (its head cached) and junk stored after that read
      const store = await openStore();
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 1), 0);
      await store.read(taskId);
      const junk = await publishBytes(`${store.config.subjectPrefix}.task.${taskId}`, 'garbage');
      // when it appends at the head it read
      const result = await store.append(taskId, drafts(taskId, 2), 1);
      // then both events land after the junk, linked to the chain
      expect(result.events.map((e) => [e.taskSeq, e.streamSeq > junk])).toEqual([
        [2, true],
        [3, true],
      ]);
      expect(await store.verifyChain(taskId)).toMatchObject({ ok: true, length: 3, quarantined: [{ stream_seq: junk }] });
    });

    it('given junk before the first event of a new aggregate, when the aggregate is created, then it is created', async () => {
      const store = await openStore();
      const principalId = uniqueName('principal');
      await publishBytes(`${store.config.subjectPrefix}.principal.${principalId}`, 'not an event');
      const draft = taskDraft(principalId, { entity_type: 'principal', entity_id: principalId });
      await expect(store.appendToEntity('principal', principalId, [draft], 0)).resolves.toMatchObject({ taskSeq: 1 });
      expect((await store.readEntity('principal', principalId)).map((s) => s.event.event_id)).toEqual([draft.event_id]);
    });

    it('given junk anywhere on the log, when it is replayed from the start or the middle, then every message comes once: events, and junk as quarantined', async () => {
      // given two tasks, junk on one of them, junk on a subject that names no aggregate, and a late rival
      const store = await openStore();
      const prefix = store.config.subjectPrefix;
      const [a, b] = [uniqueName('task'), uniqueName('task')];
      await store.append(a, drafts(a, 2), 0);
      const onTask = await publishBytes(`${prefix}.task.${a}`, 'junk');
      await store.append(b, drafts(b, 1), 0);
      const nowhere = await publishBytes(`${prefix}.junk.x`, '{"not":"an event"}');
      await store.append(a, drafts(a, 1), 2);
      const first = (await store.read(a))[0]!;
      const rival = await publishRaw(`${prefix}.task.${a}`, { ...first.event, payload: { n: 'rival' }, hash: 'f'.repeat(64) });
      // when replayed from the start
      const entries = [];
      for await (const entry of store.replayLog(1)) entries.push(entry.kind === 'event' ? `${entry.streamSeq}:event` : `${entry.streamSeq}:${entry.record.reason}`);
      // then every message is there, in order, judged
      expect(entries).toEqual(['1:event', '2:event', `${onTask}:QUARANTINE_NOT_JSON`, '4:event', `${nowhere}:QUARANTINE_WRONG_SUBJECT`, '6:event', `${rival}:QUARANTINE_HASH_MISMATCH`]);
      // and the same from the middle, from another process, and one message at a time
      const middle = [];
      for await (const entry of (await sibling(store)).replayLog(onTask)) middle.push(entry.kind === 'event' ? `${entry.streamSeq}:event` : `${entry.streamSeq}:${entry.record.reason}`);
      expect(middle).toEqual(entries.slice(2));
      const other = await sibling(store);
      expect((await other.entryAt(`${prefix}.task.${a}`, onTask)).kind).toBe('quarantined');
      expect(await other.entryAt(`${prefix}.task.${a}`, 6)).toMatchObject({ kind: 'event', event: { task_seq: 3 } });
      expect(await other.entryAt(`${prefix}.junk.x`, nowhere)).toMatchObject({ kind: 'quarantined', record: { reason: 'QUARANTINE_WRONG_SUBJECT' } });
      // and `replay` hands over the events only
      expect((await store.replay(1, () => undefined)).count).toBe(4);
    });

    it('given an aggregate whose chain is broken, when replayed, then its messages from the break on are quarantined as CHAIN_BROKEN, the rest of the log goes on', async () => {
      const store = await openStore();
      const prefix = store.config.subjectPrefix;
      const [a, b] = [uniqueName('task'), uniqueName('task')];
      await store.append(a, drafts(a, 1), 0);
      const events = (await store.read(a)).map((s) => s.event);
      const broken = await publishRaw(`${prefix}.task.${a}`, { ...sealEvent(taskDraft(a), a, link(events[0]!)), payload: { altered: true } });
      await store.append(b, drafts(b, 1), 0);
      const entries = [];
      for await (const entry of store.replayLog(1)) entries.push(entry.kind === 'event' ? 'event' : entry.record.reason);
      expect(entries).toEqual(['event', 'QUARANTINE_CHAIN_BROKEN', 'event']);
      expect(broken).toBe(2);
    });
  });

  describe('other aggregates', () => {
    it('appends, reads and verifies a principal stream with the same machinery', async () => {
      // given a principal aggregate
      const store = await openStore();
      const principalId = uniqueName('principal');
      const events = [1, 2].map(() => taskDraft(principalId, { entity_type: 'principal', entity_id: principalId, event_type: 'principal.key_rotated' }));
      // when its events are appended
      const result = await store.appendToEntity('principal', principalId, events, 0);
      // then they live on the principal's subject as a valid chain of their own
      expect(result.subject).toBe(`${store.config.subjectPrefix}.principal.${principalId}`);
      expect((await store.readEntity('principal', principalId)).map((s) => s.event.task_seq)).toEqual([1, 2]);
      expect(await store.verifyEntityChain('principal', principalId)).toMatchObject({ ok: true, length: 2 });
      expect((await store.headOfEntity('principal', principalId)).taskSeq).toBe(2);
      await expect(store.appendToEntity('principal', principalId, [taskDraft(principalId, { entity_type: 'principal', entity_id: principalId })], 0)).rejects.toMatchObject({
        code: 'EVENTSTORE_CONFLICT',
      });
    });

    it('refuses an event about another entity, and an unknown entity type', async () => {
      const store = await openStore();
      await expect(store.appendToEntity('cell', 'cell-1', [taskDraft('task-1')], 0)).rejects.toMatchObject({ code: 'EVENTSTORE_REQUEST_INVALID' });
      await expect(store.appendToEntity('planet', 'p-1', [taskDraft('p-1')], 0)).rejects.toMatchObject({ code: 'CONTRACT_INVALID' });
    });
  });

  describe('a scan consumer that never answers a pull', () => {
    // nats-server 2.9 leaves ephemeral consumers a cluster lists but no peer runs; nats.js ends an ordered
    // fetch only on the server's answer, so a read through one waited forever (a projection's boot replay hung).
    it('given a cold reader whose first scan consumer never answers its pulls, when it reads a task and replays the log, then it gives up on that consumer, reads through a new one, and deletes the dead one', async () => {
      // given a task longer than a read gets one message at a time (so it scans through a consumer), and a reader
      // connected through a proxy that kills the next consumer pulled from
      const store = await openStore({ requestTimeoutMs: 1_000 });
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 40), 0);
      const blackhole = await startNatsPullBlackhole(NATS_URL);
      const through = await connect({ servers: blackhole.url, name: 'eventstore-blackhole', ...testNatsAuth() });
      try {
        const reader = await sibling(store, through);
        const jsm = await jetstreamManager(nc);
        // when it reads the task
        blackhole.killNextConsumer();
        const events = await reader.read(taskId);
        // then every event arrives, through another consumer, and the dead one is gone
        expect(events.map((stored) => stored.event.task_seq)).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
        expect(blackhole.swallowed, `dead consumer ${String(blackhole.deadConsumer)}`).toBeGreaterThan(0);
        const dead = blackhole.deadConsumer?.split('.').at(-1);
        await waitFor(async () => {
          for await (const consumer of jsm.consumers.list(store.config.stream)) if (consumer.name === dead) return undefined;
          return true;
        }, { what: 'the dead consumer deleted' });
        // and a replay of the whole log through a consumer that never answers ends all the same
        blackhole.killNextConsumer();
        const replayed: number[] = [];
        for await (const stored of reader.replay(1)) {
          replayed.push(stored.event.task_seq);
          if (replayed.length === 3) break;
        }
        expect(replayed).toEqual([1, 2, 3]);
      } finally {
        await through.close();
        await blackhole.close();
      }
    }, 60_000);
  });

  describe('replay', () => {
    it('given a reader slower than the server\'s grace (its scan consumer reaped between two fetches), then the replay resumes where it stood: every event once, in order', async () => {
      // given more events than one fetch returns (256)
      const store = await openStore();
      const taskId = uniqueName('task');
      for (let from = 0; from < 300; from += 100) await store.append(taskId, drafts(taskId, 100), from);
      // when, after the first event, the server reaps the replay's consumer (as it does when the reader idles past the grace)
      const seen: number[] = [];
      for await (const stored of store.replay(1)) {
        seen.push(stored.streamSeq);
        if (seen.length === 1) {
          const jsm = await jetstreamManager(nc);
          for await (const consumer of jsm.consumers.list(store.config.stream)) await jsm.consumers.delete(store.config.stream, consumer.name);
        }
      }
      // then every event came, once, in stream order
      expect(seen).toEqual(Array.from({ length: 300 }, (_, index) => index + 1));
    });

    it('replays the whole stream in stream order, from any sequence, as an iterator or into a handler', async () => {
      // given two tasks written in interleaved order
      const store = await openStore();
      const [a, b] = [uniqueName('task'), uniqueName('task')];
      await store.append(a, drafts(a, 2), 0);
      await store.append(b, drafts(b, 1), 0);
      await store.append(a, drafts(a, 1), 2);
      // when the stream is replayed from the start
      const all: StoredEvent[] = [];
      for await (const stored of store.replay(1)) all.push(stored);
      // then every event comes once, in stream order
      expect(all.map((s) => s.streamSeq)).toEqual([1, 2, 3, 4]);
      expect(all.map((s) => [s.event.task_id, s.event.task_seq])).toEqual([
        [a, 1],
        [a, 2],
        [b, 1],
        [a, 3],
      ]);
      // when replayed from the middle into a handler
      const tail: number[] = [];
      const summary = await store.replay(3, (stored) => {
        tail.push(stored.streamSeq);
      });
      // then only the rest is handed over
      expect(tail).toEqual([3, 4]);
      expect(summary).toEqual({ count: 2, lastStreamSeq: 4 });
      // and replaying past the end yields nothing
      expect(await store.replay(5, () => undefined)).toEqual({ count: 0, lastStreamSeq: null });
    });

    it('follows new events after catching up, until aborted', async () => {
      // given a stream with one event and a following replay
      const store = await openStore();
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 1), 0);
      const seen: StoredEvent[] = [];
      const abort = new AbortController();
      const following = (async () => {
        for await (const stored of store.replay(1, { follow: true, signal: abort.signal })) seen.push(stored);
      })();
      await waitFor(() => (seen.length === 1 ? true : undefined), { what: 'the existing event' });
      // when another event is appended
      await store.append(taskId, drafts(taskId, 1), 1);
      // then the replay delivers it, and ends when aborted
      await waitFor(() => (seen.length === 2 ? true : undefined), { what: 'the new event' });
      abort.abort();
      await following;
      expect(seen.map((s) => s.event.task_seq)).toEqual([1, 2]);
    });

    it('skips a message that is not an event instead of stopping at it', async () => {
      const store = await openStore();
      const taskId = uniqueName('task');
      await store.append(taskId, drafts(taskId, 1), 0);
      await publishRaw(`${store.config.subjectPrefix}.task.${taskId}`, 'garbage');
      await store.append(taskId, drafts(taskId, 1), 1);
      expect(await store.replay(1, () => undefined)).toEqual({ count: 2, lastStreamSeq: 3 });
    });
  });

  describe('outages', () => {
    it('reports a missing stream as unavailable', async () => {
      // given a store whose stream was deleted underneath it
      const store = await openStore();
      const taskId = uniqueName('task');
      await deleteStreams(nc, store.config.stream);
      // then appends and reads fail with the unavailable code
      await expect(store.append(taskId, drafts(taskId, 1), 0)).rejects.toMatchObject({ code: 'EVENTSTORE_UNAVAILABLE' });
      await expect(store.read(taskId)).rejects.toMatchObject({ code: 'EVENTSTORE_UNAVAILABLE' });
      await expect(store.replay(1, () => undefined)).rejects.toMatchObject({ code: 'EVENTSTORE_UNAVAILABLE' });
    });

    it('reports a closed connection as unavailable', async () => {
      // given a store on a connection that was closed
      const connection = await connectTestNats('eventstore-closing');
      const store = await openStore({}, connection);
      await connection.close();
      const taskId = uniqueName('task');
      // then it fails with the unavailable code, not a client error
      await expect(store.append(taskId, drafts(taskId, 1), 0)).rejects.toMatchObject({ code: 'EVENTSTORE_UNAVAILABLE' });
      await expect(store.head(taskId)).rejects.toMatchObject({ code: 'EVENTSTORE_UNAVAILABLE' });
    });
  });
});
