import { Validator } from '@seriousme/openapi-schema-validator';
import { EventDraft, PROBLEM_JSON, ProblemDetails, httpAudience, type PrincipalRole, type PrincipalType } from '@writ/contracts';
import { generateEd25519Key, type Ed25519SigningKey } from '@writ/crypto';
import { mintHttpToken } from '@writ/runtime';
import { uniqueName } from '@writ/testing';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalPath, approvalResolved, cellLifecycle, happyPath, storyIds, type StoryEvent, type StoryIds } from '../test/governed-path.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * The list endpoints, their errors and the OpenAPI document against the real NATS and
 * Postgres (services/projection/README.md, "HTTP API"): keyset pages that walk a list exactly
 * once while the log grows and rows change, filters that mean what the rows say, an agent that
 * cannot list another's work however it asks, cursors that cannot be forged into another query,
 * RFC 9457 problem details, and a served OpenAPI 3.1 document that names every route Nest
 * registers and describes what the routes really answer.
 */

type Row = Record<string, unknown>;
type Page = { items: Row[]; next_cursor: string | null };

interface Reader {
  readonly id: string;
  readonly key: Ed25519SigningKey;
}

const T0 = Date.parse('2030-01-01T00:00:00Z');
const minutes = (n: number): string => new Date(T0 + n * 60_000).toISOString();

/** The story moved `offset` minutes later: every fixture instant in it (occurred_at, payload times). */
function shifted(story: readonly StoryEvent[], offset: number): StoryEvent[] {
  return story.map((event) => ({
    ...event,
    draft: JSON.parse(JSON.stringify(event.draft).replace(/2030-01-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, (t) => new Date(Date.parse(t) + offset * 60_000).toISOString())) as EventDraft,
  }));
}

async function register(rig: Rig, id: string, type: PrincipalType, roles: PrincipalRole[]): Promise<Reader> {
  const key = await generateEd25519Key({ kid: `${id}-k1` });
  const draft = EventDraft.parse({
    event_id: uniqueName('evt'),
    schema_version: 1,
    event_type: 'principal.registered',
    entity_type: 'principal',
    entity_id: id,
    occurred_at: new Date().toISOString(),
    actor_type: 'service',
    actor_id: 'writ-ingress',
    payload: { principal_id: id, principal_type: type, display_name: id, roles, keys: [key.publicJwk], registered_by: 'test-operator', at: new Date().toISOString() },
    causation_id: null,
    correlation_id: id,
  });
  await rig.append([{ aggregate: 'principal', aggregateId: id, draft }]);
  return { id, key };
}

