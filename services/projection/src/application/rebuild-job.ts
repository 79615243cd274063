import { type ProjectionRebuildJob, type ProjectionView, type StartProjectionRebuild } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import type { EventLog, ProjectionStore, RebuildJobStore, RebuildLock, RebuildTarget, RebuildTargets } from './ports.js';
import { ProjectionError, isWritCoded } from './projection-errors.js';
import { compareSnapshots, replayInto } from './rebuild.js';
import { VIEW_NAMES, type ViewName } from './views/index.js';

export interface RebuildJobsDeps {
  readonly live: ProjectionStore;
  readonly log: EventLog;
  readonly targets: RebuildTargets;
  readonly jobs: RebuildJobStore;
  readonly eventsPrefix: string;
  readonly logger: Logger;
  readonly now: () => Date;
  /** A fresh job id (a valid Writ id). */
  readonly newJobId: () => string;
  /** Events per replay transaction (default `REPLAY_BATCH`). */
  readonly batchSize?: number;
  /** How often a running job records its progress (default 1 s). */
  readonly progressEveryMs?: number;
  /** Before the lock: catch up while the target is more than this many events behind the live checkpoint (default 1,000; at most 5 rounds). */
  readonly catchUpSlack?: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** How often, and how long apart, a start asks again for a lock whose job has just ended. */
const LOCK_RETRIES = 20;
const LOCK_RETRY_MS = 100;

/**
 * `writ projections rebuild`: one job at a time per live projection (a lock
 * the job store holds for it). A job
 * 1. migrates a fresh schema and reads the live checkpoint L with the live
 *    checksums of its views in one snapshot;
 * 2. replays the log 1..L into the fresh schema with the live folds;
 * 3. compares each view's checksum, live vs rebuilt at L; a mismatch ends the
 *    job as `mismatch` (code PROJECTION_REBUILD_MISMATCH) unless `force`;
 * 4. catches the fresh schema up with the live checkpoint, then swaps its
 *    tables in under the checkpoint lock (the projector waits, readers go
 *    on), where the fresh tables are brought to exactly the live checkpoint,
 *    so the projector continues from it on the rebuilt rows.
 * Progress is recorded as it goes; the fresh schema is dropped at the end.
 * Nothing is swapped unless every step succeeded.
 */
export class RebuildJobs {
  private current: { readonly jobId: string; readonly done: Promise<void> } | undefined;
  private stopping = false;

  constructor(private readonly deps: RebuildJobsDeps) {}

  /** Starts a job and returns it as recorded; PROJECTION_REBUILD_RUNNING when one runs already. */
  async start(request: StartProjectionRebuild): Promise<ProjectionRebuildJob> {
    if (this.stopping) throw new ProjectionError('PROJECTION_REBUILD_ABORTED', 'the projection service is stopping; start the rebuild again once it is back');
    const lock = await this.lock();
    if (lock === undefined) {
      const running = (await this.deps.jobs.running())[0];
      throw new ProjectionError('PROJECTION_REBUILD_RUNNING', `a rebuild is running already${running === undefined ? '' : ` (job ${running.job_id})`}; follow it or wait for it to end`, {
        details: running === undefined ? {} : { job_id: running.job_id },
      });
    }
    let job: ProjectionRebuildJob;
    try {
      // Holding the lock: a job still recorded as running lost its process.
      for (const orphan of await this.deps.jobs.running()) await this.deps.jobs.save(this.abandoned(orphan));
      const views = request.views === undefined ? VIEW_NAMES : VIEW_NAMES.filter((view) => request.views?.includes(view as ProjectionView));
      const at = this.deps.now().toISOString();
      job = {
        job_id: this.deps.newJobId(),
        state: 'running',
        phase: 'preparing',
        views: views as ProjectionView[],
        keep_old: request.keep_old === true,
        force: request.force === true,
        target_seq: 0,
        replayed: 0,
        skipped: 0,
        events_per_second: 0,
        comparisons: [],
        swapped_at_seq: null,
        old_schema: null,
        error: null,
        started_at: at,
        updated_at: at,
        finished_at: null,
      };
      await this.deps.jobs.save(job);
    } catch (error) {
      await lock.release();
      throw error;
    }
    const done = this.run(job, lock).finally(() => {
      if (this.current?.jobId === job.job_id) this.current = undefined;
    });
    this.current = { jobId: job.job_id, done };
    return job;
  }

