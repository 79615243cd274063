import { Id } from '@writ/contracts';
import { z } from 'zod';

/**
 * `<root>.cmd.executor.close-cell`: the task is over, its cell may go (the
 * executor removes the container and keeps the workspace). Local until
 * libs/contracts has `COMMANDS.executorCloseCell` and its payload.
 */
export const EXECUTOR_CLOSE_CELL = 'writ.cmd.executor.close-cell';

/** Why the cell closes: the task's terminal event. */
export const CloseCellReason = z.enum(['task.completed', 'task.failed', 'task.cancelled']);
export type CloseCellReason = z.output<typeof CloseCellReason>;

export const CloseCell = z.strictObject({ task_id: Id, reason: CloseCellReason });
export type CloseCell = z.output<typeof CloseCell>;

/** The command's msg id: one close per task, whichever instance or redelivery publishes it. */
export function closeCellMsgId(taskId: string): string {
  return `${taskId}:cmd:executor.close-cell`;
}
