import { PUBLISHED_VIEWS, ChangesPageSchema, type ChangesPage, type ProjectionChange } from '@writ/contracts/projection-rows';
import { uniqueName } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullPath, happyPath, resolvedApprovalPath, storyIds, type StoryIds } from '../test/governed-path.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import { liveVersions, readerToken, registerReader as register, type Reader } from '../test/readers.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * `GET /v1/changes` against the real NATS and Postgres (issue 16): a
 * dashboard that starts late, or stops half way and comes back, reads the
 * feed page by page from its last `next` and ends with exactly the rows the
 * projection holds — whatever the page size, since a page never splits a
 * version; and an agent reading the same feed sees its own rows and nothing
 * of anyone else's, whatever it asks for.
 */

/** A dashboard's copy: `<view>/<id>` → the newest row it received. */
class Dashboard {
  readonly rows = new Map<string, ProjectionChange>();
  position = 0;

  apply(page: ChangesPage): void {
    for (const change of page.changes) {
      const key = `${change.view}/${change.id}`;
      const held = this.rows.get(key);
      if (held === undefined || held.row_version <= change.row_version) this.rows.set(key, change);
    }
    this.position = page.next;
  }

  versions(): Map<string, number> {
    return new Map([...this.rows].map(([key, change]) => [key, change.row_version]));
  }
}

