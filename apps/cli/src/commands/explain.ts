import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { explanationLines } from '../explain/explanation-text.js';
import { checkReceiptSignatures, locateTask, transparencyLogEntries } from '../explain/task-log.js';
import { explainTask, type TaskExplanation } from '../explain/task-explanation.js';
import type { WritApi } from '../http-api.js';

export interface ExplainOptions {
  /** The action's task: skips the API lookup of an action id (the log alone is read). */
  readonly task?: string;
  readonly json?: boolean;
}

/**
 * `writ explain <task_id|action_request_id> [--task <task_id>] [--json]`:
 * what happened, why, on which evidence, under whose authority, what changed,
 * and whether it can be verified and rolled back (Hermit 21), for each action
 * of a task or for one action, from the task's events: the stream is read
 * through the event store (its hash chain verified first), each receipt's
 * signature is checked against its issuer's keys in the log, and the
 * transparency log's `tlog.entry_appended` events are looked up. Reads only.
 */
export async function explain(id: string, options: ExplainOptions, conn: Connection, api: WritApi | undefined, io: CliIo): Promise<TaskExplanation> {
  const nc = await connectNats(conn);
  let explanation: TaskExplanation;
  try {
    const store = await attachEventLog(nc, conn);
    const located = await locateTask(store, id, options, api);
    const signatures = await checkReceiptSignatures(store, located.events);
    const transparencyLog = await transparencyLogEntries(nc, conn, located.taskId, located.events[0]?.occurred_at);
    explanation = explainTask(located.taskId, located.events, {
      ...(located.actionRequestId === undefined ? {} : { actionRequestId: located.actionRequestId }),
      signatures,
      transparencyLog,
    });
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (options.json === true) io.stdout(JSON.stringify(explanation));
  else for (const line of explanationLines(explanation)) io.stdout(line);
  return explanation;
}
