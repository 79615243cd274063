import { randomUUID } from 'node:crypto';
import {
  BeliefAssertion,
  BeliefList,
  BeliefRequestReply,
  BeliefStatus,
  COMMANDS,
  Id,
  Text,
  WorkingStateEntry,
  WorkingStateRevisionReply,
  parseContract,
  type BeliefChange,
} from '@writ/contracts';
import { WorkingStateRowSchema, type WorkingStateRow } from '@writ/contracts/projection-rows';
import { workingStateDecider } from '@writ/kernel';
import { SIGNED_REQUESTS } from '@writ/runtime';
import { z } from 'zod';
import type { CliIo, Connection } from '../cli-io.js';
import { attachEventLog, connectNats } from '../event-log.js';
import { readJsonFile } from '../files.js';
import { cell } from '../format.js';
import type { WritApi } from '../http-api.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

/** The signer of a knowledge request: the task's agent (its owner) or a director. */
export interface KnowledgeSignerOptions {
  /** Path of the signer's PRIVATE JWK. */
  readonly key: string;
  readonly principal: string;
  /** The request's id (default a fresh `req-<uuid>`): send the same id again to retry without a second change. */
  readonly requestId?: string;
  readonly json?: boolean;
}

const requestIdOf = (given: string | undefined): string => parseContract('--request-id', Id, given ?? `req-${randomUUID()}`);

/**
 * `writ working-state show <task_id>`: the task's working state as the
 * projection folded it (GET /v1/tasks/<id>/working-state): revision, limits,
 * and each entry (a secret one with its value withheld).
 */
export async function workingStateShow(taskIdArg: string, options: { readonly json?: boolean }, api: WritApi, io: CliIo): Promise<WorkingStateRow> {
  const taskId = parseContract('task id', Id, taskIdArg);
  const row = await api.get(`/v1/tasks/${taskId}/working-state`, WorkingStateRowSchema);
  if (options.json === true) {
    io.stdout(JSON.stringify(row));
    return row;
  }
  io.stdout(`working state of task ${cell(row.task_id)}: revision ${row.revision}, ${row.entry_count}/${row.limits.max_entries} entries, ${row.compactions} compaction(s), updated ${cell(row.updated_at)} by ${cell(row.last_revised_by)}`);
  for (const entry of row.entries) {
    io.stdout(`  ${cell(entry.key, 60)} [${entry.kind}${entry.pinned === true ? ', pinned' : ''}] ${entry.value_withheld === true ? '(secret: withheld)' : cell(entry.value, 200)}`);
  }
  return row;
}

export interface WorkingStateSetOptions extends KnowledgeSignerOptions {
  /** Keys to remove in the same revision. */
  readonly remove?: readonly string[];
  /** The revision this change is made against; default the task's current one, read from its log. */
  readonly expectedRevision?: string;
  /** Compact first: drop what no root reaches (to make room at the size limit). */
  readonly compact?: boolean;
  /** With `compact`: keys held from outside, kept with all they reach. */
  readonly keep?: readonly string[];
}

/**
 * `writ working-state set <task_id> [entries.json] [--remove <key>]...`: signs
 * a WorkingStateRevision (typ `writ-working-state-revision+jws`) over the
 * entries to set (a JSON array of WorkingStateEntry, each replacing the
 * entry of its key) and the keys to remove, and sends it to
 * `<root>.qry.orchestrator.revise-working-state`. `--compact` (with `--keep
 * <key>`) compacts first, making room at the size limit. The kernel's refusal
 * code (KNOWLEDGE_WORKING_STATE_TOO_LARGE, _REVISION_CONFLICT, KNOWLEDGE_SECRET_BY_VALUE, ...) is the exit error.
 */
export async function workingStateSet(taskIdArg: string, file: string | undefined, options: WorkingStateSetOptions, conn: Connection, io: CliIo): Promise<WorkingStateRevisionReply> {
  const taskId = parseContract('task id', Id, taskIdArg);
  // The file is checked before the key is read: a revision can be validated without it.
  const set = file === undefined ? [] : parseContract('working state entries', z.array(WorkingStateEntry), await readJsonFile(io.cwd, file, 'entries.json'));
  const remove = [...(options.remove ?? [])];
  const signer = await directorSigner(io, options.key, options.principal);
  const expected = options.expectedRevision === undefined ? await currentRevision(conn, taskId) : parseContract('--expected-revision', z.coerce.number().int().min(0), options.expectedRevision);
  const compact = options.compact === true ? { compact: { references: [...(options.keep ?? [])] } } : {};
  const jws = await signer.sign(SIGNED_REQUESTS.workingStateRevision, { task_id: taskId, request_id: requestIdOf(options.requestId), expected_revision: expected, set, remove, ...compact });
  const reply = await sendSignedRequest(conn, COMMANDS.orchestratorReviseWorkingState, { task_id: taskId, request_jws: jws }, WorkingStateRevisionReply, 'WorkingStateRevisionReply');
  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `accepted: working state of task ${cell(reply.task_id)} at revision ${reply.revision} (request ${cell(reply.request_id)})${reply.duplicate ? ' [already recorded]' : ''}`,
  );
  return reply;
}