describe('GET /v1/changes: snapshot and resume', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let a: StoryIds;
  let b: StoryIds;
  let agentA: Reader;
  let agentB: Reader;
  let observer: Reader;

  const as = async (reader: Reader, path: string) => http(app, path, { headers: { authorization: `Bearer ${await readerToken(rig, reader)}` } });

  /** Reads the feed as `reader` from `dashboard.position` until the end, `limit` at a time; the pages read. */
  const catchUp = async (reader: Reader, dashboard: Dashboard, limit: number, views?: string): Promise<ChangesPage[]> => {
    const pages: ChangesPage[] = [];
    for (let guard = 0; guard < 10_000; guard++) {
      const answer = await as(reader, `/v1/changes?since=${dashboard.position}&limit=${limit}${views === undefined ? '' : `&views=${views}`}`);
      expect(answer.status).toBe(200);
      const page = ChangesPageSchema.parse(answer.body);
      pages.push(page);
      dashboard.apply(page);
      if (!page.more) return pages;
    }
    throw new Error('the feed never ended');
  };

  beforeAll(async () => {
    rig = await createRig();
    app = await rig.start();
    a = storyIds(uniqueName('ca'));
    b = storyIds(uniqueName('cb'));
    agentA = await register(rig, a.principal, 'agent', ['executor']);
    agentB = await register(rig, b.principal, 'agent', ['executor']);
    observer = await register(rig, uniqueName('dashboard'), 'system', ['observer']);
    // A's task runs with artifacts (one event changes several rows: two artifacts, the cell, the attempt...); B's waits for and gets an approval.
    await rig.append(fullPath(a));
    const last = await rig.append(resolvedApprovalPath(b, 'granted'));
    await rig.caughtUp(last);
  }, 60_000);

  afterAll(async () => {
    await rig?.dispose();
  });

  it('given a dashboard that starts late, when it reads the feed from 0 two rows at a time, then it ends with exactly the live rows, and next is the checkpoint', async () => {
    // given the views hold both tasks; when
    const dashboard = new Dashboard();
    const pages = await catchUp(observer, dashboard, 2);
    // then
    expect(dashboard.versions()).toEqual(await liveVersions(rig));
    expect(pages.at(-1)?.next).toBe(await rig.checkpoint());
    // and versions come in order, never split: a page ends with every row of its last version
    const versions = pages.flatMap((page) => page.changes.map((change) => change.row_version));
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    for (const page of pages.filter((p) => p.more)) {
      const last = page.changes.at(-1)?.row_version;
      const { rows } = await rig.db.query(
        PUBLISHED_VIEWS.map((view) => `SELECT count(*)::int AS n FROM ${rig.table(view)} WHERE row_version = $1`).join(' UNION ALL '),
        [last],
      );
      expect(page.changes.filter((change) => change.row_version === last).length).toBe((rows as Array<{ n: number }>).reduce((sum, row) => sum + row.n, 0));
      expect(page.next).toBe(last);
    }
    // and a version split across several views and rows exists (else the test proves little)
    const artifacts = [...dashboard.rows.values()].filter((change) => change.view === 'artifacts');
    expect(artifacts.length).toBe(2);
    expect(artifacts[0]?.row_version).toBe(artifacts[1]?.row_version);
  });

  it('given a dashboard that stopped half way, when more happens and it resumes from its next, then it ends with exactly the live rows', async () => {
    // given a dashboard that read two pages only
    const dashboard = new Dashboard();
    for (const _ of [1, 2]) {
      const page = ChangesPageSchema.parse((await as(observer, `/v1/changes?since=${dashboard.position}&limit=3`)).body);
      dashboard.apply(page);
      expect(page.more).toBe(true);
    }
    // when another task runs and A's rows change again
    const c = storyIds(uniqueName('cc'));
    const last = await rig.append(happyPath(c));
    await rig.caughtUp(last);
    await catchUp(observer, dashboard, 3);
    // then
    expect(dashboard.versions()).toEqual(await liveVersions(rig));
    expect(dashboard.rows.get(`tasks/${c.task}`)?.row).toMatchObject({ task_id: c.task, status: 'completed' });
    // and each row is the row the API serves
    const served = await http(app, `/v1/actions/${c.actionRequest}`);
    expect(dashboard.rows.get(`actions/${c.actionRequest}`)?.row).toEqual(served.body);
  });

  it('given views=, then only those views, and a resumed read from the checkpoint is empty', async () => {
    const dashboard = new Dashboard();
    await catchUp(observer, dashboard, 50, 'tasks,actions');
    expect(new Set([...dashboard.rows.values()].map((change) => change.view))).toEqual(new Set(['tasks', 'actions']));
    expect(dashboard.versions()).toEqual(await liveVersions(rig, ['actions', 'tasks']));
    const again = ChangesPageSchema.parse((await as(observer, `/v1/changes?since=${dashboard.position}`)).body);
    expect(again).toMatchObject({ changes: [], more: false, next: dashboard.position });
  });

  it('given malformed parameters, then 400 PROJECTION_REQUEST_INVALID naming the parameter; without a token, 401', async () => {
    for (const [query, parameter] of [
      ['since=-1', 'since'],
      ['since=abc', 'since'],
      ['limit=0', 'limit'],
      ['limit=5001', 'limit'],
      ['views=tasks,nope', 'views'],
      ['views=task_events', 'views'],
    ] as const) {
      const answer = await as(observer, `/v1/changes?${query}`);
      expect(answer, query).toMatchObject({ status: 400, body: { code: 'PROJECTION_REQUEST_INVALID' } });
      expect(String(answer.body['message']), query).toContain(parameter);
    }
    expect(await http(app, '/v1/changes', { headers: { authorization: '' } })).toMatchObject({ status: 401, body: { code: 'HTTP_AUTH_MISSING' } });
  });

  describe('an agent reads its own only', () => {
    /** Whether `change` is A's: its principal, its task and what hangs off it, its action. */
    const isA = (change: ProjectionChange): boolean => {
      const row = change.row as Record<string, unknown>;
      switch (change.view) {
        case 'principals':
          return row['principal_id'] === a.principal;
        case 'tasks':
          return row['owner_principal_id'] === a.principal;
        case 'actions':
          return row['principal_id'] === a.principal || row['task_id'] === a.task;
        default:
          return row['task_id'] === a.task;
      }
    };

    it('given two agents, when A reads the whole feed, page by page or at once, then it gets every row of its own and not one of B\'s', async () => {
      for (const limit of [1, 5000]) {
        const dashboard = new Dashboard();
        await catchUp(agentA, dashboard, limit);
        const changes = [...dashboard.rows.values()];
        expect(changes.every(isA), `limit ${limit}`).toBe(true);
        // exactly A's live rows: its principal, action, task, step, attempt, grant, receipt, artifacts, cell, decision
        const live = await liveVersions(rig);
        const own = [...live].filter(([key]) => key.includes(a.tag) || key === `principals/${a.principal}`);
        expect(dashboard.versions(), `limit ${limit}`).toEqual(new Map(own));
        expect(JSON.stringify(changes)).not.toContain(b.tag);
      }
    });

    it('given A asks for views of others (principals, approvals), or from a version where only B changed, then it gets nothing of B\'s and no log position', async () => {
      const principals = ChangesPageSchema.parse((await as(agentA, '/v1/changes?views=principals')).body);
      expect(principals.changes.map((change) => change.id)).toEqual([a.principal]);
      const approvals = ChangesPageSchema.parse((await as(agentA, '/v1/changes?views=approvals')).body);
      expect(approvals.changes).toEqual([]);
      // B's approval exists and the observer sees it
      const all = ChangesPageSchema.parse((await as(observer, '/v1/changes?views=approvals')).body);
      expect(all.changes.map((change) => change.id)).toContain(b.approval);
      // and A's cursor is its own last row, never the checkpoint (which would tell it how much others did)
      const page = ChangesPageSchema.parse((await as(agentA, '/v1/changes')).body);
      const lastOwn = Math.max(...page.changes.map((change) => change.row_version));
      expect(page.next).toBe(lastOwn);
      expect(page.checkpoint).toBe(lastOwn);
      expect(await rig.checkpoint()).toBeGreaterThan(lastOwn);
    });

    it("given B reads with a query naming A's ids (an owner parameter, A's task), then the scope is B's token's, not the query's", async () => {
      const page = ChangesPageSchema.parse((await as(agentB, `/v1/changes?owner=${a.principal}&task_id=${a.task}&principal_id=${a.principal}`)).body);
      expect(page.changes.length).toBeGreaterThan(0);
      expect(JSON.stringify(page.changes)).not.toContain(a.tag);
      expect(page.changes.every((change) => JSON.stringify(change.row).includes(b.tag) || change.id === b.principal)).toBe(true);
    });
  });
});
