import { Controller, Get, NotFoundException, Req, Res, type DynamicModule } from '@nestjs/common';
import { runningPrometheus } from '@writ/telemetry';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PublicRoute } from './http-auth.guard.js';

/** Where Prometheus scrapes a service: its own HTTP port (`WRIT_HTTP_PORT`), beside `/healthz` and `/readyz`. */
export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics`: the Prometheus text exposition of this process's telemetry
 * (`startTelemetry`'s reader, answered by the exporter's own handler). 404
 * when the process serves none (`WRIT_METRICS=off`, telemetry disabled or not
 * started: tests that boot a service alone). Public like `/healthz`: a scrape
 * carries no identity, and no series names a task, a principal or a secret
 * (docs/security.md, "HTTP reads").
 */
@PublicRoute()
@Controller()
export class MetricsController {
  @Get(METRICS_PATH.slice(1))
  metrics(@Req() request: IncomingMessage, @Res() response: ServerResponse): void {
    const prometheus = runningPrometheus();
    if (prometheus === undefined) throw new NotFoundException('metrics are not served by this process (WRIT_METRICS)');
    prometheus.handle(request, response);
  }
}

/**
 * A composition root with `/metrics` beside its own routes: every service
 * serves it, whichever module it has, from one definition.
 */
export function withMetricsRoute(module: DynamicModule): DynamicModule {
  return { ...module, controllers: [...(module.controllers ?? []), MetricsController] };
}
