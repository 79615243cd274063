import { Controller, Get, Inject } from '@nestjs/common';
import { processBuildInfo, type BuildInfo } from '@writ/runtime';
import { PublicRoute } from '@writ/runtime/nest';
import { Readiness, type ReadyReport } from '../../application/readiness.js';

@PublicRoute()
@Controller()
export class HealthController {
  constructor(@Inject(Readiness) private readonly readiness: Readiness) {}

  /** The process is up, and which build it runs (`writ doctor` compares them). */
  @Get('healthz')
  healthz(): { readonly status: 'ok' } & BuildInfo {
    return { status: 'ok', ...processBuildInfo() };
  }

  /** NATS connected, streams ensured, consumer bound, Postgres answering; with the projection lag. 503 `PROJECTION_NOT_READY` otherwise. */
  @Get('readyz')
  readyz(): Promise<ReadyReport> {
    return this.readiness.check();
  }
}
