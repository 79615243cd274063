import type { EventDraft } from '@writ/contracts';
import type { TaskAppendResult, TaskHistory } from '@writ/runtime';

/** The task log as policy uses it (outbound: `@writ/runtime`'s `EventStoreTaskLog`). */
export interface TaskLog {
  /** The task's events in order (chain verified), and the `task_seq` to append after. */
  read(taskId: string): Promise<TaskHistory>;
  /** Appends if the task's last `task_seq` is `expectedSeq`; a lost race throws EVENTSTORE_CONFLICT. */
  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<TaskAppendResult>;
}

/** The clock at the adapter edge; the kernel only ever sees its readings. */
export type Clock = () => Date;
