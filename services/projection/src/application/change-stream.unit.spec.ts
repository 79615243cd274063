import type { ChangesPage, ProjectionChange } from '@writ/contracts/projection-rows';
import { createLogger } from '@writ/telemetry';
import { describe, expect, it } from 'vitest';
import { ChangeNotifier } from './change-notifier.js';
import { ChangeStream, ChangeStreams, type StreamSink } from './change-stream.js';
import type { ChangeFeed, ChangesQuery } from './ports.js';

/**
 * The change stream's protocol on a feed in memory and a sink standing in for
 * the socket: one `rows` event per version with `id:` = the version, `synced`
 * once the replay is done, heartbeats, live rows on a wake-up, and the three
 * ways the server ends a stream (slow reader, expired token, shutdown), each
 * telling the client where to resume.
 */

const quiet = createLogger('change-stream-test', { level: 'silent' });
const OPTIONS = { heartbeatMs: 40, drainTimeoutMs: 30, pollMs: 1_000, maxStreams: 2 };

const change = (id: string, version: number): ProjectionChange =>
  ({ view: 'tasks', id, row_version: version, row: { task_id: id, row_version: version } }) as unknown as ProjectionChange;

/** A feed over a list of changes that grows; pages of `limit` versions, never split. */
class MemoryFeed implements ChangeFeed {
  rows: ProjectionChange[] = [];
  position = 0;
  reads = 0;
  async changes(query: ChangesQuery): Promise<ChangesPage> {
    this.reads += 1;
    const after = this.rows.filter((c) => c.row_version > query.since).sort((x, y) => x.row_version - y.row_version);
    const versions = [...new Set(after.map((c) => c.row_version))];
    const cutoff = versions.length > query.limit ? versions[query.limit - 1] : undefined;
    const page = cutoff === undefined ? after : after.filter((c) => c.row_version <= cutoff);
    return { changes: page, more: cutoff !== undefined, next: cutoff ?? Math.max(query.since, this.position), checkpoint: this.position };
  }
  async checkpoint(): Promise<number> {
    return this.position;
  }
  commit(...changes: ProjectionChange[]): void {
    this.rows.push(...changes);
    this.position = Math.max(this.position, ...changes.map((c) => c.row_version));
  }
}

/** A socket: takes writes until `capacity` chunks are waiting, then needs a drain that `reading` gives. */
class Socket implements StreamSink {
  readonly chunks: string[] = [];
  ended = false;
  reading = true;
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return this.reading;
  }
  async drained(timeoutMs: number): Promise<boolean> {
    await new Promise((resolve) => setTimeout(resolve, timeoutMs));
    return this.reading;
  }
  end(): void {
    this.ended = true;
  }
  events(): Array<{ id?: number; event: string; data: Record<string, unknown> }> {
    return this.chunks
      .filter((chunk) => chunk.includes('event: '))
      .map((chunk) => {
        const id = /^id: (\d+)$/m.exec(chunk)?.[1];
        return { ...(id === undefined ? {} : { id: Number(id) }), event: /^event: (.+)$/m.exec(chunk)?.[1] ?? '', data: JSON.parse(/^data: (.*)$/m.exec(chunk)?.[1] ?? '{}') as Record<string, unknown> };
      });
  }
}

