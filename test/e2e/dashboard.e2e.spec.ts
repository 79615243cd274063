import { readFileSync } from 'node:fs';
import path from 'node:path';
import { credsAuthenticator, connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import {
  ChangesPageSchema,
  PROJECTION_HEADERS,
  PUBLISHED_VIEWS,
  StreamRowsSchema,
  projectionMsgId,
  projectionRowSchemaFile,
  type ChangesPage,
  type ProjectionChange,
  type PublishedView,
} from '@writ/contracts/projection-rows';
import { openEventStream, uniqueName, waitFor, type EventStream, type ServerSentEvent } from '@writ/testing';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startStack, type Principal, type Stack } from './support/stack.mjs';
import { stopStackAfterAll } from './support/stack-lifecycle.js';

/**
 * The dashboard contract end to end (issue 16), with the seven built services as processes on
 * the real NATS, Postgres and Docker: while agents' actions run (allowed, denied by policy),
 * - every message on `<root>.proj.>` is checked: its row against the committed JSON Schema of
 *   its view (docs/schemas/projection-rows, draft 2020-12), its headers against the AsyncAPI
 *   document the projection serves for this root, and against each other (message id, view,
 *   row version), each view's chain of Writ-Prev-Version unbroken;
 * - four dashboards end with exactly the live rows, as the projection serves them over HTTP:
 *   one on the bus following the documented protocol (subscribe, snapshot, apply, re-read on a
 *   gap), one on the SSE stream from the start, one that disconnects from the stream mid-way and
 *   resumes with Last-Event-ID, and one that starts late and reads GET /v1/changes page by page.
 */

const STEP_MS = 240_000;
const decoder = new TextDecoder();

let stack: Stack;

beforeAll(async () => {
  // Heartbeats every second: a stream tells its position that often even when no row changes.
  stack = await startStack({ prefix: 'e2edash', serviceEnv: { projection: { WRIT_SSE_HEARTBEAT_MS: '1000' } } });
}, 180_000);

stopStackAfterAll(() => stack);

/** `<view>/<id>` → the newest change held. */
type Rows = Map<string, ProjectionChange>;

function hold(rows: Rows, change: ProjectionChange): void {
  const key = `${change.view}/${change.id}`;
  const held = rows.get(key);
  if (held === undefined || held.row_version <= change.row_version) rows.set(key, change);
}

/** The projection as it is now, over HTTP: every row of every published view (once caught up with the log), and the checkpoint it was read at. */
async function liveRows(reader: Principal): Promise<{ rows: Rows; checkpoint: number }> {
  await waitFor(async () => ((await stack.http('/v1/projections/status')).body.events_behind === 0 ? true : undefined), { what: 'the projection caught up with the log', timeoutMs: 60_000, intervalMs: 200 });
  const rows: Rows = new Map();
  let since = 0;
  for (;;) {
    const page = ChangesPageSchema.parse((await stack.http(`/v1/changes?since=${since}&limit=5000`, { as: reader })).body);
    for (const change of page.changes) hold(rows, change);
    since = page.next;
    if (!page.more) return { rows, checkpoint: page.checkpoint };
  }
}

const same = (a: Rows, b: Rows): boolean => a.size === b.size && [...b].every(([key, change]) => a.get(key)?.row_version === change.row_version);

/** Each row's version: what "exactly the live rows" compares (the rows themselves are compared by content too, below). */
const versions = (rows: Rows) => new Map([...rows].map(([key, change]) => [key, change.row_version]));
const contents = (rows: Rows) => new Map([...rows].map(([key, change]) => [key, change.row]));

/**
 * A dashboard on the bus, as docs/dashboard-contract.md tells one to be: subscribe first, then
 * read the snapshot, then apply what arrives; a message whose Writ-Prev-Version is above what
 * it holds of that view means it missed a change: it re-reads GET /v1/changes from its position.
 */
class BusDashboard {
  readonly rows: Rows = new Map();
  /** Per view: every version up to this one is held. */
  readonly held = new Map<PublishedView, number>();
  /** Per view: the version being received and how many of its rows arrived. */
  readonly partial = new Map<PublishedView, { version: number; expected: number; seen: Set<string> }>();
  position = 0;
  rereads = 0;
  buffered: Msg[] | undefined = [];

