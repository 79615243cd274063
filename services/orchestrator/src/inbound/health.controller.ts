import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import { Readiness, type ReadinessReport } from '../outbound/readiness.js';

/** `/healthz`: the process is up. `/readyz`: NATS connected, streams ensured, consumers bound (503 otherwise). */
@PublicRoute()
@Controller()
export class HealthController {
  constructor(@Inject(Readiness) private readonly readiness: Readiness) {}

  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  readyz(): ReadinessReport {
    const report = this.readiness.report();
    if (!report.ready) throw new ServiceUnavailableException(report);
    return report;
  }
}