const until = async (what: () => boolean, ms = 2_000) => {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

function stream(feed: MemoryFeed, socket: Socket, options: { since?: number; expiresInMs?: number; limit?: number } = {}) {
  const notifier = new ChangeNotifier();
  const s = new ChangeStream({
    feed,
    notifier,
    sink: socket,
    query: { since: options.since ?? 0, views: ['tasks'], limit: options.limit ?? 500, owner: undefined },
    expiresAt: Date.now() + (options.expiresInMs ?? 60_000),
    options: OPTIONS,
    logger: quiet,
  });
  return { stream: s, notifier, done: s.run() };
}

describe('the change stream', () => {
  it('given rows in the views, when a client connects from 0, then one rows event per version with id = the version, then synced with id = the checkpoint', async () => {
    // given
    const feed = new MemoryFeed();
    feed.commit(change('t1', 3), change('t2', 3), change('t1', 5));
    const socket = new Socket();
    // when
    const { stream: s, done } = stream(feed, socket, { limit: 1 });
    await until(() => socket.events().some((e) => e.event === 'synced'));
    // then
    expect(socket.chunks[0]).toBe('retry: 2000\n\n');
    expect(socket.events().map((e) => [e.event, e.id])).toEqual([
      ['rows', 3],
      ['rows', 5],
      ['synced', 5],
    ]);
    expect(socket.events()[0]?.data).toMatchObject({ row_version: 3, changes: [{ id: 't1' }, { id: 't2' }] });
    s.abandon();
    await done;
  });

  it('given a synced client, when the projector commits and wakes the stream, then the new version follows; when nothing happens, a heartbeat', async () => {
    const feed = new MemoryFeed();
    feed.commit(change('t1', 3));
    const socket = new Socket();
    const { stream: s, notifier, done } = stream(feed, socket);
    await until(() => socket.events().some((e) => e.event === 'synced'));
    // when
    feed.commit(change('t9', 8));
    notifier.notify();
    await until(() => socket.events().some((e) => e.id === 8));
    // then
    expect(socket.events().at(-1)).toMatchObject({ event: 'rows', id: 8, data: { row_version: 8 } });
    await until(() => socket.events().some((e) => e.event === 'heartbeat'));
    expect(socket.events().find((e) => e.event === 'heartbeat')).toMatchObject({ id: 8, data: { checkpoint: 8 } });
    s.abandon();
    await done;
  });

  it('given a client whose socket stops taking writes, when rows keep coming, then it is sent closing PROJECTION_STREAM_SLOW_READER with the last id it was handed, and dropped', async () => {
    // given a client that read the first version, then stopped reading
    const feed = new MemoryFeed();
    feed.commit(change('t1', 3));
    const socket = new Socket();
    const { notifier, done } = stream(feed, socket);
    await until(() => socket.events().some((e) => e.event === 'synced'));
    socket.reading = false;
    // when
    feed.commit(change('t2', 4), change('t3', 6));
    notifier.notify();
    await done;
    // then
    const closing = socket.events().at(-1);
    expect(closing).toMatchObject({ event: 'closing', data: { code: 'PROJECTION_STREAM_SLOW_READER' } });
    // the version written into the full buffer was never taken: resume after the last one that was
    expect(closing?.data['resume_after']).toBe(3);
    expect(closing?.id).toBeUndefined();
    expect(socket.ended).toBe(true);
  });

  it('given a token that expires, when its exp passes, then closing PROJECTION_STREAM_CREDENTIAL_EXPIRED and the stream ends', async () => {
    const feed = new MemoryFeed();
    feed.commit(change('t1', 3));
    const socket = new Socket();
    const { done } = stream(feed, socket, { expiresInMs: 60 });
    await done;
    expect(socket.events().at(-1)).toMatchObject({ event: 'closing', data: { code: 'PROJECTION_STREAM_CREDENTIAL_EXPIRED', resume_after: 3 } });
    expect(socket.ended).toBe(true);
  });

  it('given the most streams an instance serves, then one more is refused PROJECTION_STREAMS_EXHAUSTED; at shutdown every stream gets closing PROJECTION_STREAM_SHUTDOWN', async () => {
    const feed = new MemoryFeed();
    const streams = new ChangeStreams({ feed, notifier: new ChangeNotifier(), options: OPTIONS, logger: quiet });
    const sockets = [new Socket(), new Socket()];
    const query = { since: 0, views: ['tasks'] as const, limit: 10, owner: undefined };
    const served = sockets.map((socket) => streams.serve(streams.open({ ...query, views: [...query.views] }, socket, Date.now() + 60_000)));
    expect(() => streams.open({ ...query, views: [...query.views] }, new Socket(), Date.now() + 60_000)).toThrow(expect.objectContaining({ code: 'PROJECTION_STREAMS_EXHAUSTED' }));
    await until(() => sockets.every((socket) => socket.events().some((e) => e.event === 'synced')));
    // when
    streams.closeAll();
    await Promise.all(served);
    // then
    for (const socket of sockets) expect(socket.events().at(-1)).toMatchObject({ event: 'closing', data: { code: 'PROJECTION_STREAM_SHUTDOWN', resume_after: 0 } });
    expect(streams.size).toBe(0);
  });

  it('given another instance commits (no wake-up here), when the poll sees the checkpoint move, then the stream reads and sends the new version', async () => {
    const feed = new MemoryFeed();
    const notifier = new ChangeNotifier();
    const streams = new ChangeStreams({ feed, notifier, options: { ...OPTIONS, heartbeatMs: 60_000, pollMs: 20 }, logger: quiet });
    const socket = new Socket();
    const served = streams.serve(streams.open({ since: 0, views: ['tasks'], limit: 10, owner: undefined }, socket, Date.now() + 60_000));
    await until(() => socket.events().some((e) => e.event === 'synced'));
    // when
    feed.commit(change('t7', 11));
    // then
    await until(() => socket.events().some((e) => e.id === 11));
    streams.closeAll();
    await served;
  });
});
