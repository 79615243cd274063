import type { Msg } from '@nats-io/transport-node';
import { ProjectionRebuildJob, ProjectionStatus, WritError, type StartProjectionRebuild } from '@writ/contracts';
import { uniqueName, waitFor } from '@writ/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullPath, governedLog, storyIds, type StoryEvent } from '../test/governed-path.fixture.js';
import { beliefStory, memoryReceipt, memoryStory, observedBelief, workingStateStory } from '../test/knowledge.fixture.js';
import { createRig, http, type Rig } from '../test/projection-rig.js';
import { VIEW_NAMES } from './application/views/index.js';
import type { ProjectionApp } from './bootstrap.js';

/**
 * `writ projections rebuild` against the real NATS and Postgres, driven as
 * the CLI drives it (request/reply on `<root>.qry.projection.rebuild`, then
 * `.rebuild-status` until the job ends): invariant 2 on a log of more than
 * 10,000 governed-path events appended straight to the test's stream, the
 * swap while readers read and the projector runs, a corrupted live row caught
 * by the checksums, a rebuild of some views only.
 */

const MIN_EVENTS = 10_000;
/** Generous bounds for a shared, noisy machine: they only stop a hung test. */
const LONG = { timeoutMs: 600_000, intervalMs: 200 };

async function request<T>(rig: Rig, subject: string, payload: unknown, parse: (body: unknown) => T): Promise<T> {
  const reply: Msg = await rig.nc.request(subject, JSON.stringify(payload), { timeout: 15_000 });
  const body: unknown = reply.json();
  const code = reply.headers?.get('Writ-Error-Code');
  if (code !== undefined && code !== '') throw new WritError(code, String((body as { message?: unknown }).message));
  return parse(body);
}

/** Starts a rebuild and polls it to its end, as the CLI does. */
async function rebuild(rig: Rig, start: StartProjectionRebuild = {}): Promise<{ started: ProjectionRebuildJob; job: ProjectionRebuildJob }> {
  const started = await request(rig, rig.config.subjects.rebuild, start, (body) => ProjectionRebuildJob.parse(body));
  const job = await waitFor(
    async () => {
      const current = await request(rig, rig.config.subjects.rebuildStatus, { job_id: started.job_id }, (body) => ProjectionRebuildJob.parse(body));
      return current.state === 'running' ? undefined : current;
    },
    { ...LONG, what: `rebuild job ${started.job_id} to end` },
  );
  return { started, job };
}

/** md5 of every table's rows (not through the service), and the tables' oids (a swapped table is a new one). */
async function tables(rig: Rig, names: readonly string[]): Promise<Record<string, { sum: string; oid: number }>> {
  const out: Record<string, { sum: string; oid: number }> = {};
  for (const name of names) {
    const sum = await rig.db.query(`SELECT md5(coalesce(string_agg(row_to_json(t)::text, ',' ORDER BY row_to_json(t)::text), '')) AS sum FROM ${rig.table(name)} t`);
    const oid = await rig.db.query(`SELECT $1::regclass::oid::int AS oid`, [rig.table(name)]);
    out[name] = { sum: String((sum.rows[0] as { sum: string }).sum), oid: Number((oid.rows[0] as { oid: number }).oid) };
  }
  return out;
}

/** Waits until the projector folded everything the log holds now. */
async function settled(rig: Rig): Promise<number> {
  const last = (await rig.jsm.streams.info(rig.config.streams.events)).state.last_seq;
  await waitFor(async () => ((await rig.checkpoint()) >= last ? true : undefined), { ...LONG, what: `checkpoint ${last}` });
  return last;
}

const VIEWS: readonly string[] = VIEW_NAMES;

