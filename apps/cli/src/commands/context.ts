import { ContextPack, Id, TaskView, hasErrorCode, parseContract, type ContextItem } from '@writ/contracts';
import { AttemptRowSchema, type AttemptRow } from '@writ/contracts/projection-rows';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { compileContextPack, contextInputsFromLog } from '@writ/kernel';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { cell } from '../format.js';
import type { WritApi } from '../http-api.js';

export interface ContextOptions {
  readonly json?: boolean;
  /** Recompile the pack from the task's log (read over NATS, chain verified) and require the same bytes. */
  readonly verify?: boolean;
}

/** What `writ context` found: the attempt, its pack, the hash it was checked against, and whether a recompile matched. */
export interface ShownContext {
  readonly attempt_id: string;
  readonly task_id: string;
  readonly sha256: string;
  readonly pack: ContextPack;
  /** `true` when `--verify` recompiled the same bytes from the log; absent without it. */
  readonly recompiled_identical?: boolean;
}

/** The attempt row, or undefined when the API holds no attempt of that id (it may be a task id). */
async function attemptRow(api: WritApi, id: string): Promise<AttemptRow | undefined> {
  try {
    return await api.get(`/v1/attempts/${id}`, AttemptRowSchema);
  } catch (error) {
    if (hasErrorCode(error, 'PROJECTION_NOT_FOUND')) return undefined;
    throw error;
  }
}

/** The task's latest attempt with a context pack, from its timeline (`context.pack_compiled`), paged through. */
async function latestPackedAttempt(api: WritApi, taskId: string): Promise<string | undefined> {
  let latest: string | undefined;
  let after = 0;
  for (let page = 0; page < 1_000; page++) {
    const view = await api.get(`/v1/tasks/${taskId}`, TaskView, { after, limit: 1_000 });
    for (const event of view.events) if (event.event_type === 'context.pack_compiled' && event.attempt_id !== null) latest = event.attempt_id;
    if (view.next_after === null) return latest;
    after = view.next_after;
  }
  return latest;
}

/**
 * `writ context <attempt_id|task_id> [--verify] [--json]`: the context pack an attempt was
 * proposed under (a task id: its latest attempt's), read through the API (`GET
 * /v1/attempts/<id>/context`, scoped as every read), checked against the sha256 the log
 * recorded for it: its items in the precedence of Hermit 15.7, each with its source, what
 * was left out and why, and the budget. `--verify` reads the task's log over NATS and
 * compiles the pack again: the bytes must be the same (CLI_CONTEXT_MISMATCH otherwise).
 */
export async function contextShow(idArg: string, options: ContextOptions, api: WritApi, conn: Connection | undefined, io: CliIo): Promise<ShownContext> {
  const id = parseContract('attempt or task id', Id, idArg);
  let row = await attemptRow(api, id);
  if (row === undefined) {
    const attemptId = await latestPackedAttempt(api, id).catch((error: unknown) => {
      if (hasErrorCode(error, 'PROJECTION_NOT_FOUND')) return undefined;
      throw error;
    });
    row = attemptId === undefined ? undefined : await attemptRow(api, attemptId);
    if (row === undefined) throw new CliError('CLI_CONTEXT_NOT_FOUND', `${id} is neither an attempt nor a task with a context pack that you may read (an attempt's pack is compiled once its request is in the log: retry shortly)`);
  }
  const sha256 = row.context_pack_sha256;
  if (sha256 === null) throw new CliError('CLI_CONTEXT_NOT_FOUND', `attempt ${row.attempt_id} has no context pack yet (it is compiled once its request is in the log): retry shortly`);
  const pack = await api.get(`/v1/attempts/${row.attempt_id}/context`, ContextPack);
  // The API verified the stored bytes; this checks what arrived against the log's record too (RFC 8785 of the parsed pack is the stored bytes).
  const bytes = canonicalJson(pack);
  if (sha256Hex(bytes) !== sha256) throw new CliError('CLI_CONTEXT_MISMATCH', `the pack served for attempt ${row.attempt_id} does not hash to the recorded sha256:${sha256}`);
  let recompiled: boolean | undefined;
  if (options.verify === true) {
    if (conn === undefined) throw new CliError('CLI_USAGE', '--verify reads the log: give --nats (or WRIT_NATS_URL)');
    recompiled = (await recompile(conn, row.task_id, row.attempt_id)) === bytes;
    if (!recompiled) throw new CliError('CLI_CONTEXT_MISMATCH', `recompiling attempt ${row.attempt_id}'s pack from task ${row.task_id}'s log does not give the recorded bytes (sha256:${sha256})`);
  }
  const shown: ShownContext = { attempt_id: row.attempt_id, task_id: row.task_id, sha256, pack, ...(recompiled === undefined ? {} : { recompiled_identical: recompiled }) };
  if (options.json === true) io.stdout(JSON.stringify(shown));
  else for (const line of contextLines(shown, bytes.length)) io.stdout(line);
  return shown;
}

/** The pack compiled again from the task's log (chain verified by the event store), as the orchestrator compiles it. */
async function recompile(conn: Connection, taskId: string, attemptId: string): Promise<string | undefined> {
  const nc = await connectNats(conn);
  try {
    const store = await attachEventLog(nc, conn);
    const events = (await store.read(taskId)).map((stored) => stored.event);
    const inputs = contextInputsFromLog(events, attemptId);
    return inputs === undefined ? undefined : compileContextPack(inputs.input, { canonicalJson, sha256Hex }).bytes;
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

const itemText = (item: ContextItem) => (item.secret_ref !== undefined ? `(secret, by reference: ${item.secret_ref})` : cell(item.content, 160));

export function contextLines(shown: ShownContext, bytes: number): string[] {
  const { pack } = shown;
  const out = [
    `context pack of attempt ${cell(shown.attempt_id)} (task ${cell(shown.task_id)})`,
    `  sha256:${shown.sha256}, ${bytes} bytes, as of ${pack.as_of}${shown.recompiled_identical === true ? '; recompiled from the log: identical' : ''}`,
    `  budget: ${pack.budget.used_items}/${pack.budget.max_items} items, ${pack.budget.used_bytes}/${pack.budget.max_bytes} bytes; secrets ${pack.secrets}`,
    '  items (Hermit 15.7 precedence):',
  ];
  pack.items.forEach((item, n) => out.push(`    ${String(n + 1).padStart(3)} ${item.section.padEnd(18)} ${cell(`${item.source.kind}:${item.source.id}`, 60)}  ${itemText(item)}`));
  out.push(pack.omitted.length === 0 ? '  left out: nothing' : '  left out:');
  for (const omission of pack.omitted) out.push(`        ${omission.section.padEnd(18)} ${cell(`${omission.source.kind}:${omission.source.id}`, 60)}  ${omission.reason}`);
  return out;
}
