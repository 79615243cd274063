import { Id, parseContract } from '@writ/contracts';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { decisionLog, decisionLogMarkdown, type DecisionLog } from '../explain/decision-log.js';
import { cell } from '../format.js';

/**
 * `writ decisions <task_id> [--json]`: the task's decisions in the seed 003
 * decisions-log format, from the task stream alone (read through the event
 * store, which verifies the hash chain first). Reads only.
 */
export async function decisions(id: string, options: { readonly json?: boolean }, conn: Connection, io: CliIo): Promise<DecisionLog> {
  const taskId = parseContract('task id', Id, id);
  const nc = await connectNats(conn);
  let log: DecisionLog;
  try {
    const store = await attachEventLog(nc, conn);
    const events = (await store.read(taskId)).map((stored) => stored.event);
    if (events.length === 0) throw new CliError('CLI_EXPLAIN_NOT_FOUND', `there is no task ${taskId} in the log`);
    log = decisionLog(taskId, events);
  } finally {
    await nc.drain().catch(() => undefined);
  }
  if (options.json === true) {
    io.stdout(JSON.stringify(log));
    return log;
  }
  if (log.decisions.length === 0) io.stdout(`task ${taskId} has no recorded decisions`);
  for (const line of decisionLogMarkdown(log, (text) => cell(text, 2_000))) io.stdout(line);
  return log;
}