/** A working state (two revisions, a compaction) and beliefs (asserted, superseded, revoked) for the task of a governed-path story. */
function knowledgeOf(story: readonly StoryEvent[]): StoryEvent[] {
  const task = story.find((event) => event.aggregate === 'task');
  if (task === undefined) return [];
  const ids = storyIds(task.aggregateId.replace(/^task-/, ''));
  const entry = (key: string, kind: string, value: unknown) => ({ key, kind, value }) as never;
  return [
    ...workingStateStory(ids, [{ set: [entry('objective.main', 'objective', 'fix it'), entry('cache.page', 'cache', 'text')] }, { set: [entry('question.db', 'pending_question', 'which db?')] }], { compact: true, seconds: 900 }),
    ...beliefStory(
      ids,
      [
        { op: 'assert', belief: observedBelief('bel-1', 'the tests pass') },
        { op: 'assert', belief: observedBelief('bel-2', 'the tests pass on CI too', { supersedes: 'bel-1' }) },
        { op: 'revoke', belief_id: 'bel-2', reason: 'CI was flaky' },
      ],
      950,
    ),
    // a memory record promoted by the story's attempt (its receipt re-classed as the promotion's) and invalidated
    ...memoryStory(ids, `mem-${ids.tag}`, { invalidateBy: `inv-${ids.tag}`, seconds: 980 }),
    ...receiptsOf(story).map((receipt) => memoryReceipt(receipt, ids.attempt, `rcpt-mem-${ids.tag}`)).slice(0, 1),
  ];
}

const receiptsOf = (story: readonly StoryEvent[]) => story.filter((event) => event.draft.event_type === 'receipt.issued');

