import { Controller, Get, Inject } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import { Readiness, type ReadyReport } from '../../application/readiness.js';

@PublicRoute()
@Controller()
export class HealthController {
  constructor(@Inject(Readiness) private readonly readiness: Readiness) {}

  /** The process is up. */
  @Get('healthz')
  healthz(): { readonly status: 'ok' } {
    return { status: 'ok' };
  }

  /** NATS connected, streams ensured, consumer bound, Postgres answering; with the projection lag. 503 `PROJECTION_NOT_READY` otherwise. */
  @Get('readyz')
  readyz(): Promise<ReadyReport> {
    return this.readiness.check();
  }
}
