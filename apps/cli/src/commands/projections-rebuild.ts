import { setTimeout as delay } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { COMMANDS, ProjectionRebuildJob, ProjectionView, WritError, type StartProjectionRebuild } from '@writ/contracts';
import { rooted } from '@writ/runtime';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { connectNats } from '../event-log.js';
import { cell, table } from '../format.js';
import { requestService } from '../service-request.js';

/** How often a running job is asked for its progress. */
const POLL_MS = 500;

export interface ProjectionsRebuildOptions {
  /** Views to rebuild (default all): `actions`, `tasks`, … (`ProjectionView`). */
  readonly view?: readonly string[];
  /** Keep the replaced tables in `<schema>_old_<UTC timestamp>` instead of dropping them. */
  readonly keepOld?: boolean;
  /** Swap even when a checksum differs (repairs a drifted view). */
  readonly force?: boolean;
  /** Follow a job already started (its id) instead of starting one. */
  readonly follow?: string;
  readonly json?: boolean;
  /** Poll interval in ms (default 500). */
  readonly pollMs?: number;
}

/**
 * `writ projections rebuild [--view <v>]… [--keep-old] [--force] [--follow <job_id>] [--json]`:
 * asks the projection service to rebuild its views from the log alone
 * (`<root>.qry.projection.rebuild`), follows the job (`.rebuild-status`) with
 * its progress on stderr, and prints each view's rows and checksum, live vs
 * rebuilt at the same checkpoint. Exit 0 when the rebuilt views were proven
 * identical (or forced) and swapped in; 1 with the job's code otherwise
 * (`PROJECTION_REBUILD_MISMATCH`: nothing was swapped). Interrupting the CLI
 * does not stop the job: `--follow <job_id>` picks it up again.
 */
export async function projectionsRebuild(options: ProjectionsRebuildOptions, conn: Connection, io: CliIo): Promise<ProjectionRebuildJob> {
  const views = (options.view ?? []).map((view) => {
    const parsed = ProjectionView.safeParse(view);
    if (!parsed.success) throw new CliError('CLI_USAGE', `--view ${JSON.stringify(view)} is not a view; one of ${ProjectionView.options.join(', ')}`);
    return parsed.data;
  });
  if (options.follow !== undefined && (views.length > 0 || options.keepOld === true || options.force === true)) {
    throw new CliError('CLI_USAGE', '--follow follows a job as it was started: it takes no --view, --keep-old or --force');
  }
  const nc = await connectNats(conn);
  try {
    let job: ProjectionRebuildJob;
    if (options.follow === undefined) {
      const request: StartProjectionRebuild = {
        ...(views.length > 0 ? { views: [...new Set(views)] } : {}),
        ...(options.keepOld === true ? { keep_old: true } : {}),
        ...(options.force === true ? { force: true } : {}),
      };
      job = await requestService(nc, rooted(COMMANDS.projectionRebuild, conn.subjectRoot), request, ProjectionRebuildJob, 'ProjectionRebuildJob');
      io.stderr(`rebuild ${job.job_id} started (${job.views.join(', ')}); if interrupted: writ projections rebuild --follow ${job.job_id}`);
    } else {
      job = await status(nc, conn, options.follow);
    }
    job = await follow(nc, conn, job, io, options.pollMs ?? POLL_MS);
    report(job, options, io);
    if (job.state !== 'swapped') {
      // The service's code (PROJECTION_REBUILD_MISMATCH, _ABORTED, …) is what the CLI exits with.
      if (job.error === null) throw new CliError('CLI_FAILED', `rebuild ${job.job_id} ended ${job.state} without a reason`);
      throw new WritError(job.error.code, job.error.message, { details: { job_id: job.job_id, state: job.state, remote: true } });
    }
    return job;
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

function status(nc: NatsConnection, conn: Connection, jobId: string): Promise<ProjectionRebuildJob> {
  return requestService(nc, rooted(COMMANDS.projectionRebuildStatus, conn.subjectRoot), { job_id: jobId }, ProjectionRebuildJob, 'ProjectionRebuildJob');
}

/** Polls the job to its end, a progress line on stderr whenever it moved. */
async function follow(nc: NatsConnection, conn: Connection, start: ProjectionRebuildJob, io: CliIo, pollMs: number): Promise<ProjectionRebuildJob> {
  let job = start;
  let shown = '';
  for (;;) {
    const line = progress(job);
    if (line !== shown) {
      io.stderr(line);
      shown = line;
    }
    if (job.state !== 'running') return job;
    await delay(pollMs);
    job = await status(nc, conn, job.job_id);
  }
}

function progress(job: ProjectionRebuildJob): string {
  const rate = `${job.events_per_second} events/s`;
  switch (job.phase) {
    case 'replaying':
      return `replaying ${job.replayed}/${job.target_seq} events (${rate})`;
    case 'catching_up':
      return `catching up with the live projection (${job.replayed} events replayed, ${rate})`;
    case 'done':
      return `${job.state}: ${job.replayed} events replayed (${rate})${job.skipped > 0 ? `, ${job.skipped} non-events passed over` : ''}`;
    default:
      return `${job.phase}${job.phase === 'comparing' ? ` ${job.views.length} views at stream seq ${job.target_seq}` : ''}`;
  }
}

function report(job: ProjectionRebuildJob, options: ProjectionsRebuildOptions, io: CliIo): void {
  if (options.json === true) {
    io.stdout(JSON.stringify(job));
    return;
  }
  if (job.comparisons.length > 0) {
    io.stdout(`views at stream seq ${job.target_seq}, live vs rebuilt:`);
    const rows = job.comparisons.map((c) => [cell(c.view), String(c.live.rows), String(c.rebuilt.rows), cell(c.live.checksum), cell(c.rebuilt.checksum), c.match ? 'yes' : 'NO']);
    for (const line of table(['VIEW', 'LIVE_ROWS', 'REBUILT_ROWS', 'LIVE_CHECKSUM', 'REBUILT_CHECKSUM', 'MATCH'], rows)) io.stdout(line);
  }
  if (job.state === 'swapped') {
    const forced = job.comparisons.some((c) => !c.match) ? ' (forced past a mismatch)' : '';
    const old = job.old_schema === null ? 'the replaced tables were dropped' : `the replaced tables are kept in ${job.old_schema}`;
    io.stdout(`swapped in at stream seq ${job.swapped_at_seq ?? '-'}${forced}; ${old}`);
  } else {
    io.stdout(`${job.state}: nothing was swapped`);
  }
}
