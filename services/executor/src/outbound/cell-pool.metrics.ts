import { METRICS, writMetrics } from '@writ/telemetry';
import type { ExecutorCells } from './executor-cells.js';

/**
 * The warm cell pool as `writ_cells{state}`: its configured size, the cells
 * ready to hand out and those being created, read at each scrape. No pool
 * (WRIT_CELL_POOL_SIZE 0) shows nothing. Returns
 * the stop.
 */
export function observeCellPool(cells: Pick<ExecutorCells, 'pool'>): () => void {
  return writMetrics().observe([METRICS.cells], (observe) => {
    const stats = cells.pool?.stats();
    if (stats === undefined) return;
    observe(METRICS.cells, stats.size, { state: 'size' });
    observe(METRICS.cells, stats.ready, { state: 'ready' });
    observe(METRICS.cells, stats.creating, { state: 'creating' });
  });
}
