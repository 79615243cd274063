import { Id } from '@writ/contracts';
import { z } from 'zod';

/**
 * `<root>.cmd.executor.close-cell` (published by the orchestrator when a task
 * ends). Local until libs/contracts has `COMMANDS.executorCloseCell` and this payload.
 */
export const EXECUTOR_CLOSE_CELL = 'writ.cmd.executor.close-cell';

export const CloseCell = z.strictObject({ task_id: Id, reason: z.enum(['task.completed', 'task.failed', 'task.cancelled']) });
export type CloseCell = z.output<typeof CloseCell>;