  constructor(private readonly reader: Principal) {}

  async snapshot(): Promise<void> {
    await this.reread();
    const early = this.buffered ?? [];
    this.buffered = undefined;
    for (const msg of early) await this.receive(msg);
    // messages that came while the early ones were handled were queued behind them
    await this.#queue;
  }

  #queue: Promise<void> = Promise.resolve();

  /** Messages are handled one at a time, in arrival order (a re-read in between included). */
  receive(msg: Msg): Promise<void> {
    if (this.buffered !== undefined) {
      this.buffered.push(msg);
      return Promise.resolve();
    }
    this.#queue = this.#queue.then(() => this.#handle(msg));
    return this.#queue;
  }

  async #handle(msg: Msg): Promise<void> {
    const view = msg.headers?.get(PROJECTION_HEADERS.view) as PublishedView;
    const version = Number(msg.headers?.get(PROJECTION_HEADERS.rowVersion));
    const prev = Number(msg.headers?.get(PROJECTION_HEADERS.prevVersion));
    const count = Number(msg.headers?.get(PROJECTION_HEADERS.versionRows));
    const held = Math.max(this.held.get(view) ?? 0, this.position);
    if (version <= held) return; // already held (the snapshot had it)
    const partial = this.partial.get(view);
    if (prev > held && partial?.version !== version) {
      // a change of this view between what it holds and this one never arrived
      await this.reread();
      return;
    }
    const row = JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>;
    hold(this.rows, { view, id: msg.subject.split('.').at(-1) ?? '', row_version: version, row } as ProjectionChange);
    const receiving = partial?.version === version ? partial : { version, expected: count, seen: new Set<string>() };
    receiving.seen.add(msg.subject);
    this.partial.set(view, receiving);
    if (receiving.seen.size >= receiving.expected) {
      this.held.set(view, version);
      this.partial.delete(view);
    }
  }

  async reread(): Promise<void> {
    this.rereads += 1;
    for (;;) {
      const page: ChangesPage = ChangesPageSchema.parse((await stack.http(`/v1/changes?since=${this.position}`, { as: this.reader })).body);
      for (const change of page.changes) hold(this.rows, change);
      this.position = page.next;
      if (!page.more) break;
    }
    this.partial.clear();
  }
}

/** A dashboard on the SSE stream: rows by version, the last id it got (its Last-Event-ID). */
class StreamDashboard {
  readonly rows: Rows = new Map();
  lastEventId: string | undefined;

  /** Reads until an id at or past `version` (a heartbeat's, at the latest): everything up to it received. */
  async readTo(stream: EventStream, version: number): Promise<void> {
    if (Number(this.lastEventId ?? 0) >= version) return;
    await this.read(stream, (event) => event.id !== undefined && Number(event.id) >= version);
  }

  async read(stream: EventStream, until: (event: ServerSentEvent) => boolean): Promise<void> {
    for (;;) {
      const event = await stream.next();
      if (event === undefined) throw new Error('the stream ended');
      if (event.id !== undefined) this.lastEventId = event.id;
      if (event.event === 'rows') for (const change of StreamRowsSchema.parse(JSON.parse(event.data)).changes) hold(this.rows, change);
      if (until(event)) return;
    }
  }
}