  /**
   * The rebuild lock. A job records its end before it releases the lock, so
   * for a moment after a job ended the lock is still held with no job
   * running: then it is asked again, a few times, before giving up.
   */
  private async lock(): Promise<RebuildLock | undefined> {
    for (let attempt = 0; ; attempt++) {
      const lock = await this.deps.jobs.tryLock();
      if (lock !== undefined || attempt >= LOCK_RETRIES || (await this.deps.jobs.running()).length > 0) return lock;
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }

  /** A job as recorded; one recorded as running whose process is gone is reported (and recorded) as abandoned. */
  async get(jobId: string): Promise<ProjectionRebuildJob> {
    const job = await this.deps.jobs.get(jobId);
    if (job === undefined) {
      throw new ProjectionError('PROJECTION_NOT_FOUND', `no rebuild job ${jobId}; writ projections status shows the last one`, { details: { job_id: jobId } });
    }
    return this.settled(job);
  }

  async latest(): Promise<ProjectionRebuildJob | undefined> {
    const job = await this.deps.jobs.latest();
    return job === undefined ? undefined : this.settled(job);
  }

  /** At shutdown: the running job stops between two batches (nothing swapped), its end is recorded, then this resolves. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.done;
  }

  /** Resolves when the job this instance runs (if any) has ended; tests and shutdown wait on it. */
  async idle(): Promise<void> {
    await this.current?.done;
  }

  private async settled(job: ProjectionRebuildJob): Promise<ProjectionRebuildJob> {
    if (job.state !== 'running' || this.current?.jobId === job.job_id || (await this.deps.jobs.locked())) return job;
    // Re-read: it may have ended between the two reads.
    const again = await this.deps.jobs.get(job.job_id);
    if (again === undefined || again.state !== 'running') return again ?? job;
    const orphan = this.abandoned(again);
    await this.deps.jobs.save(orphan);
    return orphan;
  }

  private abandoned(job: ProjectionRebuildJob): ProjectionRebuildJob {
    const at = this.deps.now().toISOString();
    return {
      ...job,
      state: 'failed',
      phase: 'done',
      error: { code: 'PROJECTION_REBUILD_ABANDONED', message: 'the process running this rebuild went away before it ended; nothing was swapped' },
      updated_at: at,
      finished_at: at,
    };
  }

  private async run(initial: ProjectionRebuildJob, lock: RebuildLock): Promise<void> {
    const { deps } = this;
    const job: Mutable<ProjectionRebuildJob> = { ...initial };
    const views = job.views as ViewName[];
    const startedMs = Date.parse(job.started_at);
    let lastSaved = 0;
    const record = async (force = false) => {
      const now = deps.now();
      if (!force && now.getTime() - lastSaved < (deps.progressEveryMs ?? 1_000)) return;
      lastSaved = now.getTime();
      job.updated_at = now.toISOString();
      job.events_per_second = rate(job.replayed, now.getTime() - startedMs);
      await deps.jobs.save({ ...job });
    };
    const checkStopping = () => {
      if (this.stopping) throw new ProjectionError('PROJECTION_REBUILD_ABORTED', 'the projection service stopped during the rebuild; nothing was swapped');
    };
    let target: RebuildTarget | undefined;
    let outcome: { readonly state: ProjectionRebuildJob['state']; readonly error: ProjectionRebuildJob['error'] } | undefined;
    try {
      target = await deps.targets.create();
      const fresh = target;
      const replay = async (untilSeq: number) => {
        let seen = { replayed: 0, skipped: 0 };
        await replayInto({
          log: deps.log,
          target: fresh.store,
          eventsPrefix: deps.eventsPrefix,
          views,
          untilSeq,
          ...(deps.batchSize === undefined ? {} : { batchSize: deps.batchSize }),
          onBatch: async (progress) => {
            checkStopping();
            job.replayed += progress.replayed - seen.replayed;
            job.skipped += progress.skipped - seen.skipped;
            seen = progress;
            await record();
          },
        });
      };

      const live = await deps.live.snapshot(views);
      Object.assign(job, { phase: 'replaying', target_seq: live.lastSeq });
      await record(true);
      await replay(live.lastSeq);

      job.phase = 'comparing';
      await record(true);
      const rebuilt = await fresh.store.snapshot(views);
      job.comparisons = compareSnapshots(live, rebuilt, views) as Mutable<ProjectionRebuildJob>['comparisons'];
      const differing = job.comparisons.filter((c) => !c.match).map((c) => c.view);
      if (differing.length > 0 && !job.force) {
        outcome = {
          state: 'mismatch',
          error: {
            code: 'PROJECTION_REBUILD_MISMATCH',
            message: `rebuilt ${differing.join(', ')} differ${differing.length === 1 ? 's' : ''} from the live rows at stream seq ${live.lastSeq}; nothing was swapped (--force swaps anyway)`,
          },
        };
        return;
      }

      job.phase = 'catching_up';
      await record(true);
      const slack = deps.catchUpSlack ?? 1_000;
      for (let round = 0; round < 5; round++) {
        checkStopping();
        const liveSeq = await deps.live.checkpoint();
        if (liveSeq - (await fresh.store.checkpoint()) <= slack) break;
        await replay(liveSeq);
      }

      checkStopping();
      job.phase = 'swapping';
      await record(true);
      const swapped = await fresh.swapIn(views, { keepOld: job.keep_old, at: deps.now() }, async (liveCheckpoint) => {
        const reached = await fresh.store.checkpoint();
        if (reached > liveCheckpoint) {
          throw new ProjectionError('PROJECTION_LOG_UNAVAILABLE', `the rebuilt views are at stream seq ${reached}, past the live checkpoint ${liveCheckpoint}; nothing was swapped`);
        }
        await replay(liveCheckpoint);
      });
      job.swapped_at_seq = swapped.checkpoint;
      job.old_schema = swapped.oldSchema;
      outcome = { state: 'swapped', error: null };
      deps.logger.info({ job_id: job.job_id, views, checkpoint: swapped.checkpoint, old_schema: swapped.oldSchema, forced: differing.length > 0 }, 'projection rebuilt and swapped in');
    } catch (error) {
      const code = isWritCoded(error) ? error.code : 'PROJECTION_INTERNAL';
      const message = isWritCoded(error) ? error.message : 'the rebuild failed unexpectedly; see the projection service logs';
      deps.logger.error({ err: error, job_id: job.job_id, code }, 'projection rebuild failed; nothing was swapped');
      outcome = { state: 'failed', error: { code, message } };
    } finally {
      // The fresh schema goes first, then the end is recorded, then the lock is released (a start waits for that moment).
      if (target !== undefined) await target.discard().catch((error: unknown) => deps.logger.warn({ err: error, schema: target?.schema }, 'rebuild schema not dropped'));
      if (outcome !== undefined) {
        await this.finish(job, outcome.state, outcome.error).catch((cause: unknown) => deps.logger.error({ err: cause, job_id: job.job_id }, 'the end of a rebuild job was not recorded'));
      }
      await lock.release().catch((error: unknown) => deps.logger.warn({ err: error }, 'rebuild lock not released cleanly'));
    }
  }

  private async finish(job: Mutable<ProjectionRebuildJob>, state: ProjectionRebuildJob['state'], error: ProjectionRebuildJob['error']): Promise<void> {
    const now = this.deps.now();
    Object.assign(job, {
      state,
      phase: 'done',
      error,
      updated_at: now.toISOString(),
      finished_at: now.toISOString(),
      events_per_second: rate(job.replayed, now.getTime() - Date.parse(job.started_at)),
    });
    await this.deps.jobs.save({ ...job });
  }
}

function rate(events: number, ms: number): number {
  return ms <= 0 ? 0 : Math.round((events * 1000) / ms);
}

