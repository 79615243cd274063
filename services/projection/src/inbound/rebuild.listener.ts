import { Controller, Inject, UseFilters, type Type } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BusExceptionFilter } from '@writ/bus';
import { GetProjectionRebuild, StartProjectionRebuild, parseContract, type ProjectionRebuildJob } from '@writ/contracts';
import type { Logger } from '@writ/telemetry';
import { ProjectionError, isWritCoded } from '../application/projection-errors.js';
import { RebuildJobs } from '../application/rebuild-job.js';

export const REBUILD_LOGGER = Symbol('projection.rebuild.logger');

/** Anything without a Writ code is a bug: typed before it crosses the bus (never its message). */
function typed(error: unknown): never {
  if (isWritCoded(error)) throw error;
  throw new ProjectionError('PROJECTION_INTERNAL', 'the rebuild request failed unexpectedly; see the projection service logs', { cause: error });
}

/**
 * `<root>.qry.projection.rebuild` and `.rebuild-status` (request/reply over
 * core NATS, queue group `projection`): an operator's `writ projections
 * rebuild` starts a job and polls it. Not on the public HTTP API: whoever may
 * use the bus inside the deployment may rebuild, as whoever may append to the
 * log may register a principal. A rebuild decides nothing and changes no
 * authority: it replaces read models with rows proven equal to the log's.
 * Refusals reply `{ code, message }` (PROJECTION_REBUILD_RUNNING, PROJECTION_NOT_FOUND,
 * CONTRACT_INVALID).
 */
export function rebuildListener(subjects: { readonly rebuild: string; readonly rebuildStatus: string }): Type {
  @Controller()
  @UseFilters(new BusExceptionFilter())
  class RebuildListener {
    constructor(
      @Inject(RebuildJobs) private readonly jobs: RebuildJobs,
      @Inject(REBUILD_LOGGER) private readonly logger: Logger,
    ) {}

    @MessagePattern<string>(subjects.rebuild)
    async start(@Payload() payload: unknown): Promise<ProjectionRebuildJob> {
      const request = parseContract('StartProjectionRebuild', StartProjectionRebuild, payload);
      const job = await this.jobs.start(request).catch(typed);
      this.logger.info({ job_id: job.job_id, views: job.views, keep_old: job.keep_old, force: job.force }, 'projection rebuild started');
      return job;
    }

    @MessagePattern<string>(subjects.rebuildStatus)
    async status(@Payload() payload: unknown): Promise<ProjectionRebuildJob> {
      const request = parseContract('GetProjectionRebuild', GetProjectionRebuild, payload);
      return this.jobs.get(request.job_id).catch(typed);
    }
  }
  return RebuildListener;
}
