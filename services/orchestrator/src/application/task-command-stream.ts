import type { EventDraft, EventEnvelope } from '@writ/contracts';
import { versioned, type CommandStream } from '@writ/runtime';
import type { TaskLog } from './ports.js';

/**
 * One task's stream of the orchestrator's log as the runtime's `handleCommand` reads and appends
 * it: the events as read with the version to append after, and an append that reports whether
 * the log already held what it was given (another delivery of the same command landed first).
 */
export function taskCommandStream(log: TaskLog, taskId: string): CommandStream<{ readonly events: readonly EventEnvelope[]; readonly seq: number }> {
  return {
    read: async () => versioned(await log.read(taskId)),
    append: async (drafts: readonly EventDraft[], expectedSeq: number) => ({ duplicate: (await log.append(taskId, drafts, expectedSeq)).duplicates > 0 }),
  };
}
