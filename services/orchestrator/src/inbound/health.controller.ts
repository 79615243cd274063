import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import { Readiness, type ReadinessReport } from '../outbound/readiness.js';
import { processBuildInfo, type BuildInfo } from '@writ/runtime';

/** `/healthz`: the process is up. `/readyz`: NATS connected, streams ensured, consumers bound (503 otherwise). */
@PublicRoute()
@Controller()
export class HealthController {
  constructor(@Inject(Readiness) private readonly readiness: Readiness) {}

  @Get('healthz')
  healthz(): { status: 'ok' } & BuildInfo {
    return { status: 'ok', ...processBuildInfo() };
  }

  @Get('readyz')
  readyz(): ReadinessReport {
    const report = this.readiness.report();
    if (!report.ready) throw new ServiceUnavailableException(report);
    return report;
  }
}
