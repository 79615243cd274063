import { Controller, Get, HttpStatus, Inject, Res } from '@nestjs/common';
import { ReadinessRegistry, type ReadinessReport } from '../readiness.js';
import { processBuildInfo, type BuildInfo } from '../build-info.js';
import { PublicRoute } from './http-auth.guard.js';

/** The part of the HTTP response the controller sets (Express's `Response`). */
interface StatusResponse {
  status(code: number): unknown;
}

/**
 * `/healthz`: the process is up. `/readyz`: every readiness check passes (200),
 * else 503 with the same report, so a probe sees which check fails. The
 * status is set on the response itself: an app-wide HTTP exception filter never
 * reshapes the report.
 */
@PublicRoute()
@Controller()
export class HealthController {
  constructor(@Inject(ReadinessRegistry) private readonly readiness: ReadinessRegistry) {}

  @Get('healthz')
  healthz(): { status: 'ok' } & BuildInfo {
    return { status: 'ok', ...processBuildInfo() };
  }

  @Get('readyz')
  readyz(@Res({ passthrough: true }) response: StatusResponse): ReadinessReport {
    const report = this.readiness.report();
    response.status(report.ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return report;
  }
}
