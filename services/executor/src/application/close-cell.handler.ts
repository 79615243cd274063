import type { Logger } from '@writ/telemetry';
import type { CloseCell } from './close-cell.js';
import type { CellCloser } from './ports.js';
import type { TaskSerializer } from './task-serializer.js';

/** Closing a task's Lazarus cell (application/cell-lifecycle.ts). */
export interface CellClosing {
  /** 'none': the task never had a cell (nothing in its cell stream). */
  close(cellId: string, reason: string): Promise<'none' | 'closed' | 'already'>;
}

export interface CloseCellDeps {
  readonly cells: CellCloser;
  /** The same serializer as the run handler's: a close waits for this process's running actions of the task. */
  readonly serializer: TaskSerializer;
  /** The cell lifecycle; without it (or for a task without a cell) the containers are removed as before cells had a lifecycle. */
  readonly lifecycle?: CellClosing;
  /** Several hosts: a close reaching a host that does not hold the cell is forwarded to the one that does (application/cell-routing.ts). */
  readonly routing?: CloseRouting;
  readonly logger?: Logger;
}

/** The router's part a close needs (application/cell-routing.ts). */
export interface CloseRouting {
  placeClose(command: CloseCell, hops: number): Promise<{ readonly kind: 'here' } | { readonly kind: 'forwarded'; readonly host_id: string }>;
}

/** What one delivery did (for logs and tests). */
export interface CloseCellOutcome {
  readonly task_id: string;
  /** `closed`: final checkpoint and `cell.closed` appended, container stopped and kept (the graveyard). */
  readonly cell: 'none' | 'closed' | 'already' | 'forwarded';
  readonly containers_removed: number;
  /** Set when another host holds the cell: the close was stored on its subject and nothing happened here. */
  readonly forwarded_to?: string;
}

/**
 * `writ.cmd.executor.close-cell`: the task ended. Its cell takes a final checkpoint and
 * closes (events on its cell stream), and moves to the graveyard: the container stopped
 * and kept with the workspace, resurrectable by a director within the closed grace,
 * scrubbed by a sweep after it. Idempotent: a closed cell is left as it is. A task
 * whose cell has no stream (made before cells had a lifecycle) has its containers
 * removed and its workspace kept. Nothing is appended to the task stream: the task's
 * terminal event already says the task is over.
 */
export class CloseCellHandler {
  constructor(private readonly deps: CloseCellDeps) {}

  async handle(command: CloseCell, delivery: { readonly hops?: number } = {}): Promise<CloseCellOutcome> {
    const placed = this.deps.routing === undefined ? undefined : await this.deps.routing.placeClose(command, delivery.hops ?? 0);
    if (placed?.kind === 'forwarded') return { task_id: command.task_id, cell: 'forwarded', containers_removed: 0, forwarded_to: placed.host_id };
    const cell = this.deps.lifecycle === undefined ? 'none' : await this.deps.lifecycle.close(command.task_id, command.reason);
    if (cell !== 'none') return { task_id: command.task_id, cell, containers_removed: 0 };
    const result = await this.deps.serializer.run(command.task_id, () => this.deps.cells.closeCell(command.task_id));
    return { task_id: command.task_id, cell, containers_removed: result.containers_removed };
  }
}
