import type { EventDraft, EventEnvelope } from '@writ/contracts';

/** The task log as policy uses it (outbound: the event store). */
export interface TaskLog {
  /** The task's events in order (chain verified). */
  read(taskId: string): Promise<readonly EventEnvelope[]>;
  /** Appends if the task's last `task_seq` is `expectedSeq`; a lost race throws EVENTSTORE_CONFLICT. */
  append(taskId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ readonly duplicates: number }>;
}

/** The clock at the adapter edge; the kernel only ever sees its readings. */
export type Clock = () => Date;
