import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { PublicRoute } from '@writ/runtime/nest';
import type { QuarantineCounts } from '@writ/contracts';
import { processBuildInfo, type BuildInfo } from '@writ/runtime';

/** What `/readyz` reports: each check and whether all pass. */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, boolean>>;
  /** The durables stalled on the server (work waiting, ack floor still); `checks.consumers_not_stalled` is false while any is. */
  readonly consumers_stalled?: readonly string[];
  /** What the process skipped as junk (invariant 10), by reason; never makes it unready. */
  readonly quarantined?: QuarantineCounts;
}

export interface ReadinessProbe {
  check(): ReadinessReport;
}

export const READINESS = Symbol('readiness');

/** `/healthz`: the process is up. `/readyz`: NATS connected, streams ensured, consumers bound (503 otherwise). */
@PublicRoute()
@Controller()
export class HealthController {
  constructor(@Inject(READINESS) private readonly readiness: ReadinessProbe) {}

  @Get('healthz')
  healthz(): { status: 'ok' } & BuildInfo {
    return { status: 'ok', ...processBuildInfo() };
  }

  @Get('readyz')
  readyz(): ReadinessReport {
    const report = this.readiness.check();
    if (!report.ready) throw new ServiceUnavailableException(report);
    return report;
  }
}
