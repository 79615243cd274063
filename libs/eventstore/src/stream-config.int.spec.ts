import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscardPolicy, StorageType, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectTestNats, deleteStreams } from '@writ/testing';
import { testStreamNames } from '../test/support/test-stream.js';
import { EventStore } from './event-store.js';
import { ensureEventStream, parseEventStoreConfig } from './stream-config.js';

describe('ensureEventStream (real NATS)', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const created: string[] = [];

  beforeAll(async () => {
    nc = await connectTestNats('eventstore-stream-config');
    jsm = await jetstreamManager(nc);
  });

  afterAll(async () => {
    await deleteStreams(nc, ...created);
    await nc.close();
  });

  function names(): { stream: string; subjectPrefix: string; maxBytes: number } {
    const n = testStreamNames();
    created.push(n.stream);
    return n;
  }

  it('creates the stream with explicit limits that refuse writes rather than drop events', async () => {
    // given no stream, when the store starts
    const config = parseEventStoreConfig({ ...names(), maxBytes: 64 * 1024 * 1024 });
    const outcome = await ensureEventStream(jsm, config);
    // then the stream exists exactly as configured
    expect(outcome.action).toBe('created');
    const { config: actual } = await jsm.streams.info(config.stream);
    expect(actual).toMatchObject({
      subjects: [`${config.subjectPrefix}.>`],
      storage: StorageType.File,
      num_replicas: 1,
      discard: DiscardPolicy.New,
      max_age: 0,
      max_bytes: 64 * 1024 * 1024,
      max_msgs: -1,
      max_msgs_per_subject: -1,
      max_msg_size: 1024 * 1024,
      duplicate_window: 120_000_000_000,
      deny_delete: true,
      deny_purge: true,
      allow_rollup_hdrs: false,
    });
  });

  it('is idempotent: a second start-up changes nothing', async () => {
    // given a stream created by a first start-up
    const config = parseEventStoreConfig(names());
    await ensureEventStream(jsm, config);
    // when a second one runs with the same config, then it leaves the stream as is
    expect((await ensureEventStream(jsm, config)).action).toBe('unchanged');
  });

  it('given lower configured capacities, when a process opens the log, then the stream keeps its own and says so (never lowered by a client); the operator can still lower them', async () => {
    // given a stream created with 2 MB (as the operator configured it)
    const n = names();
    await ensureEventStream(jsm, parseEventStoreConfig({ ...n, maxBytes: 2_000_000 }));
    // when a service configured with a lower limit opens it, as every service opens it
    const store = await EventStore.open(nc, { ...n, maxBytes: 1_000_000 });
    // then the stream keeps its limit, and the outcome reports what was kept
    expect(store.stream).toMatchObject({ action: 'unchanged', kept: { max_bytes: 2_000_000 } });
    expect((await jsm.streams.info(n.stream)).config.max_bytes).toBe(2_000_000);
    // and a raise by a process is still applied, with the kept capacity left as is
    const raised = await ensureEventStream(jsm, parseEventStoreConfig({ ...n, maxBytes: 1_000_000, duplicateWindowMs: 60_000 }));
    expect(raised).toMatchObject({ action: 'updated', updatedFields: ['duplicate_window'], kept: { max_bytes: 2_000_000 } });
    expect((await jsm.streams.info(n.stream)).config).toMatchObject({ max_bytes: 2_000_000, duplicate_window: 60_000_000_000 });
    // when the operator reconfigures, then it lowers it
    expect(await ensureEventStream(jsm, parseEventStoreConfig({ ...n, maxBytes: 1_000_000, duplicateWindowMs: 60_000 }), { reconfigure: true })).toMatchObject({ action: 'updated', updatedFields: ['max_bytes'], kept: {} });
  });

  it('given the operator reconfigures (writ streams ensure), then a changed limit is updated in place', async () => {
    // given a stream created with one byte limit and duplicate window
    const n = names();
    await ensureEventStream(jsm, parseEventStoreConfig({ ...n, maxBytes: 1_000_000 }));
    // when the operator's ensure runs with other ones
    const outcome = await ensureEventStream(jsm, parseEventStoreConfig({ ...n, maxBytes: 2_000_000, duplicateWindowMs: 60_000 }), { reconfigure: true });
    // then the stream is updated to them
    expect(outcome).toMatchObject({ action: 'updated' });
    expect([...outcome.updatedFields].sort()).toEqual(['duplicate_window', 'max_bytes']);
    const { config } = await jsm.streams.info(n.stream);
    expect(config).toMatchObject({ max_bytes: 2_000_000, duplicate_window: 60_000_000_000 });
  });

  it('given the operator reconfigures, then a stream that discards old events becomes one that refuses new ones', async () => {
    // given a stream someone created with discard old and deletes allowed
    const n = names();
    await jsm.streams.add({ name: n.stream, subjects: [`${n.subjectPrefix}.>`], storage: StorageType.File, discard: DiscardPolicy.Old, max_bytes: n.maxBytes });
    // when the operator's ensure runs on it
    const outcome = await ensureEventStream(jsm, parseEventStoreConfig(n), { reconfigure: true });
    // then its limits are the store's
    expect(outcome.action).toBe('updated');
    expect((await jsm.streams.info(n.stream)).config).toMatchObject({ discard: DiscardPolicy.New, deny_delete: true, deny_purge: true });
  });

  it('refuses a stream with another storage type', async () => {
    // given a memory stream on the store's subjects
    const n = names();
    await jsm.streams.add({ name: n.stream, subjects: [`${n.subjectPrefix}.>`], storage: StorageType.Memory });
    // when the store starts with file storage, then it fails with the mismatching field
    await expect(ensureEventStream(jsm, parseEventStoreConfig(n))).rejects.toMatchObject({
      code: 'EVENTSTORE_STREAM_CONFIG_MISMATCH',
      details: { stream: n.stream, fields: ['storage'] },
    });
  });

  it('refuses a stream bound to other subjects', async () => {
    // given a stream of that name that only binds task subjects
    const n = names();
    await jsm.streams.add({ name: n.stream, subjects: [`${n.subjectPrefix}.task.>`], storage: StorageType.File });
    // when the store starts, then it fails rather than rebinding the stream
    await expect(ensureEventStream(jsm, parseEventStoreConfig(n))).rejects.toMatchObject({
      code: 'EVENTSTORE_STREAM_CONFIG_MISMATCH',
      details: { fields: ['subjects'] },
    });
  });

  it('refuses subjects another stream already owns', async () => {
    // given another stream on the store's subjects
    const owner = names();
    const other = names();
    await ensureEventStream(jsm, parseEventStoreConfig(owner));
    // when a store with another stream name but the same prefix starts, then it fails
    await expect(ensureEventStream(jsm, parseEventStoreConfig({ ...other, subjectPrefix: owner.subjectPrefix }))).rejects.toMatchObject({
      code: 'EVENTSTORE_STREAM_CONFIG_MISMATCH',
    });
  });

  it('refuses a replication factor the server cannot honour, on create and on update', async () => {
    // given a single (non-clustered) server
    const fresh = names();
    const existing = names();
    await ensureEventStream(jsm, parseEventStoreConfig(existing));
    // when the store asks for 3 replicas, then it fails instead of running on 1
    await expect(ensureEventStream(jsm, parseEventStoreConfig({ ...fresh, replicas: 3 }))).rejects.toMatchObject({
      code: 'EVENTSTORE_STREAM_CONFIG_MISMATCH',
    });
    await expect(ensureEventStream(jsm, parseEventStoreConfig({ ...existing, replicas: 3 }), { reconfigure: true })).rejects.toMatchObject({
      code: 'EVENTSTORE_STREAM_CONFIG_MISMATCH',
      details: { fields: ['num_replicas'] },
    });
  });

  it('opens a store that reports what start-up did', async () => {
    // given no stream, when two stores open on the same config
    const n = names();
    const first = await EventStore.open(nc, n);
    const second = await EventStore.open(nc, n);
    // then the first created it and the second found it as configured
    expect(first.stream.action).toBe('created');
    expect(second.stream.action).toBe('unchanged');
  });
});
