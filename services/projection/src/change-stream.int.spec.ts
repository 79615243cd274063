import { StreamClosingSchema, StreamRowsSchema, type ProjectionChange } from '@writ/contracts/projection-rows';
import { openEventStream, uniqueName, type EventStream, type ServerSentEvent } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullPath, happyPath, resolvedApprovalPath, storyIds, type StoryIds } from '../test/governed-path.fixture.js';
import { createRig, type Rig } from '../test/projection-rig.js';
import { liveVersions, readerToken, registerReader, type Reader } from '../test/readers.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * `GET /v1/changes/stream` (Server-Sent Events) against the real NATS and
 * Postgres (issue 16): a browser dashboard replays from a version, then gets
 * the live changes as the projector commits them; one that disconnects
 * resumes with `Last-Event-ID` and ends with exactly the live rows, no gap;
 * it authenticates like every read, with `?access_token=` for EventSource;
 * an agent gets its own rows only; the stream ends when the token expires.
 */

/** A dashboard fed by the stream: `<view>/<id>` → newest change, and the last id the stream gave (what EventSource keeps as Last-Event-ID). */
class StreamDashboard {
  readonly rows = new Map<string, ProjectionChange>();
  lastEventId: string | undefined;
  readonly events: ServerSentEvent[] = [];

  take(event: ServerSentEvent): void {
    this.events.push(event);
    if (event.id !== undefined) this.lastEventId = event.id;
    if (event.event !== 'rows') return;
    const rows = StreamRowsSchema.parse(JSON.parse(event.data));
    expect(event.id).toBe(String(rows.row_version));
    for (const change of rows.changes) {
      expect(change.row_version).toBe(rows.row_version);
      const key = `${change.view}/${change.id}`;
      const held = this.rows.get(key);
      if (held === undefined || held.row_version <= change.row_version) this.rows.set(key, change);
    }
  }

  /** Reads `stream` until `done` says so (or it ends). */
  async readUntil(stream: EventStream, done: (event: ServerSentEvent) => boolean): Promise<ServerSentEvent | undefined> {
    for (;;) {
      const event = await stream.next();
      if (event === undefined) return undefined;
      this.take(event);
      if (done(event)) return event;
    }
  }

  versions(): Map<string, number> {
    return new Map([...this.rows].map(([key, change]) => [key, change.row_version]));
  }
}

