import { hasErrorCode } from '@writ/contracts';
import { createLogger } from '@writ/telemetry';
import { describe, expect, it } from 'vitest';
import { cellLifecycle, fullPath, resolvedApprovalPath, storyIds, toProjectedEvents, type StoryEvent } from '../../test/governed-path.fixture.js';
import { MemoryRebuildJobStore, MemoryRebuildTargets } from '../../test/memory-rebuild.js';
import { MemoryLog, MemoryProjectionStore } from '../../test/memory-store.js';
import type { RawStoredEvent } from './projected-event.js';
import { Projector } from './projector.js';
import { RebuildJobs } from './rebuild-job.js';
import { VIEW_NAMES } from './views/index.js';

const PREFIX = 'writ.evt';
const quiet = createLogger('rebuild-test', { level: 'silent' });

function raws(stories: readonly StoryEvent[]): RawStoredEvent[] {
  return toProjectedEvents(stories).map((e) => ({ streamSeq: e.streamSeq, subject: `${PREFIX}.${e.aggregate.type}.${e.aggregate.id}`, payload: e.envelope }));
}

const story = (): StoryEvent[] => [
  ...fullPath(storyIds('rj1')),
  ...resolvedApprovalPath(storyIds('rj2'), 'granted'),
  ...cellLifecycle('cell-rj', 'director-1'),
  ...fullPath(storyIds('rj3')),
];

/** A live projection folded from `events`, and a RebuildJobs on it with memory ports and a clock that ticks a second per read. */
async function rig(events = raws(story())) {
  const live = new MemoryProjectionStore();
  const log = new MemoryLog([...events]);
  const projector = new Projector({ store: live, log, publisher: { publish: () => undefined }, eventsPrefix: PREFIX, logger: quiet });
  await projector.catchUp();
  const targets = new MemoryRebuildTargets(live);
  const jobs = new MemoryRebuildJobStore();
  let tick = Date.parse('2031-01-01T00:00:00Z');
  let n = 0;
  const rebuilds = new RebuildJobs({
    live,
    log,
    targets,
    jobs,
    eventsPrefix: PREFIX,
    logger: quiet,
    now: () => new Date((tick += 1000)),
    newJobId: () => `rebuild-${++n}`,
    batchSize: 7,
    progressEveryMs: 0,
    catchUpSlack: 0,
  });
  return { live, log, projector, targets, jobs, rebuilds };
}

const code = (c: string) => (error: unknown) => hasErrorCode(error, c);

