import { Brief, Id, Name, WritError, parseActionRequest, parseContract, type ActionRequest } from '@writ/contracts';
import { importEd25519PrivateJwk, signJws } from '@writ/crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { CliError } from '../cli-errors.js';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { readJsonFile } from '../files.js';
import { ingressIdsOf, publishSignedAction } from '../ingress-submission.js';
import { cell } from '../format.js';

export interface TaskCreateOptions {
  /** brief.json (seed 003). */
  readonly brief: string;
  /** The task's first ActionRequest, without `task` / `task_id` (a task starts with its first action). */
  readonly action: string;
  /** Path of the agent's PRIVATE JWK. */
  readonly key: string;
  /** The agent: proposer and the task's owner. */
  readonly principal: string;
  /** The policy profile the task asks for (default local_edit_allowed). */
  readonly profile?: string;
  /** Sacred Scope paths the task asks to write (TaskSpec.sacred_exceptions). */
  readonly sacredException?: readonly string[];
  /** Seconds to wait for ingress's verdict (default 10; 0: do not wait). */
  readonly wait?: string;
  readonly json?: boolean;
}

export interface TaskCreateResult {
  readonly task_id: string;
  readonly ingress_id: string;
  readonly action_request_id: string;
  /** `accepted` / `rejected` as ingress recorded it; `published` when not waited for (or not yet decided). */
  readonly status: 'accepted' | 'rejected' | 'published';
  readonly reason_code?: string;
  readonly message?: string;
}

const DEFAULT_PROFILE = 'local_edit_allowed';

/**
 * `writ task create --brief brief.json --action first.json --key <file> --principal <agent>`:
 * checks the brief (every missing section listed at once), builds the TaskSpec
 * from it (title = mission, goal = purpose or the done criteria, files_owned =
 * `spec.scope.files_owned`, the brief itself) and sends the first action with
 * it, signed by the agent, to `<root>.ingress.action.<agent>` (Writ-Idempotency-Key =
 * action_request_id). Ingress records the brief in `task.created`; the task
 * then closes only on an accepted done claim (`writ task done`). Prints the
 * task id (ingress derives it from the agent and the key) and, unless
 * `--wait 0`, what ingress decided.
 */
export async function taskCreate(options: TaskCreateOptions, conn: Connection, io: CliIo): Promise<TaskCreateResult> {
  const brief = parseContract('Brief', Brief, await readJsonFile(io.cwd, options.brief, 'brief'));
  const principal = parseContract('--principal', Id, options.principal);
  const profile = parseContract('--profile', Name, options.profile ?? DEFAULT_PROFILE);
  const waitSeconds = seconds(options.wait, 10);
  const document = await readJsonFile(io.cwd, options.action, 'ActionRequest');
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new CliError('CLI_FILE_UNREADABLE', `${options.action} must hold an ActionRequest object`);
  const first = document as Record<string, unknown>;
  if (first['task'] !== undefined || first['task_id'] !== undefined) {
    throw new CliError('CLI_USAGE', `${options.action} must not name task or task_id: the task is made from the brief`);
  }
  if (typeof first['proposed_by'] === 'string' && first['proposed_by'] !== principal) {
    throw new CliError('CLI_PRINCIPAL_MISMATCH', `the action is proposed_by ${first['proposed_by']}, not ${principal}; ingress would refuse it`);
  }
  const goal = brief.purpose.trim() !== '' ? brief.purpose : brief.done_criteria;
  const request: ActionRequest = parseActionRequest({
    ...first,
    task: {
      title: brief.mission,
      goal,
      policy_profile: profile,
      files_owned: [...brief.spec.scope.files_owned],
      ...(options.sacredException === undefined || options.sacredException.length === 0 ? {} : { sacred_exceptions: [...options.sacredException] }),
      brief,
    },
    proposed_by: principal,
    proposed_at: io.now().toISOString(),
  });
  const key = await importEd25519PrivateJwk(await readJsonFile(io.cwd, options.key, 'private JWK'));
  const jws = await signJws(JSON.stringify(request), key);

  // docs/governed-path.md step 1: the record of these bytes, and the task the key creates.
  const ids = { ...ingressIdsOf(principal, request.action_request_id, jws), action_request_id: request.action_request_id };
  const subject = `${conn.subjectRoot}.ingress.action.${principal}`;
  const nc = await connectNats(conn);
  let result: TaskCreateResult;
  try {
    try {
      await publishSignedAction(nc, subject, jws, request.action_request_id);
    } catch (cause) {
      throw new CliError('CLI_NATS_UNREACHABLE', `JetStream did not store the request on ${subject} (is ingress's stream up?)`, { cause });
    }
    result = waitSeconds === 0 ? { ...ids, status: 'published' } : await ingressVerdict(nc, conn, ids, waitSeconds, io);
  } finally {
    await nc.drain().catch(() => undefined);
  }
  io.stdout(
    options.json === true
      ? JSON.stringify(result)
      : `${cell(result.status)} task ${cell(result.task_id)} from brief ${cell(brief.id)} (first action ${cell(result.action_request_id)})${result.reason_code === undefined ? '' : `: ${cell(result.reason_code)} ${cell(result.message, 200)}`}`,
  );
  if (result.status === 'rejected') throw new WritError(result.reason_code ?? 'CLI_FAILED', result.message ?? 'ingress rejected the request', { details: { ingress_id: result.ingress_id } });
  return result;
}

/** Reads the ingress stream until it ends in accepted or rejected, or `waitSeconds` pass. */
async function ingressVerdict(
  nc: Parameters<typeof attachEventLog>[0],
  conn: Connection,
  ids: { task_id: string; ingress_id: string; action_request_id: string },
  waitSeconds: number,
  io: CliIo,
): Promise<TaskCreateResult> {
  const store = await attachEventLog(nc, conn);
  const deadline = io.now().getTime() + waitSeconds * 1000;
  for (;;) {
    const events = await store.readEntity('ingress', ids.ingress_id);
    const verdict = events.map((stored) => stored.event).find((event) => event.event_type === 'ingress.accepted' || event.event_type === 'ingress.rejected');
    if (verdict?.event_type === 'ingress.accepted') return { ...ids, task_id: String(verdict.payload['task_id'] ?? ids.task_id), status: 'accepted' };
    if (verdict?.event_type === 'ingress.rejected') {
      return { ...ids, status: 'rejected', reason_code: String(verdict.payload['reason_code']), message: String(verdict.payload['message']) };
    }
    if (io.now().getTime() >= deadline) return { ...ids, status: 'published' };
    await delay(250);
  }
}

/** `--wait <seconds>`: a non-negative integer (default `fallback`). */
export function seconds(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 3_600) throw new CliError('CLI_USAGE', `--wait must be a whole number of seconds from 0 to 3600, not ${value}`);
  return parsed;
}
