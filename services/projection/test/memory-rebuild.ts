import type { ProjectionRebuildJob } from '@writ/contracts';
import type { RebuildJobStore, RebuildLock, RebuildTarget, RebuildTargets } from '../src/application/ports.js';
import type { ViewName } from '../src/application/views/index.js';
import { MemoryProjectionStore } from './memory-store.js';

/**
 * The rebuild ports in memory, same contract as the Postgres adapters: fresh
 * targets, a swap that hands `settle` the live checkpoint and then moves the
 * views' tables, one lock, jobs by id.
 */
export class MemoryRebuildTargets implements RebuildTargets {
  readonly created: MemoryRebuildTarget[] = [];
  /** Runs inside the swap before the live checkpoint is read (the projector moving on while the rebuild ran). */
  beforeSwap: (() => Promise<void>) | undefined;

  constructor(private readonly live: MemoryProjectionStore) {}

  async create(): Promise<RebuildTarget> {
    const target = new MemoryRebuildTarget(this.live, `rebuild_${this.created.length + 1}`, () => this.beforeSwap?.());
    this.created.push(target);
    return target;
  }
}

export class MemoryRebuildTarget implements RebuildTarget {
  readonly store = new MemoryProjectionStore();
  discarded = false;
  /** The live tables moved out by a swap with keepOld. */
  readonly kept = new Map<ViewName, Map<string, Record<string, unknown>>>();

  constructor(
    private readonly live: MemoryProjectionStore,
    readonly schema: string,
    private readonly beforeSwap: () => Promise<void> | undefined,
  ) {}

  async swapIn(
    views: readonly ViewName[],
    options: { readonly keepOld: boolean; readonly at: Date },
    settle: (liveCheckpoint: number) => Promise<void>,
  ): Promise<{ readonly checkpoint: number; readonly oldSchema: string | null }> {
    await this.beforeSwap();
    const checkpoint = this.live.lastSeq;
    await settle(checkpoint);
    if (this.store.lastSeq !== checkpoint) throw Object.assign(new Error('not settled'), { code: 'PROJECTION_LOG_UNAVAILABLE' });
    for (const view of views) {
      if (options.keepOld) this.kept.set(view, this.live.tables.get(view)!);
      this.live.tables.set(view, this.store.tables.get(view)!);
    }
    return { checkpoint, oldSchema: options.keepOld ? `live_old_${options.at.toISOString()}` : null };
  }

  async discard(): Promise<void> {
    this.discarded = true;
  }
}

export class MemoryRebuildJobStore implements RebuildJobStore {
  readonly jobs = new Map<string, ProjectionRebuildJob>();
  /** Every save, in order (progress records included). */
  readonly saves: ProjectionRebuildJob[] = [];
  held = false;

  async tryLock(): Promise<RebuildLock | undefined> {
    if (this.held) return undefined;
    this.held = true;
    return {
      release: async () => {
        this.held = false;
      },
    };
  }

  async locked(): Promise<boolean> {
    return this.held;
  }

  async save(job: ProjectionRebuildJob): Promise<void> {
    this.jobs.set(job.job_id, structuredClone(job));
    this.saves.push(structuredClone(job));
  }

  async get(jobId: string): Promise<ProjectionRebuildJob | undefined> {
    return this.jobs.get(jobId);
  }

  async latest(): Promise<ProjectionRebuildJob | undefined> {
    return [...this.jobs.values()].sort((a, b) => (a.started_at < b.started_at ? 1 : -1))[0];
  }

  async running(): Promise<ProjectionRebuildJob[]> {
    return [...this.jobs.values()].filter((job) => job.state === 'running');
  }
}