/** The working state's revision as the task's log folds now (0 before the first), through the kernel's own evolve. */
async function currentRevision(conn: Connection, taskId: string): Promise<number> {
  const nc = await connectNats(conn);
  try {
    const store = await attachEventLog(nc, conn);
    let state = workingStateDecider.initialState();
    for (const { event } of await store.read(taskId)) {
      if (event.event_type.startsWith('working_state.')) state = workingStateDecider.evolve(state, { type: event.event_type, data: event.payload });
    }
    return state.status === 'open' ? state.revision : 0;
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

/** `writ belief list <task_id> [--status s]`: every belief of the task (GET /v1/tasks/<id>/beliefs). */
export async function beliefList(taskIdArg: string, options: { readonly status?: string; readonly json?: boolean }, api: WritApi, io: CliIo): Promise<BeliefList> {
  const taskId = parseContract('task id', Id, taskIdArg);
  const status = options.status === undefined ? undefined : parseContract('--status', BeliefStatus, options.status);
  const list = await api.get(`/v1/tasks/${taskId}/beliefs`, BeliefList, { status });
  if (options.json === true) {
    io.stdout(JSON.stringify(list));
    return list;
  }
  if (list.beliefs.length === 0) io.stdout(`task ${taskId} holds no belief${status === undefined ? '' : ` that is ${status}`}`);
  for (const belief of list.beliefs) {
    const claim = belief.claim_withheld ? '(secret: withheld)' : cell(belief.claim, 120);
    const links = [belief.supersedes === null ? '' : `supersedes ${belief.supersedes}`, belief.superseded_by === null ? '' : `superseded by ${belief.superseded_by}`, belief.contradicts.length === 0 ? '' : `contradicts ${belief.contradicts.join(', ')}`]
      .filter((part) => part !== '')
      .join('; ');
    io.stdout(`${cell(belief.belief_id)} ${belief.status} v${belief.version} ${belief.trust_tier} ${belief.confidence} [${cell(belief.scope, 40)}] ${claim}${links === '' ? '' : ` (${links})`}`);
  }
  return list;
}

/**
 * `writ belief assert <task_id> <belief.json>` (a BeliefAssertion: claim,
 * scope, evidence_refs, confidence, trust_tier, optional supersedes /
 * contradicts; `belief_id` defaults to `bel-<uuid>`) and `writ belief revoke
 * <task_id> <belief_id> --reason <text>`: signed (typ `writ-belief-request+jws`)
 * and sent to `<root>.qry.orchestrator.change-belief`. The kernel's refusal
 * (KNOWLEDGE_TRUST_TIER_UNSUPPORTED, _BELIEF_NOT_ACTIVE, KNOWLEDGE_SECRET_BY_VALUE, ...) is the exit error.
 */
export async function beliefAssert(taskIdArg: string, file: string, options: KnowledgeSignerOptions, conn: Connection, io: CliIo): Promise<BeliefRequestReply> {
  const taskId = parseContract('task id', Id, taskIdArg);
  const document = (await readJsonFile(io.cwd, file, 'belief.json')) as Record<string, unknown>;
  const belief = parseContract('BeliefAssertion', BeliefAssertion, { belief_id: `bel-${randomUUID()}`, ...document });
  return sendBeliefChange(taskId, { op: 'assert', belief }, options, conn, io);
}

export async function beliefRevoke(taskIdArg: string, beliefIdArg: string, options: KnowledgeSignerOptions & { readonly reason: string }, conn: Connection, io: CliIo): Promise<BeliefRequestReply> {
  const taskId = parseContract('task id', Id, taskIdArg);
  const change: BeliefChange = { op: 'revoke', belief_id: parseContract('belief id', Id, beliefIdArg), reason: parseContract('--reason', Text, options.reason) };
  return sendBeliefChange(taskId, change, options, conn, io);
}

async function sendBeliefChange(taskId: string, change: BeliefChange, options: KnowledgeSignerOptions, conn: Connection, io: CliIo): Promise<BeliefRequestReply> {
  const signer = await directorSigner(io, options.key, options.principal);
  const jws = await signer.sign(SIGNED_REQUESTS.beliefRequest, { task_id: taskId, request_id: requestIdOf(options.requestId), change });
  const reply = await sendSignedRequest(conn, COMMANDS.orchestratorChangeBelief, { task_id: taskId, request_jws: jws }, BeliefRequestReply, 'BeliefRequestReply');
  io.stdout(
    options.json === true
      ? JSON.stringify(reply)
      : `accepted: belief ${cell(reply.belief_id)} is ${reply.belief_status} (version ${reply.version}; ${reply.events.join(', ')})${reply.duplicate ? ' [already recorded]' : ''}`,
  );
  return reply;
}