describe('the dashboard contract', () => {
  it(
    'every published row validates against its schema and its headers against the AsyncAPI document; dashboards that follow, start late or disconnect end with exactly the live rows',
    async () => {
      // given a dashboard principal (observer) with its bus credential and HTTP key
      const dashboard = await stack.registerPrincipal({ id: uniqueName('dashboard').replaceAll('_', '-'), type: 'system', roles: ['observer'] });
      const bus: NatsConnection = await connect({ servers: stack.natsUrl.split(','), name: dashboard.id, authenticator: credsAuthenticator(readFileSync(dashboard.credsFile ?? '')) });
      // the schemas a dashboard author takes: the committed JSON Schemas and the AsyncAPI document of this deployment
      const rowSchemas = new Ajv2020({ strict: true, allErrors: true });
      addFormats.default(rowSchemas);
      const validateRow = new Map(
        PUBLISHED_VIEWS.map((view) => [view, rowSchemas.compile(JSON.parse(readFileSync(path.join(REPO_ROOT, 'docs', 'schemas', projectionRowSchemaFile(view)), 'utf8')) as object)]),
      );
      const asyncapi = await fetch(`${stack.apiUrl}/v1/asyncapi.json`);
      expect(asyncapi.status).toBe(200);
      const document = (await asyncapi.json()) as { channels: Record<string, { address: string }>; components: { messages: Record<string, { headers: object }> } };
      const headerSchemas = new Ajv({ strict: false, allErrors: true });
      const validateHeaders = new Map(
        PUBLISHED_VIEWS.map((view) => {
          const channel = Object.values(document.channels).find((c) => c.address.startsWith(`${stack.root}.proj.${view}.{`));
          expect(channel, view).toBeDefined();
          const name = `${view.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()).replace(/^./, (c) => c.toUpperCase())}Row`;
          return [view, headerSchemas.compile(document.components.messages[name]?.headers ?? {})];
        }),
      );

      // and, before anything runs: every message on <root>.proj.> checked, a bus dashboard subscribed, a stream dashboard following from 0
      const problems: string[] = [];
      const chains = new Map<PublishedView, { current: number; prev: number }>();
      const messages: Msg[] = [];
      const follower = new BusDashboard(dashboard);
      const subscription = bus.subscribe(stack.subject('proj.>'), {
        callback: (error, msg) => {
          if (error !== null) return void problems.push(`subscription: ${error.message}`);
          messages.push(msg);
          void follower.receive(msg).catch((e: unknown) => problems.push(`bus dashboard: ${String(e)}`));
        },
      });
      await bus.flush();
      await follower.snapshot();
      const subscribedAt = follower.position;
      const live = new StreamDashboard();
      const following = await openEventStream(`${stack.apiUrl}/v1/changes/stream?since=0`, { authorization: await stack.bearer(dashboard) });
      expect(following.status).toBe(200);
      await live.read(following, (event) => event.event === 'synced');

      // when agents' actions run: allowed commands, one denied by policy
      const agent = await stack.registerPrincipal();
      const other = await stack.registerPrincipal();
      const submitted: string[] = [];
      const run = async (who: Principal, overrides: Record<string, unknown> = {}) => {
        const request = stack.actionRequest(who, overrides);
        submitted.push(request.action_request_id);
        await stack.submit(who, request);
        return stack.waitForAction(request.action_request_id);
      };
      expect(await run(agent)).toMatchObject({ status: 'succeeded' });
      // a dashboard that joins the stream now and leaves after its first version
      const leaving = new StreamDashboard();
      const first = await openEventStream(`${stack.apiUrl}/v1/changes/stream?since=0`, { authorization: await stack.bearer(dashboard) });
      await leaving.read(first, (event) => event.event === 'rows');
      first.close();
      const denied = await run(other, stack.deniedActionRequest(other, { reversibility_hint: 'irreversible' }));
      expect(denied).toMatchObject({ status: 'denied' });
      expect(await run(other, { params: { argv: ['sh', '-c', 'echo again > out.txt'] } })).toMatchObject({ status: 'succeeded' });

      // then, once the views are quiet (cells keep moving a little after their task ends), every dashboard holds exactly
      // the projection as HTTP serves it: the one that followed the stream from the start; the one that left mid-way and
      // resumes with Last-Event-ID; one that starts only now, reading GET /v1/changes ten rows at a time; the bus one
      const resumed = await openEventStream(`${stack.apiUrl}/v1/changes/stream?since=0`, { authorization: await stack.bearer(dashboard), 'last-event-id': leaving.lastEventId ?? '0' });
      await leaving.read(resumed, (event) => event.event === 'synced');
      const late = { rows: new Map() as Rows, position: 0 };
      let truth: Rows = new Map();
      for (let round = 1; ; round++) {
        const now = await liveRows(dashboard);
        truth = now.rows;
        await live.readTo(following, now.checkpoint);
        await leaving.readTo(resumed, now.checkpoint);
        for (let more = true; more; ) {
          const page = ChangesPageSchema.parse((await stack.http(`/v1/changes?since=${late.position}&limit=10`, { as: dashboard })).body);
          for (const change of page.changes) hold(late.rows, change);
          late.position = page.next;
          more = page.more;
        }
        const busReached = await waitFor(async () => (same(follower.rows, truth) ? true : undefined), { what: 'the bus dashboard at the live rows', timeoutMs: 10_000, intervalMs: 100 }).then(
          () => true,
          () => false,
        );
        const settled = busReached && [live.rows, leaving.rows, late.rows].every((rows) => same(rows, truth));
        // Moved or not, asked of the same snapshot the truth came from (the status route's checkpoint may trail a commit).
        const moved = ChangesPageSchema.parse((await stack.http(`/v1/changes?since=${now.checkpoint}&limit=1`, { as: dashboard })).body).checkpoint !== now.checkpoint;
        if (settled || !moved || round >= 10) break;
      }
      for (const [name, rows] of [
        ['stream from the start', live.rows],
        ['stream resumed with Last-Event-ID', leaving.rows],
        ['late GET /v1/changes', late.rows],
        ['bus with the protocol', follower.rows],
      ] as const) {
        expect(versions(rows), name).toEqual(versions(truth));
        expect(contents(rows), name).toEqual(contents(truth));
      }
      for (const id of submitted) expect(truth.get(`actions/${id}`)?.row).toEqual((await stack.http(`/v1/actions/${id}`, { as: dashboard })).body);
      following.close();
      resumed.close();
      // with nothing lost on the way, the headers proved every message in sequence: no re-read after the snapshot
      expect(follower.rereads).toBe(1);
      subscription.unsubscribe();
      await bus.close();

      // and every message on <root>.proj.> was a valid row with its headers
      expect(messages.length).toBeGreaterThan(20);
      for (const msg of messages) {
        const [, view, id] = msg.subject.slice(stack.root.length + 1).split('.') as [string, PublishedView, string];
        const row = JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>;
        const headers = Object.fromEntries([...(msg.headers?.keys() ?? [])].map((key) => [key, msg.headers?.get(key)]));
        const validRow = validateRow.get(view);
        if (validRow === undefined || !validRow(row)) problems.push(`${msg.subject}: row ${JSON.stringify(validRow?.errors ?? 'unknown view')}`);
        const validHeaders = validateHeaders.get(view);
        if (validHeaders === undefined || !validHeaders(headers)) problems.push(`${msg.subject}: headers ${JSON.stringify(validHeaders?.errors)}`);
        const version = Number(headers[PROJECTION_HEADERS.rowVersion]);
        if (row['row_version'] !== version) problems.push(`${msg.subject}: Writ-Row-Version ${version} but row_version ${String(row['row_version'])}`);
        if (headers[PROJECTION_HEADERS.view] !== view) problems.push(`${msg.subject}: Writ-View ${headers[PROJECTION_HEADERS.view]}`);
        if (headers[PROJECTION_HEADERS.msgId] !== projectionMsgId(view, id, version)) problems.push(`${msg.subject}: Writ-Msg-Id ${headers[PROJECTION_HEADERS.msgId]}`);
        // each view's chain: a new version links to the one before it
        const prev = Number(headers[PROJECTION_HEADERS.prevVersion]);
        const chain = chains.get(view);
        if (chain !== undefined && version !== chain.current && prev !== chain.current) problems.push(`${msg.subject}: Writ-Prev-Version ${prev}, the view was at ${chain.current}`);
        if (chain === undefined || version !== chain.current) chains.set(view, { current: version, prev });
      }
      expect(problems).toEqual([]);
      // and every row that changed while subscribed went out on the bus at its last version
      const published = new Set(messages.map((msg) => `${msg.subject.slice(stack.root.length + 1).split('.').slice(1).join('/')}@${msg.headers?.get(PROJECTION_HEADERS.rowVersion)}`));
      const changedSince = [...truth].filter(([, change]) => change.row_version > subscribedAt);
      expect(changedSince.filter(([key, change]) => !published.has(`${key}@${change.row_version}`))).toEqual([]);
      expect(new Set(changedSince.map(([, change]) => change.view)).size).toBeGreaterThanOrEqual(8);
    },
    STEP_MS,
  );
});
