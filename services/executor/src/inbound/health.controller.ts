import { Controller, Get, HttpCode, Inject, ServiceUnavailableException } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import { ExecutorReadiness, type ReadinessReport } from '../outbound/readiness.js';
import { processBuildInfo, type BuildInfo } from '@writ/runtime';

/**
 * `/healthz`: the process is up. `/readyz`: it can take work — NATS connected,
 * streams and the artifact bucket ensured, the run consumer bound, the cell
 * image present (else 503 with the failing checks and how to fix them).
 */
@PublicRoute()
@Controller()
export class HealthController {
  constructor(@Inject(ExecutorReadiness) private readonly readiness: ExecutorReadiness) {}

  @Get('healthz')
  @HttpCode(200)
  healthz(): { status: 'ok' } & BuildInfo {
    return { status: 'ok', ...processBuildInfo() };
  }

  @Get('readyz')
  @HttpCode(200)
  async readyz(): Promise<ReadinessReport> {
    const report = await this.readiness.check();
    if (!report.ready) throw new ServiceUnavailableException(report);
    return report;
  }
}