describe('the HTTP API: paged lists, problem details, OpenAPI', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let agentA: Reader;
  let agentB: Reader;
  let director: Reader;
  let tag: string;
  let serial = 0;
  const aHappy: StoryIds[] = [];
  const aApprovals: StoryIds[] = [];
  const bStories: StoryIds[] = [];

  const as = async (reader: Reader | undefined, path: string) =>
    http(app, path, {
      headers: { authorization: reader === undefined ? '' : `Bearer ${await mintHttpToken({ principalId: reader.id, key: reader.key, audience: httpAudience(rig.root), now: new Date() })}` },
    });
  const ids = (owner: Reader, label: string): StoryIds => ({ ...storyIds(`${tag}-${label}${serial++}`), principal: owner.id });
  const expectProblem = (answer: Awaited<ReturnType<typeof http>>, status: number, code: string) => {
    expect(answer.status).toBe(status);
    expect(answer.contentType).toMatch(/^application\/problem\+json\b/);
    expect(ProblemDetails.safeParse(answer.body).success, JSON.stringify(answer.body)).toBe(true);
    expect(answer.body).toMatchObject({ status, code, type: `/v1/problems/${code}`, message: answer.body['detail'] });
  };

  /** Every row of a list (one page of the maximum size): the reference the pages and filters are checked against. */
  const all = async (reader: Reader, list: string, query = ''): Promise<Row[]> => {
    const answer = await as(reader, `/v1/${list}?limit=1000${query}`);
    expect(answer.status, `${list}${query}`).toBe(200);
    expect((answer.body as Page).next_cursor).toBeNull();
    return (answer.body as Page).items;
  };

  beforeAll(async () => {
    rig = await createRig();
    app = await rig.start();
    tag = uniqueName('h');
    agentA = await register(rig, `${tag}-agent-a`, 'agent', ['executor']);
    agentB = await register(rig, `${tag}-agent-b`, 'agent', ['executor']);
    director = await register(rig, `${tag}-director`, 'user', ['director']);
    const stories: StoryEvent[][] = [];
    // A: 20 governed paths, half of them a minute apart, half at the same instant (ties on the time column), and 5 approvals waiting.
    for (let n = 0; n < 20; n++) {
      const story = ids(agentA, 'a');
      aHappy.push(story);
      stories.push(shifted(happyPath(story), n < 10 ? n : 10));
    }
    for (let n = 0; n < 5; n++) {
      const story = ids(agentA, 'ap');
      aApprovals.push(story);
      stories.push(shifted(approvalPath(story), 40 + n));
    }
    // B: 3 governed paths and 2 approvals, later.
    for (let n = 0; n < 5; n++) {
      const story = ids(agentB, 'b');
      bStories.push(story);
      stories.push(shifted(n < 3 ? happyPath(story) : approvalPath(story), 60 + n));
    }
    stories.push(cellLifecycle(`cell-${tag}`, director.id));
    await rig.caughtUp(await rig.appendStories(stories, 4));
  }, 120_000);

  afterAll(async () => {
    await rig?.dispose();
  });

  describe('keyset pages', () => {
    /**
     * Walks `list` page by page; before each next page `meanwhile` appends to the log and waits
     * for the projection. Returns every id served, in order.
     */
    async function walk(reader: Reader, list: string, key: string, limit: number, meanwhile: (page: number) => Promise<StoryEvent[]>): Promise<string[]> {
      const served: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 100; page++) {
        const answer = await as(reader, `/v1/${list}?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
        expect(answer.status, `${list} page ${page}`).toBe(200);
        const body = answer.body as Page;
        expect(body.items.length).toBeLessThanOrEqual(limit);
        served.push(...body.items.map((row) => String(row[key])));
        cursor = body.next_cursor;
        if (cursor === null) break;
        const events = await meanwhile(page);
        if (events.length > 0) await rig.caughtUp(await rig.append(events));
      }
      return served;
    }

    /** Minutes that only grow: each "newer" path is newer, each "older" one older, than anything appended before it. */
    let drift = 0;

    it.each([
      ['tasks', 'task_id', 7],
      ['actions', 'action_request_id', 9],
      ['receipts', 'receipt_id', 4],
      ['cells', 'cell_id', 6],
    ])('given more %s than a page holds, when walked while new ones arrive ahead of and behind the cursor, then every one that existed comes exactly once', async (list, key, limit) => {
      // given
      const before = (await all(director, list)).map((row) => String(row[key]));
      expect(before.length).toBeGreaterThan(limit * 2);
      // when: between pages, a path newer than every row (ahead of the cursor in this newest-first list) and one older than every row (behind it)
      const newer: StoryIds[] = [];
      const older: StoryIds[] = [];
      const served = await walk(director, list, key, limit, async () => {
        drift += 1;
        newer.push(ids(agentA, `new-${list}-`));
        older.push(ids(agentA, `old-${list}-`));
        return [...shifted(happyPath(newer.at(-1)!), 10_000 + drift), ...shifted(happyPath(older.at(-1)!), -10_000 - drift)];
      });
      // then: no row twice, every row that existed in its place, then the older ones as they came; the newer ones are the next walk's
      const idOf = (story: StoryIds) => ({ tasks: story.task, actions: story.actionRequest, receipts: story.receipt, cells: story.task })[list]!;
      expect(new Set(served).size, 'no row twice').toBe(served.length);
      expect(served).toEqual([...before, ...older.map(idOf)]);
      expect(served).not.toEqual(expect.arrayContaining([idOf(newer[0]!)]));
      expect((await all(director, list)).slice(0, newer.length).map((row) => row[key])).toEqual(newer.map(idOf).reverse());
    });

    it('given the approval inbox (oldest first), when walked while approvals are resolved and new ones requested, then each one that existed comes exactly once', async () => {
      // given
      const before = (await all(director, 'approvals')).map((row) => String(row['approval_id']));
      expect(before.length).toBeGreaterThanOrEqual(7);
      const toResolve = [...aApprovals];
      // when
      const served = await walk(director, 'approvals', 'approval_id', 2, async (page) => {
        const resolved = toResolve.shift();
        const requested = ids(agentA, 'ap-new');
        return [...(resolved === undefined ? [] : shifted([approvalResolved(resolved, 'granted', 7)], 40)), ...shifted(approvalPath(requested), 80 + page)];
      });
      // then: the resolved ones changed status, not place; the new ones (requested later) follow at the end
      expect(new Set(served).size).toBe(served.length);
      expect(served.slice(0, before.length)).toEqual(before);
      const after = await all(director, 'approvals', '&status=granted');
      expect(after.map((row) => row['approval_id'])).toEqual(expect.arrayContaining([aApprovals[0]!.approval]));
    });

    it('given a time window, then since is inclusive and until exclusive on the list\'s time column', async () => {
      // A's paths 5, 6 and 7 were created at T0 + 5, 6, 7 minutes (and 2 seconds)
      const window = await all(director, 'tasks', `&principal_id=${agentA.id}&since=${minutes(5)}&until=${minutes(8)}`);
      expect(window.map((row) => row['task_id'])).toEqual([aHappy[7]!.task, aHappy[6]!.task, aHappy[5]!.task]);
      const offset = await all(director, 'tasks', `&principal_id=${agentA.id}&since=${encodeURIComponent('2030-01-01T01:05:00+01:00')}&until=${minutes(6)}`);
      expect(offset.map((row) => row['task_id'])).toEqual([aHappy[5]!.task]);
    });
  });

  describe('filters', () => {
    /** Each filter answers exactly the rows of the unfiltered list whose field says so, in the same order. */
    async function expectFilter(list: string, key: string, parameter: string, value: string, matches: (row: Row) => boolean): Promise<void> {
      const everything = await all(director, list);
      const expected = everything.filter(matches).map((row) => row[key]);
      expect(expected.length, `${list}?${parameter}=${value} selects something`).toBeGreaterThan(0);
      expect(expected.length, `${list}?${parameter}=${value} leaves something out`).toBeLessThan(everything.length);
      const filtered = await all(director, list, `&${parameter}=${encodeURIComponent(value)}`);
      expect(filtered.map((row) => row[key]), `${list}?${parameter}=${value}`).toEqual(expected);
    }

    it('given the filters of /v1/tasks, /v1/actions and /v1/receipts, then each selects what its rows say', async () => {
      await expectFilter('tasks', 'task_id', 'principal_id', agentB.id, (row) => row['owner_principal_id'] === agentB.id);
      await expectFilter('tasks', 'task_id', 'status', 'completed', (row) => row['status'] === 'completed');
      // the search: any of id, title, goal, owner, profile contains it, whatever the case; % and _ are literal
      const needle = agentB.id.slice(2).toUpperCase();
      const searched = ['task_id', 'title', 'goal', 'owner_principal_id', 'policy_profile'];
      await expectFilter('tasks', 'task_id', 'q', needle, (row) => searched.some((key) => String(row[key] ?? '').toLowerCase().includes(needle.toLowerCase())));
      // as wildcards, '%-agent-b' and '-agent_b' would match B's tasks (owner <tag>-agent-b); as text they match nothing
      expect((await as(director, `/v1/tasks?q=${encodeURIComponent('%-agent-b')}`)).body).toMatchObject({ items: [], next_cursor: null });
      expect((await as(director, `/v1/tasks?q=${encodeURIComponent('-agent_b')}`)).body).toMatchObject({ items: [], next_cursor: null });
      await expectFilter('actions', 'action_request_id', 'status', 'awaiting_approval', (row) => row['status'] === 'awaiting_approval');
      await expectFilter('actions', 'action_request_id', 'principal_id', agentB.id, (row) => row['principal_id'] === agentB.id);
      await expectFilter('actions', 'action_request_id', 'task_id', aHappy[3]!.task, (row) => row['task_id'] === aHappy[3]!.task);
      const risky = (await all(director, 'actions')).find((row) => row['status'] === 'awaiting_approval')?.['risk_band'] as string;
      await expectFilter('actions', 'action_request_id', 'risk_band', risky, (row) => row['risk_band'] === risky);
      await expectFilter('receipts', 'receipt_id', 'task_id', aHappy[0]!.task, (row) => row['task_id'] === aHappy[0]!.task);
      await expectFilter('receipts', 'receipt_id', 'principal_id', agentB.id, (row) => bStories.some((story) => story.task === row['task_id']));
      await expectFilter('receipts', 'receipt_id', 'action_request_id', aHappy[1]!.actionRequest, (row) => row['action_request_id'] === aHappy[1]!.actionRequest);
    });

    it('given the filters of /v1/approvals and /v1/cells, then each selects what its rows say', async () => {
      await expectFilter('approvals', 'approval_id', 'status', 'pending', (row) => row['status'] === 'pending');
      await expectFilter('approvals', 'approval_id', 'principal_id', agentB.id, (row) => bStories.some((story) => story.task === row['task_id']));
      await expectFilter('approvals', 'approval_id', 'task_id', bStories[3]!.task, (row) => row['task_id'] === bStories[3]!.task);
      await expectFilter('cells', 'cell_id', 'status', 'CLOSED', (row) => row['status'] === 'CLOSED');
      await expectFilter('cells', 'cell_id', 'director_id', director.id, (row) => row['director_id'] === director.id);
      await expectFilter('cells', 'cell_id', 'task_id', aHappy[2]!.task, (row) => row['task_id'] === aHappy[2]!.task);
    });
  });

  describe('scope', () => {
    it("given agent A, when it lists, then it gets its own rows only, whatever filter or cursor it sends (adversarial)", async () => {
      const mineTasks = await all(agentA, 'tasks');
      expect(mineTasks.length).toBeGreaterThanOrEqual(25);
      for (const row of mineTasks) expect(row['owner_principal_id']).toBe(agentA.id);
      for (const list of ['tasks', 'actions', 'approvals', 'receipts', 'cells']) {
        const mine = JSON.stringify(await all(agentA, list));
        for (const story of bStories) expect(mine, list).not.toContain(story.task);
        // asking for B's work by owner or by task answers nothing, not B's rows
        expect((await as(agentA, `/v1/${list}?principal_id=${agentB.id}`)).body, list).toMatchObject({ items: [], next_cursor: null });
        if (list !== 'tasks') expect((await as(agentA, `/v1/${list}?task_id=${bStories[0]!.task}`)).body, list).toMatchObject({ items: [], next_cursor: null });
      }
      // a cursor a director was given positions A's walk; it never widens it
      const directorPage = (await as(director, '/v1/tasks?limit=2')).body as Page;
      const fromCursor = (await as(agentA, `/v1/tasks?limit=1000&cursor=${directorPage.next_cursor}`)).body as Page;
      expect(fromCursor.items.length).toBeGreaterThan(0);
      for (const row of fromCursor.items) expect(row['owner_principal_id']).toBe(agentA.id);
    });

    it('given agent B, when it reads the approvals list, then only its own two show', async () => {
      const mine = await all(agentB, 'approvals');
      expect(mine.map((row) => row['task_id']).sort()).toEqual([bStories[3]!.task, bStories[4]!.task].sort());
    });
  });

  describe('errors are RFC 9457 problem details with the stable code', () => {

    it('given a garbled, altered or foreign cursor, then 400 PROJECTION_CURSOR_INVALID', async () => {
      const cursor = ((await as(director, '/v1/tasks?limit=2&status=completed')).body as Page).next_cursor as string;
      const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { l: string; f: string; k: [string, string] };
      const forged = (change: Record<string, unknown>) => Buffer.from(JSON.stringify({ ...decoded, ...change })).toString('base64url');
      for (const [what, path] of [
        ['garbled', '/v1/tasks?status=completed&cursor=%25%25%25'],
        ['not base64url JSON', '/v1/tasks?status=completed&cursor=bm90IGpzb24'],
        ['truncated', `/v1/tasks?status=completed&cursor=${cursor.slice(0, -6)}`],
        ['another list', `/v1/actions?cursor=${cursor}`],
        ['other filters', `/v1/tasks?status=failed&cursor=${cursor}`],
        ['no filters', `/v1/tasks?cursor=${cursor}`],
        ['its list renamed', `/v1/actions?cursor=${forged({ l: 'actions' })}`],
        ['its fingerprint replaced', `/v1/tasks?status=completed&cursor=${forged({ f: '0'.repeat(16) })}`],
        ['a key that is not a time', `/v1/tasks?status=completed&cursor=${forged({ k: ["'; DROP TABLE tasks; --", 'x'] })}`],
        ['too long', `/v1/tasks?status=completed&cursor=${'A'.repeat(600)}`],
      ] as const) {
        const answer = await as(director, path);
        expect(answer.body['code'], what).toBe('PROJECTION_CURSOR_INVALID');
        expectProblem(answer, 400, 'PROJECTION_CURSOR_INVALID');
        expect(answer.body['parameter'], what).toBe('cursor');
      }
      // the genuine one still works with the filters it was made for
      expect((await as(director, `/v1/tasks?status=completed&limit=2&cursor=${cursor}`)).status).toBe(200);
    });

    it('given a malformed filter, an unknown parameter or a limit out of bounds, then 400 PROJECTION_REQUEST_INVALID naming the parameter', async () => {
      for (const [path, parameter] of [
        ['/v1/actions?status=sleeping', 'status'],
        ['/v1/tasks?since=yesterday', 'since'],
        ['/v1/receipts?limit=0', 'limit'],
        ['/v1/cells?limit=1001', 'limit'],
        ['/v1/approvals?status=pending&status=granted', 'status'],
        ['/v1/tasks?owner=x', 'owner'],
        ['/v1/actions?principal_id=a.b', 'principal_id'],
      ] as const) {
        const answer = await as(director, path);
        expectProblem(answer, 400, 'PROJECTION_REQUEST_INVALID');
        expect(answer.body['parameter'], path).toBe(parameter);
      }
    });

    it('given a missing task, no credential, or an unknown route, then 404 / 401 / 404 as problem details, and their types resolve', async () => {
      const missing = await as(director, `/v1/tasks/${tag}-nope`);
      expectProblem(missing, 404, 'PROJECTION_NOT_FOUND');
      expect(missing.body['instance']).toBe(`/v1/tasks/${tag}-nope`);
      expectProblem(await as(undefined, '/v1/tasks'), 401, 'HTTP_AUTH_MISSING');
      expectProblem(await as(undefined, '/v1/nothing-here'), 404, 'PROJECTION_ROUTE_NOT_FOUND');
      expect(await as(undefined, '/v1/problems/PROJECTION_CURSOR_INVALID')).toMatchObject({
        status: 200,
        body: { type: '/v1/problems/PROJECTION_CURSOR_INVALID', code: 'PROJECTION_CURSOR_INVALID', title: 'Projection cursor invalid', status: 400 },
      });
      expectProblem(await as(undefined, '/v1/problems/not-a-code'), 400, 'PROJECTION_REQUEST_INVALID');
    });
  });

  describe('GET /v1/openapi.json', () => {
    it('given no credential, when fetched, then it validates as OpenAPI 3.1', async () => {
      const answer = await as(undefined, '/v1/openapi.json');
      expect(answer.status).toBe(200);
      const validator = new Validator();
      const result = await validator.validate(structuredClone(answer.body));
      expect(result.errors ?? []).toEqual([]);
      expect(validator.version).toBe('3.1');
    });

    it('given the routes Nest registered, then each is in the document and the document describes no route that is not served', async () => {
      // given: the express router's routes (`:id` → `{id}`)
      const express = app.app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } };
      type Layer = { route?: { path: string; methods: Record<string, boolean> } };
      const served = (express.router ?? express._router)!.stack
        .flatMap((layer) => (layer.route === undefined ? [] : Object.keys(layer.route.methods).map((method) => `${method.toUpperCase()} ${layer.route!.path.replace(/:(\w+)/g, '{$1}')}`)))
        .sort();
      // when
      const document = (await as(undefined, '/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
      const described = Object.entries(document.paths)
        .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
        .sort();
      // then
      expect(served.length).toBeGreaterThan(25);
      expect(described).toEqual(served);
    });

    it('given the documented schemas, when the lists, reads and errors answer, then each answer (the changes feed too) conforms to its schema', async () => {
      // given
      const document = (await as(undefined, '/v1/openapi.json')).body as { components: unknown; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> };
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats.default(ajv);
      ajv.addSchema({ $id: 'writ:served', components: document.components });
      const conforms = (path: string, template: string, status: number, media: string, body: unknown) => {
        const schema = document.paths[template]?.['get']?.responses[String(status)]?.content?.[media]?.schema;
        expect(schema, `${template} ${status} is documented`).toBeDefined();
        const validate = ajv.compile({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"writ:served#/components/')) as object) });
        expect(validate(body), `${path}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      };
      // when / then
      for (const list of ['tasks', 'actions', 'approvals', 'receipts', 'cells']) {
        const answer = await as(director, `/v1/${list}?limit=5`);
        conforms(`/v1/${list}`, `/v1/${list}`, 200, 'application/json', answer.body);
      }
      conforms('task', '/v1/tasks/{id}', 200, 'application/json', (await as(director, `/v1/tasks/${aHappy[0]!.task}`)).body);
      conforms('action', '/v1/actions/{id}', 200, 'application/json', (await as(director, `/v1/actions/${aHappy[0]!.actionRequest}`)).body);
      conforms('receipt', '/v1/receipts/{id}', 200, 'application/json', (await as(director, `/v1/receipts/${aHappy[0]!.receipt}`)).body);
      conforms('approval', '/v1/approvals/{id}', 200, 'application/json', (await as(director, `/v1/approvals/${bStories[3]!.approval}`)).body);
      conforms('cell', '/v1/cells/{id}', 200, 'application/json', (await as(director, `/v1/cells/cell-${tag}`)).body);
      conforms('keys', '/v1/keys', 200, 'application/json', (await as(undefined, '/v1/keys')).body);
      conforms('healthz', '/healthz', 200, 'application/json', (await as(undefined, '/healthz')).body);
      conforms('a 404', '/v1/tasks/{id}', 404, PROBLEM_JSON, (await as(director, `/v1/tasks/${tag}-nope`)).body);
      conforms('a 400', '/v1/tasks', 400, PROBLEM_JSON, (await as(director, '/v1/tasks?limit=x')).body);
      // the dashboard contract's changes feed: its page, and its errors as problem details
      conforms('changes', '/v1/changes', 200, 'application/json', (await as(director, '/v1/changes?since=0&limit=5')).body);
      const badViews = await as(director, '/v1/changes?views=nope');
      expectProblem(badViews, 400, 'PROJECTION_REQUEST_INVALID');
      conforms('a changes 400', '/v1/changes', 400, PROBLEM_JSON, badViews.body);
      expectProblem(await as(director, '/v1/changes/stream?since=x'), 400, 'PROJECTION_REQUEST_INVALID');
      expectProblem(await as(undefined, '/v1/changes'), 401, 'HTTP_AUTH_MISSING');
    });
  });
});
