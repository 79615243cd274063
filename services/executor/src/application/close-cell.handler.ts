import type { Logger } from '@writ/telemetry';
import type { CloseCell } from './close-cell.js';
import type { CellCloser } from './ports.js';
import type { TaskSerializer } from './task-serializer.js';

export interface CloseCellDeps {
  readonly cells: CellCloser;
  /** The same serializer as the run handler's: a close waits for this process's running actions of the task. */
  readonly serializer: TaskSerializer;
  readonly logger?: Logger;
}

/** What one delivery did (for logs and tests). */
export interface CloseCellOutcome {
  readonly task_id: string;
  readonly containers_removed: number;
}

/**
 * `writ.cmd.executor.close-cell`: removes the task's container(s), keeps its
 * workspace (forensics; scrubbing after a grace period is another concern).
 * Idempotent: a cell already gone removes nothing. Appends nothing to the log:
 * the task's terminal event already says the task is over, and a container is
 * runtime state of this host, not a fact of the governed path.
 */
export class CloseCellHandler {
  constructor(private readonly deps: CloseCellDeps) {}

  async handle(command: CloseCell): Promise<CloseCellOutcome> {
    const result = await this.deps.serializer.run(command.task_id, () => this.deps.cells.closeCell(command.task_id));
    return { task_id: command.task_id, containers_removed: result.containers_removed };
  }
}
