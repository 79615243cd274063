import { Controller, Get, HttpStatus, Inject, Res } from '@nestjs/common';
import { IngressReadiness } from './readiness.js';

interface StatusResponse {
  status(code: number): unknown;
}

@Controller()
export class HealthController {
  constructor(@Inject(IngressReadiness) private readonly readiness: IngressReadiness) {}

  /** The process is up. */
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** NATS connected, streams ensured, consumer bound, responders listening; 503 otherwise. */
  @Get('readyz')
  readyz(@Res({ passthrough: true }) res: StatusResponse): { status: 'ready' | 'not_ready'; checks: Readonly<Record<string, boolean>> } {
    const { ready, checks } = this.readiness.check();
    res.status(ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return { status: ready ? 'ready' : 'not_ready', checks };
  }
}