describe('GET /v1/changes/stream (SSE)', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let observer: Reader;
  let agent: Reader;
  let a: StoryIds;
  let b: StoryIds;
  const open: EventStream[] = [];

  const connect = async (query: string, headers: Record<string, string>): Promise<EventStream> => {
    const stream = await openEventStream(`${app.url}/v1/changes/stream${query}`, headers);
    open.push(stream);
    return stream;
  };
  const bearer = async (reader: Reader, ttlSeconds?: number) => ({ authorization: `Bearer ${await readerToken(rig, reader, ttlSeconds)}` });

  beforeAll(async () => {
    rig = await createRig({ WRIT_SSE_HEARTBEAT_MS: '500' });
    app = await rig.start();
    a = storyIds(uniqueName('sa'));
    b = storyIds(uniqueName('sb'));
    observer = await registerReader(rig, uniqueName('dashboard'), 'system', ['observer']);
    agent = await registerReader(rig, a.principal, 'agent', ['executor']);
    await rig.append(fullPath(a));
    await rig.caughtUp(await rig.append(resolvedApprovalPath(b, 'denied')));
  }, 60_000);

  afterAll(async () => {
    for (const stream of open) stream.close();
    await rig?.dispose();
  });

  it('given a dashboard that starts late, when it opens the stream from 0, then it replays to exactly the live rows, says synced, and then follows the projector live', async () => {
    // when
    const dashboard = new StreamDashboard();
    const stream = await connect('?since=0', await bearer(observer));
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const synced = await dashboard.readUntil(stream, (event) => event.event === 'synced');
    // then
    expect(synced?.id).toBe(String(await rig.checkpoint()));
    expect(dashboard.versions()).toEqual(await liveVersions(rig));
    // and when another task runs, its rows arrive as the projector commits them
    const c = storyIds(uniqueName('sc'));
    const last = await rig.append(happyPath(c));
    await dashboard.readUntil(stream, (event) => event.event === 'rows' && (dashboard.rows.get(`tasks/${c.task}`)?.row as { status?: string } | undefined)?.status === 'completed');
    await rig.caughtUp(last);
    expect(dashboard.versions()).toEqual(await liveVersions(rig));
    // and ids only grow
    const ids = dashboard.events.filter((event) => event.id !== undefined).map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    stream.close();
  });

  it('given a dashboard that disconnects mid-replay, when more happens and it reconnects with Last-Event-ID, then it ends with exactly the live rows, no gap', async () => {
    // given a dashboard that took the first version only
    const dashboard = new StreamDashboard();
    const first = await connect('?since=0', await bearer(observer));
    await dashboard.readUntil(first, (event) => event.event === 'rows');
    first.close();
    const resumedFrom = Number(dashboard.lastEventId);
    expect(resumedFrom).toBeLessThan(await rig.checkpoint());
    // when more happens while it is away
    const d = storyIds(uniqueName('sd'));
    await rig.caughtUp(await rig.append(happyPath(d)));
    // and it reconnects as EventSource does: same URL (since=0), Last-Event-ID = the last id it got
    const again = await connect('?since=0', { ...(await bearer(observer)), 'last-event-id': dashboard.lastEventId ?? '' });
    const before = dashboard.events.length;
    await dashboard.readUntil(again, (event) => event.event === 'synced');
    // then
    expect(dashboard.versions()).toEqual(await liveVersions(rig));
    // and the stream resumed after the last id: nothing at or before it was sent again
    const resent = dashboard.events.slice(before).filter((event) => event.event === 'rows' && Number(event.id) <= resumedFrom);
    expect(resent).toEqual([]);
    again.close();
  });

  it('given an EventSource, which cannot send headers, when the token is in ?access_token=, then the stream is served as for the header; a bad or missing token is 401', async () => {
    const token = await readerToken(rig, observer);
    const viaQuery = await connect(`?since=0&views=tasks&access_token=${token}`, {});
    expect(viaQuery.status).toBe(200);
    const dashboard = new StreamDashboard();
    await dashboard.readUntil(viaQuery, (event) => event.event === 'synced');
    expect(new Set([...dashboard.rows.values()].map((change) => change.view))).toEqual(new Set(['tasks']));
    viaQuery.close();
    // a token that does not verify, or none at all
    const forged = await connect(`?access_token=${token.slice(0, -4)}AAAA`, {});
    expect(forged.status).toBe(401);
    expect(JSON.parse(forged.body ?? '{}')).toMatchObject({ code: 'HTTP_AUTH_SIGNATURE_INVALID' });
    const none = await connect('?since=0', {});
    expect([none.status, JSON.parse(none.body ?? '{}').code]).toEqual([401, 'HTTP_AUTH_MISSING']);
    // the header, when sent, wins over the query
    const both = await connect('?access_token=garbage', await bearer(observer));
    expect(both.status).toBe(200);
    both.close();
    // and on any other route the query token is not a credential
    const elsewhere = await fetch(`${app.url}/v1/changes?access_token=${token}`);
    expect(elsewhere.status).toBe(401);
  });

  it('given an agent, when it opens the stream, then it gets its own rows only', async () => {
    const dashboard = new StreamDashboard();
    const stream = await connect('', await bearer(agent));
    await dashboard.readUntil(stream, (event) => event.event === 'synced');
    stream.close();
    const live = await liveVersions(rig);
    const own = new Map([...live].filter(([key]) => key.includes(a.tag) || key === `principals/${a.principal}`));
    expect(dashboard.versions()).toEqual(own);
    expect(JSON.stringify([...dashboard.rows.values()])).not.toContain(b.tag);
  });

  it('given a short-lived token, when it expires, then the stream says closing PROJECTION_STREAM_CREDENTIAL_EXPIRED with where to resume, and ends', async () => {
    const dashboard = new StreamDashboard();
    const stream = await connect('?views=tasks', await bearer(observer, 2));
    const closing = await dashboard.readUntil(stream, (event) => event.event === 'closing');
    const reason = StreamClosingSchema.parse(JSON.parse(closing?.data ?? '{}'));
    expect(reason.code).toBe('PROJECTION_STREAM_CREDENTIAL_EXPIRED');
    expect(String(reason.resume_after)).toBe(dashboard.lastEventId);
    expect(await stream.next()).toBeUndefined();
  });

  it('given malformed parameters, then 400 PROJECTION_REQUEST_INVALID before any event', async () => {
    const stream = await connect('?views=nope', await bearer(observer));
    expect(stream.status).toBe(400);
    expect(JSON.parse(stream.body ?? '{}')).toMatchObject({ code: 'PROJECTION_REQUEST_INVALID' });
    const badId = await connect('', { ...(await bearer(observer)), 'last-event-id': 'x1' });
    expect(badId.status).toBe(400);
  });
});
