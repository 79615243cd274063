// Types of cell-cpu.mjs (plain ESM JavaScript, so the benchmark runs it without a compiler).
import type Docker from 'dockerode';

export interface CellCpuSummary {
  /** Microseconds the cells used in the window (a lower bound when `stopped` or `missed` > 0). */
  readonly usec: number;
  readonly cells: number;
  /** Cells that started in the window. */
  readonly created: number;
  /** Cells that stopped in the window: counted up to their last reading. */
  readonly stopped: number;
  /** Cells that started and stopped between two readings: not counted. */
  readonly missed: number;
  /** Running cells whose cgroup was not found: not counted. */
  readonly unreadable: number;
}

export declare class CellCpuLedger {
  reading(id: string, usec: number, options?: { before?: boolean }): void;
  stopped(id: string): void;
  unreadable(id: string): void;
  summary(): CellCpuSummary;
}

export declare function trackCells(
  docker: Docker,
  options: { cellsRoot: string; executorId: string; intervalMs?: number },
): Promise<{ stop(): Promise<CellCpuSummary & { intervalMs: number; source: string }> }>;
