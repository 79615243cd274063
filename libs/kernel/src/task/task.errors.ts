import { KernelError } from '../shared/kernel-error.js';

/** Closed set of reasons a Task command is refused. */
export type TaskErrorCode =
  /** The command needs a task, and none was created in this stream. */
  | 'TASK_NOT_FOUND'
  /** `create-task` on a stream that already holds a task. */
  | 'TASK_ALREADY_EXISTS'
  /** The task is completed, failed, cancelled or rolled back, and the command is not the rollback edge. */
  | 'TASK_TERMINAL'
  /** Hermit 12.1 (`TASK_TRANSITIONS`) has no edge from the current state to the one the command asks for. */
  | 'TASK_TRANSITION_NOT_ALLOWED';

export class TaskError extends KernelError<TaskErrorCode> {}