describe('RebuildJobs', () => {
  it('given a live projection folded from the log, when rebuilt, then every view matches, the rebuilt tables are swapped in at the live checkpoint, and the job records its progress', async () => {
    const { live, log, targets, jobs, rebuilds } = await rig();
    const before = await live.snapshot();
    const oldActions = live.tables.get('actions');

    const started = await rebuilds.start({});
    expect(started).toMatchObject({ state: 'running', phase: 'preparing', keep_old: false, force: false });
    await rebuilds.idle();

    const job = await rebuilds.get(started.job_id);
    expect(job).toMatchObject({ state: 'swapped', phase: 'done', target_seq: log.events.length, replayed: log.events.length, skipped: 0, swapped_at_seq: log.events.length, error: null, old_schema: null });
    expect(job.comparisons).toHaveLength(VIEW_NAMES.length);
    expect(job.comparisons.every((c) => c.match)).toBe(true);
    expect(job.events_per_second).toBeGreaterThan(0);
    // then the rows are the same, in new tables, the checkpoint where it was
    expect(await live.snapshot()).toEqual(before);
    expect(live.tables.get('actions')).not.toBe(oldActions);
    expect(live.lastSeq).toBe(log.events.length);
    // and progress went through the phases, the target was dropped, the lock released
    expect([...new Set(jobs.saves.map((s) => s.phase))]).toEqual(['preparing', 'replaying', 'comparing', 'catching_up', 'swapping', 'done']);
    expect(jobs.saves.filter((s) => s.phase === 'replaying').map((s) => s.replayed)).toEqual(expect.arrayContaining([7, 14]));
    expect(targets.created[0]?.discarded).toBe(true);
    expect(jobs.held).toBe(false);
  });

  it('given a corrupted live row, when rebuilt, then the view is reported as differing (rows and checksum, live vs rebuilt) and nothing is swapped', async () => {
    const { live, rebuilds } = await rig();
    const [key, row] = [...live.tables.get('actions')!.entries()][0]!;
    live.tables.get('actions')!.set(key, { ...row, status: 'failed' });
    const corrupted = live.tables.get('actions');

    const { job_id: jobId } = await rebuilds.start({});
    await rebuilds.idle();

    const job = await rebuilds.get(jobId);
    expect(job).toMatchObject({ state: 'mismatch', phase: 'done', swapped_at_seq: null, error: { code: 'PROJECTION_REBUILD_MISMATCH' } });
    expect(job.comparisons.filter((c) => !c.match)).toEqual([
      { view: 'actions', live: { rows: 3, checksum: expect.any(String) }, rebuilt: { rows: 3, checksum: expect.any(String) }, match: false },
    ]);
    expect(live.tables.get('actions')).toBe(corrupted);
  });

  it('given a corrupted live row, when rebuilt with force, then the rebuilt rows replace it and the mismatch stays on record', async () => {
    const { live, rebuilds } = await rig();
    const [key, row] = [...live.tables.get('actions')!.entries()][0]!;
    live.tables.get('actions')!.set(key, { ...row, status: 'failed' });

    const { job_id: jobId } = await rebuilds.start({ force: true, keep_old: true });
    await rebuilds.idle();

    const job = await rebuilds.get(jobId);
    expect(job).toMatchObject({ state: 'swapped', force: true, old_schema: expect.stringMatching(/^live_old_/) });
    expect(job.comparisons.filter((c) => !c.match).map((c) => c.view)).toEqual(['actions']);
    expect(live.tables.get('actions')!.get(key)).toEqual(row);
  });

  it('given some views, when rebuilt, then only those are replayed, compared and swapped; the others keep their tables', async () => {
    const { live, rebuilds } = await rig();
    const tasks = live.tables.get('tasks');
    const steps = live.tables.get('steps');

    const { job_id: jobId } = await rebuilds.start({ views: ['steps', 'attempts'] });
    await rebuilds.idle();

    const job = await rebuilds.get(jobId);
    expect(job).toMatchObject({ state: 'swapped', views: ['steps', 'attempts'] });
    expect(job.comparisons.map((c) => c.view)).toEqual(['steps', 'attempts']);
    expect(live.tables.get('tasks')).toBe(tasks);
    expect(live.tables.get('steps')).not.toBe(steps);
    expect(live.tables.get('steps')).toEqual(steps);
  });

  it('given the projector moved on while the rebuild ran, when swapped, then the rebuilt views are first brought to the live checkpoint', async () => {
    const { live, log, projector, targets, rebuilds } = await rig();
    const more = raws([...story(), ...fullPath(storyIds('rj4'))]).slice(log.events.length);
    targets.beforeSwap = async () => {
      log.events.push(...more);
      await projector.catchUp();
    };

    const { job_id: jobId } = await rebuilds.start({});
    await rebuilds.idle();

    const job = await rebuilds.get(jobId);
    expect(job).toMatchObject({ state: 'swapped', target_seq: log.events.length - more.length, swapped_at_seq: log.events.length, replayed: log.events.length });
    expect(live.row('tasks', 'task-rj4')?.status).toBe('completed');
    // and the swapped rows are what the live projector itself folded
    const replay = new MemoryProjectionStore();
    await new Projector({ store: replay, log, publisher: { publish: () => undefined }, eventsPrefix: PREFIX, logger: quiet }).catchUp();
    expect(await live.snapshot()).toEqual(await replay.snapshot());
  });

  it('runs one rebuild at a time: a second start is refused with PROJECTION_REBUILD_RUNNING naming the running job', async () => {
    const { rebuilds } = await rig();
    const first = await rebuilds.start({});
    await expect(rebuilds.start({})).rejects.toSatisfy((error) => code('PROJECTION_REBUILD_RUNNING')(error) && (error as { details?: { job_id?: string } }).details?.job_id === first.job_id);
    await rebuilds.idle();
    expect((await rebuilds.start({})).job_id).not.toBe(first.job_id);
    await rebuilds.idle();
  });

  it('given a job recorded as running whose process is gone (no lock), when read, then it is failed PROJECTION_REBUILD_ABANDONED', async () => {
    const { jobs, rebuilds } = await rig();
    await jobs.save({
      job_id: 'rebuild-orphan',
      state: 'running',
      phase: 'replaying',
      views: ['tasks'],
      keep_old: false,
      force: false,
      target_seq: 10,
      replayed: 3,
      skipped: 0,
      events_per_second: 1,
      comparisons: [],
      swapped_at_seq: null,
      old_schema: null,
      error: null,
      started_at: '2030-01-01T00:00:00.000Z',
      updated_at: '2030-01-01T00:00:01.000Z',
      finished_at: null,
    });
    expect(await rebuilds.get('rebuild-orphan')).toMatchObject({ state: 'failed', error: { code: 'PROJECTION_REBUILD_ABANDONED' } });
    expect(jobs.jobs.get('rebuild-orphan')?.state).toBe('failed');
    await expect(rebuilds.get('rebuild-nobody')).rejects.toSatisfy(code('PROJECTION_NOT_FOUND'));
  });

  it('given the service stopping during the replay, then the job ends failed PROJECTION_REBUILD_ABORTED and nothing is swapped', async () => {
    const { live, log, rebuilds, targets } = await rig();
    const actions = live.tables.get('actions');
    let stopped: Promise<void> | undefined;
    const replay = log.replay.bind(log);
    log.replay = async function* (from: number) {
      for await (const raw of replay(from)) {
        if (raw.streamSeq === 10) stopped = rebuilds.stop();
        yield raw;
      }
    };
    const { job_id: jobId } = await rebuilds.start({});
    await rebuilds.idle();
    await stopped;
    expect(await rebuilds.get(jobId)).toMatchObject({ state: 'failed', error: { code: 'PROJECTION_REBUILD_ABORTED' }, swapped_at_seq: null });
    expect(live.tables.get('actions')).toBe(actions);
    expect(targets.created[0]?.discarded).toBe(true);
    await expect(rebuilds.start({})).rejects.toSatisfy(code('PROJECTION_REBUILD_ABORTED'));
  });
});