describe('projection rebuild: equality at scale, swap under load', () => {
  let rig: Rig;
  let app: ProjectionApp;
  let last: number;
  let taskEvents: number;

  beforeAll(async () => {
    rig = await createRig();
    // given a log of more than 10,000 governed-path events, most appended before the service starts
    // (folded by its catch-up, in batches), the rest while it runs (folded by its consumer, one by one)
    // every eighth story's task also keeps a working state and beliefs (issue 17), so those views are proven at scale too
    const stories = governedLog(uniqueName('scale'), MIN_EVENTS).map((story, n) => (n % 8 === 0 ? [...story, ...knowledgeOf(story)] : story));
    taskEvents = stories.flat().filter((e) => e.aggregate === 'task').length;
    const split = Math.floor(stories.length * 0.7);
    await rig.appendStories(stories.slice(0, split), 8);
    app = await rig.start();
    last = await rig.appendStories(stories.slice(split), 4);
    expect(last).toBeGreaterThanOrEqual(MIN_EVENTS);
    await settled(rig);
  }, 900_000);

  afterAll(async () => {
    await rig?.dispose();
  });

  it('reports the lag in events and ms on /readyz and /v1/projections/status, with per-view rows and checksums', async () => {
    const ready = await http(app, '/readyz');
    expect(ready.body['lag']).toEqual({ last_stream_seq: last, checkpoint: last, events_behind: 0, lag_ms: 0 });
    const status = ProjectionStatus.parse((await http(app, '/v1/projections/status?checksums=true')).body);
    expect(status).toMatchObject({ checkpoint: last, last_stream_seq: last, events_behind: 0, lag_ms: 0, last_rebuild: null });
    expect(status.views.map((v) => v.view)).toEqual(VIEWS);
    expect(status.views.every((v) => v.checksum !== null && v.checksum.length === 32)).toBe(true);
    expect(status.views.find((v) => v.view === 'task_events')?.rows).toBe(taskEvents);
    expect(status.views.find((v) => v.view === 'working_states')?.rows).toBeGreaterThan(0);
    expect(status.views.find((v) => v.view === 'beliefs')?.rows).toBeGreaterThan(0);
    expect(status.views.find((v) => v.view === 'memory')?.rows).toBeGreaterThan(0);
    const cheap = ProjectionStatus.parse((await http(app, '/v1/projections/status')).body);
    expect(cheap.views.every((v) => v.checksum === null)).toBe(true);
    expect(await http(app, '/v1/projections/status?checksums=yes')).toMatchObject({ status: 400, body: { code: 'PROJECTION_REQUEST_INVALID' } });
  });

  it('rebuilds every view from the log alone, proves each identical, and swaps them in while readers read and the projector goes on (invariant 2)', async () => {
    const before = await tables(rig, VIEWS);
    const watched = storyIds(uniqueName('watch'));
    const watchedLast = await rig.append(fullPath(watched));
    await settled(rig);
    const expected = (await http(app, `/v1/tasks/${watched.task}`)).body;

    // when a rebuild runs, a reader keeps reading and new events keep arriving
    let reads = 0;
    const failures: string[] = [];
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const [task, step] = await Promise.all([http(app, `/v1/tasks/${watched.task}?limit=1000`), http(app, `/v1/steps/${watched.step}`)]);
        reads++;
        if (task.status !== 200 || JSON.stringify(task.body) !== JSON.stringify(expected)) failures.push(`task ${task.status}`);
        if (step.status !== 200 || step.body['status'] !== 'succeeded') failures.push(`step ${step.status} ${String(step.body['status'])}`);
        // Paced, not timed: leaves the two shared cores to the rebuild.
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const during = storyIds(uniqueName('during'));
    const rebuilding = rebuild(rig, { keep_old: true });
    const duringLast = await rig.append(fullPath(during));
    const { started, job } = await rebuilding;
    reading = false;
    await reader;

    // then every view matched at the checkpoint the proof replayed to, and the rebuilt tables were swapped in
    expect(started).toMatchObject({ state: 'running', views: VIEWS, keep_old: true });
    expect(job).toMatchObject({ state: 'swapped', phase: 'done', error: null, skipped: 0 });
    expect(job.target_seq).toBeGreaterThanOrEqual(watchedLast);
    expect(job.replayed).toBeGreaterThanOrEqual(MIN_EVENTS);
    expect(job.comparisons.map((c) => c.view)).toEqual(VIEWS);
    expect(job.comparisons.filter((c) => !c.match)).toEqual([]);
    expect(job.swapped_at_seq).toBeGreaterThanOrEqual(job.target_seq);
    expect(job.old_schema).toMatch(new RegExp(`^${rig.schema}_old_\\d{14}$`));
    // and no reader ever saw a missing or half-built row
    expect(reads).toBeGreaterThan(0);
    expect(failures).toEqual([]);

    // and the projector continues from the rebuilt checkpoint: what arrived during the rebuild, and after it, is there once
    const afterSwap = storyIds(uniqueName('after'));
    const afterLast = await rig.append(fullPath(afterSwap));
    await settled(rig);
    expect(await rig.checkpoint()).toBe(afterLast);
    expect((await http(app, `/v1/tasks/${during.task}`)).body).toMatchObject({ status: 'completed' });
    expect((await http(app, `/v1/steps/${afterSwap.step}`)).body).toMatchObject({ status: 'succeeded', attempts: [expect.objectContaining({ status: 'succeeded' })] });
    expect((await rig.db.query(`SELECT count(*)::int AS n FROM ${rig.table('task_events')} WHERE task_id = $1`, [during.task])).rows).toEqual([{ n: 23 }]);
    expect(duringLast).toBeLessThan(afterLast);

    // and the rows before the rebuild are exactly those after it (same content, new tables); the old ones are kept aside
    const now = await tables(rig, VIEWS);
    const oldTasks = await rig.db.query(`SELECT count(*)::int AS n FROM "${job.old_schema}"."tasks"`);
    expect((oldTasks.rows[0] as { n: number }).n).toBeGreaterThan(0);
    for (const name of VIEWS) expect(now[name]?.oid, name).not.toBe(before[name]?.oid);
    const schemas = await rig.db.query(`SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE $1`, [`${rig.schema}\\_rebuild\\_%`]);
    expect(schemas.rows).toEqual([]);

    // and a rebuild right after finds the swapped views identical too
    const again = await rebuild(rig);
    expect(again.job).toMatchObject({ state: 'swapped', old_schema: null });
    expect(again.job.comparisons.every((c) => c.match)).toBe(true);
    const status = ProjectionStatus.parse((await http(app, '/v1/projections/status')).body);
    expect(status.last_rebuild).toMatchObject({ job_id: again.started.job_id, state: 'swapped' });
  }, 900_000);

  it('detects a deliberately corrupted live row: the view is reported (rows and checksum, live vs rebuilt) and nothing is swapped, unless forced', async () => {
    // given one live row changed behind the projector's back (once it folded the whole log)
    await settled(rig);
    const victim = await rig.db.query(`SELECT action_request_id FROM ${rig.table('actions')} WHERE status = 'succeeded' ORDER BY action_request_id LIMIT 1`);
    const id = (victim.rows[0] as { action_request_id: string }).action_request_id;
    await rig.db.query(`UPDATE ${rig.table('actions')} SET status = 'failed' WHERE action_request_id = $1`, [id]);
    const before = await tables(rig, ['actions', 'tasks']);

    // when rebuilt
    const { job } = await rebuild(rig);

    // then the mismatch names the view, live vs rebuilt, and no table moved
    expect(job).toMatchObject({ state: 'mismatch', swapped_at_seq: null, error: { code: 'PROJECTION_REBUILD_MISMATCH' } });
    const differing = job.comparisons.filter((c) => !c.match);
    expect(differing.map((c) => c.view)).toEqual(['actions']);
    expect(differing[0]?.live.rows).toBe(differing[0]?.rebuilt.rows);
    expect(differing[0]?.live.checksum).not.toBe(differing[0]?.rebuilt.checksum);
    expect(await tables(rig, ['actions', 'tasks'])).toEqual(before);
    expect((await http(app, `/v1/actions/${id}`)).body).toMatchObject({ status: 'failed' });

    // when rebuilt with force, only that view: the log's row is back, the other tables untouched
    const forced = await rebuild(rig, { views: ['actions'], force: true });
    expect(forced.job).toMatchObject({ state: 'swapped', views: ['actions'], force: true });
    expect(forced.job.comparisons).toEqual([expect.objectContaining({ view: 'actions', match: false })]);
    expect((await http(app, `/v1/actions/${id}`)).body).toMatchObject({ status: 'succeeded' });
    const after = await tables(rig, ['actions', 'tasks']);
    expect(after['tasks']).toEqual(before['tasks']);
    expect(after['actions']?.oid).not.toBe(before['actions']?.oid);
  }, 900_000);

  it('runs one rebuild at a time across processes, tells an abandoned job from a running one, and refuses bad requests with stable codes', async () => {
    // given another process holding the rebuild lock of this projection, with its job recorded as running
    const lock = await rig.db.query('SELECT pg_advisory_lock($1, hashtext($2))', [0x57524954, rig.schema]).then(() => true);
    const orphan: ProjectionRebuildJob = {
      job_id: uniqueName('rebuild-elsewhere'),
      state: 'running',
      phase: 'replaying',
      views: ['tasks'],
      keep_old: false,
      force: false,
      target_seq: 5,
      replayed: 1,
      skipped: 0,
      events_per_second: 1,
      comparisons: [],
      swapped_at_seq: null,
      old_schema: null,
      error: null,
      started_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      finished_at: null,
    };
    await rig.db.query(`INSERT INTO ${rig.table('rebuild_jobs')} (job_id, state, job, started_at, updated_at) VALUES ($1, 'running', $2, $3, $3)`, [
      orphan.job_id,
      JSON.stringify(orphan),
      orphan.started_at,
    ]);
    try {
      // when a rebuild is asked for, it is refused, naming the running job; and that job reads as running
      await expect(request(rig, rig.config.subjects.rebuild, {}, (body) => body)).rejects.toMatchObject({ code: 'PROJECTION_REBUILD_RUNNING' });
      expect(await request(rig, rig.config.subjects.rebuildStatus, { job_id: orphan.job_id }, (body) => ProjectionRebuildJob.parse(body))).toMatchObject({ state: 'running' });
    } finally {
      if (lock) await rig.db.query('SELECT pg_advisory_unlock($1, hashtext($2))', [0x57524954, rig.schema]);
    }
    // when that process is gone (its lock with it), then its job reads as abandoned
    expect(await request(rig, rig.config.subjects.rebuildStatus, { job_id: orphan.job_id }, (body) => ProjectionRebuildJob.parse(body))).toMatchObject({
      state: 'failed',
      error: { code: 'PROJECTION_REBUILD_ABANDONED' },
    });
    // and a rebuild starts again; unknown jobs and views are refused
    expect((await rebuild(rig, { views: ['tasks'] })).job).toMatchObject({ state: 'swapped' });
    await expect(request(rig, rig.config.subjects.rebuildStatus, { job_id: 'rebuild-nobody' }, (body) => body)).rejects.toMatchObject({ code: 'PROJECTION_NOT_FOUND' });
    await expect(request(rig, rig.config.subjects.rebuild, { views: ['nope'] }, (body) => body)).rejects.toMatchObject({ code: 'CONTRACT_INVALID' });
  }, 900_000);
});
