import type { ProjectionStatus, ProjectionView } from '@writ/contracts';
import type { ProjectionStore, ReadModel } from './ports.js';
import type { Readiness } from './readiness.js';
import type { RebuildJobs } from './rebuild-job.js';
import { VIEW_NAMES } from './views/index.js';

/** Quarantine records shown with the status (the latest first). */
const LATEST_QUARANTINED = 10;

/**
 * `GET /v1/projections/status` (and `writ projections status`): the lag in
 * events and time, each view's rows (and, when asked, its checksum: a scan of
 * every row, so not by default), the last rebuild job, and the messages of
 * the log passed over as junk.
 */
export class ProjectionStatusReader {
  constructor(
    private readonly deps: { readonly readiness: Readiness; readonly model: ReadModel; readonly store: ProjectionStore; readonly rebuilds: RebuildJobs },
  ) {}

  async status(options: { readonly checksums: boolean }): Promise<ProjectionStatus> {
    let views: ProjectionStatus['views'];
    let checkpoint: number | undefined;
    if (options.checksums) {
      const snapshot = await this.deps.store.snapshot();
      views = VIEW_NAMES.map((view) => ({ view: view as ProjectionView, rows: snapshot.views[view]?.rows ?? 0, checksum: snapshot.views[view]?.checksum ?? '' }));
      checkpoint = snapshot.lastSeq;
    } else {
      const rows = await this.deps.model.viewRows();
      views = VIEW_NAMES.map((view) => ({ view: view as ProjectionView, rows: rows[view], checksum: null }));
    }
    let lag = await this.deps.readiness.lag();
    // Checksums are of the rows at their snapshot's checkpoint: that is the one reported with them.
    if (checkpoint !== undefined) lag = { ...lag, checkpoint, events_behind: Math.max(0, lag.last_stream_seq - checkpoint) };
    const lastRebuild = await this.deps.rebuilds.latest();
    const quarantined = await this.deps.store.quarantined(LATEST_QUARANTINED);
    return { ...lag, views, last_rebuild: lastRebuild ?? null, quarantined: { ...quarantined, latest: [...quarantined.latest] } };
  }
}
