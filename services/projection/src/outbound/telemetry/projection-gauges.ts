import { METRICS, writMetrics, type Logger, type MetricObserver, type WritMetrics } from '@writ/telemetry';
import type { ProjectionLag } from '../../application/readiness.js';

/** The approvals waiting for a director, as the views hold them. */
export interface PendingApprovals {
  readonly count: number;
  readonly oldestRequestedAt: Date | null;
}

export interface ProjectionGaugeSources {
  readonly lag: () => Promise<ProjectionLag>;
  readonly pendingApprovals: () => Promise<PendingApprovals>;
  readonly now?: () => number;
}

/**
 * The projection's gauges, measured at each collection (each scrape):
 * - `writ_projection_lag_events`: the log's last stream sequence minus the checkpoint;
 * - `writ_projection_lag_seconds`: how long the oldest event not yet folded has waited (0 when caught up);
 * - `writ_approvals_pending` and `writ_approvals_pending_oldest_age_seconds`, from the views
 *   (as current as the lag says: a lagging projection shows approvals a director already resolved).
 * A measurement that fails is logged and skipped (no value rather than a wrong one), the other one still reported.
 */
export class ProjectionGauges {
  readonly #stop: () => void;

  constructor(sources: ProjectionGaugeSources, logger: Logger, metrics: WritMetrics = writMetrics()) {
    const now = sources.now ?? Date.now;
    this.#stop = metrics.observe(
      [METRICS.projectionLagEvents, METRICS.projectionLagSeconds, METRICS.approvalsPending, METRICS.approvalsPendingOldestAge],
      async (observe: MetricObserver) => {
        const [lag, pending] = await Promise.allSettled([sources.lag(), sources.pendingApprovals()]);
        if (lag.status === 'fulfilled') {
          observe(METRICS.projectionLagEvents, lag.value.events_behind, {});
          observe(METRICS.projectionLagSeconds, lag.value.lag_ms / 1000, {});
        } else {
          logger.warn({ err: lag.reason }, 'projection lag not measured');
        }
        if (pending.status === 'fulfilled') {
          const oldest = pending.value.oldestRequestedAt;
          observe(METRICS.approvalsPending, pending.value.count, {});
          observe(METRICS.approvalsPendingOldestAge, oldest === null ? 0 : Math.max(0, now() - oldest.getTime()) / 1000, {});
        } else {
          logger.warn({ err: pending.reason }, 'pending approvals not counted');
        }
      },
    );
  }

  stop(): void {
    this.#stop();
  }
}
