import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';

/** What `/readyz` reports: each check and whether all pass. */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, boolean>>;
}

export interface ReadinessProbe {
  check(): ReadinessReport;
}

export const READINESS = Symbol('readiness');

/** `/healthz`: the process is up. `/readyz`: NATS connected, streams ensured, consumers bound (503 otherwise). */
@Controller()
export class HealthController {
  constructor(@Inject(READINESS) private readonly readiness: ReadinessProbe) {}

  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  readyz(): ReadinessReport {
    const report = this.readiness.check();
    if (!report.ready) throw new ServiceUnavailableException(report);
    return report;
  }
}
