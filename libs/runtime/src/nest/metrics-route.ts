import type { INestApplication } from '@nestjs/common';
import { runningPrometheus, type PrometheusMetrics } from '@writ/telemetry';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Where Prometheus scrapes a service: its own HTTP port (`WRIT_HTTP_PORT`), beside `/healthz` and `/readyz`. */
export const METRICS_PATH = '/metrics';

/**
 * Serves `GET /metrics` (Prometheus text exposition) on the app's HTTP server
 * when this process's telemetry has a Prometheus reader (`startTelemetry`,
 * `WRIT_METRICS` on, the default); otherwise the path stays unrouted (404).
 * Call it before the app listens. Registered on the HTTP adapter itself, not
 * as a controller: the route is the same for every service, whichever
 * composition root it has, and like `/healthz` it needs no credential (a
 * scrape carries no identity; the series name no task, principal or secret:
 * docs/security.md). Returns whether it is served.
 */
export function serveMetrics(app: INestApplication, prometheus: PrometheusMetrics | undefined = runningPrometheus()): boolean {
  if (prometheus === undefined) return false;
  app.getHttpAdapter().get(METRICS_PATH, (request: IncomingMessage, response: ServerResponse) => prometheus.handle(request, response));
  return true;
}
