import {
  Id,
  Name,
  StepStatus,
  BeliefListQuery,
  MemoryListQuery,
  type MemoryList,
  BeliefStatus,
  MemoryStatus,
  type BeliefList,
  type ActionPage,
  type ApprovalPage,
  type CellPage,
  type DecisionTimeline,
  type HttpReadScope,
  type ListName,
  type PublicEd25519Jwk,
  type ReceiptPage,
  type StepView,
  type TaskPage,
  type TaskView,
} from '@writ/contracts';
import { mayRead } from '@writ/kernel';
import { approvalDetail, type ApprovalDetail } from './approval-detail.js';
import { decodeCursor, encodeCursor, listFingerprint, parseListQuery, type Keyset, type ListFilterOf } from './list-page.js';
import type { ListRequest, ReadModel } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { parseCount } from './query-count.js';
import type { ActionRow, ArtifactRow, AttemptRow, CellRow, GrantRow, MemoryRow, PrincipalRow, ReceiptRow, StepRow, WorkingStateRow } from './views/index.js';

/** `GET /v1/actions/<id>`. */
export type ActionView = ActionRow;

/** `GET /v1/tasks/<id>`, `GET /v1/steps/<id>`, `GET /v1/tasks/<id>/decisions`: the contracts' answers (`@writ/contracts`, projection-api). */
export type { DecisionTimeline, StepView, TaskView };

const GRANT_STATUSES = ['active', 'exhausted', 'revoked'] as const;

/** Reads on behalf of the system itself (tests, tools in-process): everything. HTTP callers carry their own scope. */
export const READ_ALL: HttpReadScope = { kind: 'all' };

/** Page sizes of the timelines and the unpaged lists (the paged lists take theirs from the contracts: PAGE_LIMIT_DEFAULT / _MAX, the same numbers). */
export const DEFAULT_PAGE = 200;
export const MAX_PAGE = 1_000;

/**
 * The read side: thin queries over the read models. Reads decide nothing:
 * a status here is what the log said when the projection last caught up,
 * and no service authorizes anything on it.
 *
 * Every read takes the caller's scope (`httpReadScope`): a row of a task the
 * caller does not own, another's action or principal, answers exactly as a
 * missing one (PROJECTION_NOT_FOUND, same message), so ids leak nothing; a
 * paged list (tasks, actions, approvals, receipts, cells) holds only the
 * caller's own rows; the unpaged lists across tasks (grants, steps,
 * artifacts without a task) and the projection's status are
 * PROJECTION_SCOPE_FORBIDDEN (403) to a caller that reads its own only; a
 * list filtered by one task is empty when the task is not the caller's.
 */
export class ReadService {
  constructor(private readonly model: ReadModel) {}

  async action(id: string, scope: HttpReadScope): Promise<ActionView> {
    const actionRequestId = parseId(id, 'action request id');
    const row = await this.model.action(actionRequestId);
    if (row === undefined || !(mayRead(scope, row.principal_id) || (await this.#ownsTask(scope, row.task_id)))) throw notFound('action', actionRequestId, `it may still be in flight: retry shortly, or subscribe to <root>.proj.actions.${actionRequestId}`);
    return row;
  }

  async task(id: string, query: { readonly after?: unknown; readonly limit?: unknown }, scope: HttpReadScope): Promise<TaskView> {
    const taskId = parseId(id, 'task id');
    const afterSeq = parseCount(query.after, 'after', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = parseCount(query.limit, 'limit', DEFAULT_PAGE, 1, MAX_PAGE);
    const task = await this.model.task(taskId);
    if (task === undefined || !mayRead(scope, task.owner_principal_id)) throw notFound('task', taskId, 'check the id; a task appears once ingress has accepted its first action');
    const page = await this.model.taskEvents(taskId, { afterSeq, limit: limit + 1 });
    const events = page.slice(0, limit);
    return { ...task, events, next_after: page.length > limit ? (events.at(-1)?.task_seq ?? null) : null };
  }

  /** `GET /v1/tasks`: newest first; an agent's own tasks only. */
  tasks(query: unknown, scope: HttpReadScope): Promise<TaskPage> {
    return this.#page('tasks', query, scope, (request) => this.model.listTasks(request), (row) => ({ at: row.created_at, id: row.task_id }));
  }

  /** `GET /v1/actions`: newest first; an agent's own actions (proposed by it, or of its tasks) only. */
  actions(query: unknown, scope: HttpReadScope): Promise<ActionPage> {
    return this.#page('actions', query, scope, (request) => this.model.listActions(request), (row) => ({ at: row.created_at, id: row.action_request_id }));
  }

  /** `GET /v1/approvals`: the inbox, oldest request first (`?status=pending`); `approvals` repeats `items` for earlier clients. */
  async approvals(query: unknown, scope: HttpReadScope): Promise<ApprovalPage> {
    const page = await this.#page('approvals', query, scope, (request) => this.model.listApprovals(request), (row) => ({ at: row.requested_at, id: row.approval_id }));
    return { ...page, approvals: page.items };
  }

  /** `GET /v1/receipts`: newest first; an agent's own tasks' receipts only. */
  receipts(query: unknown, scope: HttpReadScope): Promise<ReceiptPage> {
    return this.#page('receipts', query, scope, (request) => this.model.listReceipts(request), (row) => ({ at: row.created_at, id: row.receipt_id }));
  }

  /** `GET /v1/approvals/<id>`: the approval with its packet ref, witness, resolution and decisions. */
  approval(id: string, scope: HttpReadScope): Promise<ApprovalDetail> {
    return approvalDetail(this.model, id, (row) => this.#ownsTask(scope, row.task_id));
  }

  async receipt(id: string, scope: HttpReadScope): Promise<ReceiptRow> {
    const receiptId = parseId(id, 'receipt id');
    const row = await this.model.receipt(receiptId);
    if (row === undefined || !(await this.#ownsTask(scope, row.task_id))) throw notFound('receipt', receiptId, 'a receipt appears once the receipt service has issued it; retry shortly');
    return row;
  }

  /**
   * `GET /v1/grants/<id>`: the grant's claims summary, uses and status as the log
   * said when the projection caught up (`writ grant revoke` finds its task here).
   * Whether a grant may be used is decided by the executor against the log, never here.
   */
  async grant(id: string, scope: HttpReadScope): Promise<GrantRow> {
    const grantId = parseId(id, 'grant id');
    const row = await this.model.grant(grantId);
    if (row === undefined || !(await this.#ownsTask(scope, row.task_id))) throw notFound('grant', grantId, 'a grant appears once the approval service has issued it; retry shortly');
    return row;
  }

  /** `GET /v1/grants?status=active&task_id=`: the active grant view (or any status), newest issue first. Read-only, like every grant read here. */
  async grants(query: { readonly status?: unknown; readonly task_id?: unknown; readonly limit?: unknown }, scope: HttpReadScope): Promise<{ readonly grants: readonly GrantRow[] }> {
    const status = parseChoice(query.status, 'status', GRANT_STATUSES);
    const taskId = parseOptionalId(query.task_id, 'task_id');
    const limit = parseCount(query.limit, 'limit', DEFAULT_PAGE, 1, MAX_PAGE);
    if (!(await this.#ownsListedTask(scope, taskId, 'grants'))) return { grants: [] };
    return { grants: await this.model.grants({ status, taskId, limit }) };
  }

  async principal(id: string, scope: HttpReadScope): Promise<PrincipalRow> {
    const principalId = parseId(id, 'principal id');
    const row = await this.model.principal(principalId);
    if (row === undefined || !mayRead(scope, row.principal_id)) throw notFound('principal', principalId, 'a principal appears once principal.registered is in the log (writ principal add)');
    return row;
  }

  /** `GET /v1/steps?status=ready&task_id=`: the step queue, oldest planned first. */
  async steps(query: { readonly status?: unknown; readonly task_id?: unknown; readonly limit?: unknown }, scope: HttpReadScope): Promise<{ readonly steps: readonly StepRow[] }> {
    const status = parseChoice(query.status, 'status', StepStatus.options);
    const taskId = parseOptionalId(query.task_id, 'task_id');
    const limit = parseCount(query.limit, 'limit', DEFAULT_PAGE, 1, MAX_PAGE);
    if (!(await this.#ownsListedTask(scope, taskId, 'steps'))) return { steps: [] };
    return { steps: await this.model.steps({ status, taskId, limit }) };
  }

  async step(id: string, scope: HttpReadScope): Promise<StepView> {
    const stepId = parseId(id, 'step id');
    const row = await this.model.step(stepId);
    if (row === undefined || !(await this.#ownsTask(scope, row.task_id))) throw notFound('step', stepId, 'a step appears once its step.planned is folded; retry shortly');
    return { ...row, attempts: await this.model.stepAttempts(stepId) };
  }

  async attempt(id: string, scope: HttpReadScope): Promise<AttemptRow> {
    const attemptId = parseId(id, 'attempt id');
    const row = await this.model.attempt(attemptId);
    if (row === undefined || !(await this.#ownsTask(scope, row.task_id))) throw notFound('attempt', attemptId, 'an attempt appears once its attempt.created is folded; retry shortly');
    return row;
  }

  /** `GET /v1/artifacts?task_id=&kind=`: the artifact catalog, in task order. */
  async artifacts(query: { readonly task_id?: unknown; readonly kind?: unknown; readonly limit?: unknown }, scope: HttpReadScope): Promise<{ readonly artifacts: readonly ArtifactRow[] }> {
    const taskId = parseOptionalId(query.task_id, 'task_id');
    const kind = query.kind === undefined ? undefined : parseKind(query.kind);
    const limit = parseCount(query.limit, 'limit', DEFAULT_PAGE, 1, MAX_PAGE);
    if (!(await this.#ownsListedTask(scope, taskId, 'artifacts'))) return { artifacts: [] };
    return { artifacts: await this.model.artifacts({ taskId, kind, limit }) };
  }

  async artifact(id: string, scope: HttpReadScope): Promise<ArtifactRow> {
    const artifactId = parseId(id, 'artifact id');
    const row = await this.model.artifact(artifactId);
    if (row === undefined || !(await this.#ownsTask(scope, row.task_id))) throw notFound('artifact', artifactId, 'an artifact appears once the execution that captured it is folded');
    return row;
  }

  /** `GET /v1/tasks/<id>/decisions?after=&limit=`: the task's decisions in log order. */
  async decisions(id: string, query: { readonly after?: unknown; readonly limit?: unknown }, scope: HttpReadScope): Promise<DecisionTimeline> {
    const taskId = parseId(id, 'task id');
    const afterSeq = parseCount(query.after, 'after', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = parseCount(query.limit, 'limit', DEFAULT_PAGE, 1, MAX_PAGE);
    // Another's task reads as a task with no decisions (as an unknown one does).
    if (!(await this.#ownsTask(scope, taskId))) return { task_id: taskId, decisions: [], next_after: null };
    const page = await this.model.decisions(taskId, { afterSeq, limit: limit + 1 });
    const decisions = page.slice(0, limit);
    return { task_id: taskId, decisions, next_after: page.length > limit ? (decisions.at(-1)?.task_seq ?? null) : null };
  }

  /** `GET /v1/tasks/<id>/working-state`: the task's working state; another's task, or one without a working state yet, is not found. */
  async workingState(id: string, scope: HttpReadScope): Promise<WorkingStateRow> {
    const taskId = parseId(id, 'task id');
    const row = (await this.#ownsTask(scope, taskId)) ? await this.model.workingState(taskId) : undefined;
    if (row === undefined) throw notFound('working state of task', taskId, 'a working state appears with its first accepted revision (writ working-state set)');
    return row;
  }

  /** `GET /v1/tasks/<id>/beliefs?status=`: every belief of the task in assertion order; another's task reads as one without beliefs. */
  async beliefs(id: string, query: unknown, scope: HttpReadScope): Promise<BeliefList> {
    const taskId = parseId(id, 'task id');
    const parsed = BeliefListQuery.safeParse(query ?? {});
    if (!parsed.success) {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', `the beliefs take only ?status=, one of ${BeliefStatus.options.join(', ')}`, { details: { parameter: 'status' } });
    }
    if (!(await this.#ownsTask(scope, taskId))) return { task_id: taskId, beliefs: [] };
    return { task_id: taskId, beliefs: await this.model.beliefs(taskId, { status: parsed.data.status }) };
  }

  /**
   * `GET /v1/memory?status=&scope=&task_id=&limit=`: durable memory records, newest first. Memory
   * is cross-task, so it is scoped by its promoter: an agent reads the records it promoted.
   */
  async memoryRecords(query: unknown, scope: HttpReadScope): Promise<MemoryList> {
    const parsed = MemoryListQuery.safeParse(query ?? {});
    if (!parsed.success) {
      const parameter = String(parsed.error.issues[0]?.path[0] ?? 'query');
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', `the memory list takes ?status= (${MemoryStatus.options.join(', ')}), ?scope=, ?task_id= and ?limit= (1-${MAX_PAGE}); ${parameter} is not valid`, { details: { parameter } });
    }
    const { status, scope: memoryScope, task_id: taskId, limit } = parsed.data;
    const memory = await this.model.memoryRecords({
      ...(status === undefined ? {} : { status }),
      ...(memoryScope === undefined ? {} : { scope: memoryScope }),
      ...(taskId === undefined ? {} : { taskId }),
      ...(scope.kind === 'own' ? { promotedBy: scope.principalId } : {}),
      limit: limit ?? DEFAULT_PAGE,
    });
    return { memory };
  }

  /** `GET /v1/memory/<id>`: one record, any status (an agent: one it promoted; another's reads as missing). */
  async memoryRecord(id: string, scope: HttpReadScope): Promise<MemoryRow> {
    const memoryId = parseId(id, 'memory id');
    const row = await this.model.memoryRecord(memoryId);
    if (row === undefined || !mayRead(scope, row.promoted_by)) throw notFound('memory record', memoryId, 'a record appears once its promotion is executed (a promotion that degraded to working state makes none)');
    return row;
  }

  /** `GET /v1/cells`: newest first; an agent's own tasks' cells only; `cells` repeats `items` for earlier clients. */
  async cells(query: unknown, scope: HttpReadScope): Promise<CellPage> {
    const page = await this.#page('cells', query, scope, (request) => this.model.listCells(request), (row) => ({ at: row.created_at, id: row.cell_id }));
    return { ...page, cells: page.items };
  }

  async cell(id: string, scope: HttpReadScope): Promise<CellRow> {
    const cellId = parseId(id, 'cell id');
    const row = await this.model.cell(cellId);
    if (row === undefined || !(await this.#ownsTask(scope, row.task_id))) throw notFound('cell', cellId, 'a cell appears once its first event is folded (a task execution cell is task-<task_id>)');
    return row;
  }

  /**
   * One page of a list: the query parsed with its contract, the cursor checked
   * against the list and its filters, the caller's scope applied in the query
   * itself (an agent's page is its own rows, never a filtered-out full page),
   * one row more than asked fetched to know whether a next page exists.
   */
  async #page<N extends ListName, Row>(
    list: N,
    raw: unknown,
    scope: HttpReadScope,
    fetch: (request: ListRequest<ListFilterOf<N>>) => Promise<Row[]>,
    keyOf: (row: Row) => Keyset,
  ): Promise<{ items: Row[]; next_cursor: string | null }> {
    const { limit, cursor, ...filter } = parseListQuery(list, raw);
    const fingerprint = listFingerprint(list, filter);
    const after = cursor === undefined ? undefined : decodeCursor(cursor, list, fingerprint);
    const rows = await fetch({ filter: filter as ListFilterOf<N>, visibleTo: scope.kind === 'all' ? undefined : scope.principalId, after, limit: limit + 1 });
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return { items, next_cursor: rows.length > limit && last !== undefined ? encodeCursor(list, fingerprint, keyOf(last)) : null };
  }

  /** Whether the scope covers the task (all: any, even unknown or null; own: a task it owns). */
  async #ownsTask(scope: HttpReadScope, taskId: string | null): Promise<boolean> {
    if (scope.kind === 'all') return true;
    if (taskId === null) return false;
    return mayRead(scope, (await this.model.task(taskId))?.owner_principal_id);
  }

  /** A list for an own scope must name one task (else 403); false when that task is not the caller's. */
  async #ownsListedTask(scope: HttpReadScope, taskId: string | undefined, what: string): Promise<boolean> {
    if (scope.kind === 'all') return true;
    if (taskId === undefined) requireAll(scope, `${what} across every task`, `name one of your tasks: ?task_id=<task_id>`);
    return this.#ownsTask(scope, taskId ?? null);
  }

  /**
   * JWKS of the service principals' active public keys (the approval and
   * receipt signing keys). A kid claimed by two principals is listed once
   * (the first by principal id) so that the set stays usable as a JWKS.
   */
  async keys(): Promise<{ readonly keys: readonly PublicEd25519Jwk[] }> {
    const seen = new Set<string>();
    const keys: PublicEd25519Jwk[] = [];
    for (const principal of await this.model.servicePrincipals()) {
      for (const key of principal.keys) {
        if (seen.has(key.kid)) continue;
        seen.add(key.kid);
        keys.push({ ...key, alg: 'EdDSA', use: 'sig' });
      }
    }
    return { keys };
  }
}

function parseId(value: string, what: string): string {
  if (!Id.safeParse(value).success) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `the ${what} must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-"`, { details: { parameter: 'id' } });
  }
  return value;
}

function parseOptionalId(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !Id.safeParse(value).success) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `${name} must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-"`, { details: { parameter: name } });
  }
  return value;
}

function parseChoice<T extends string>(value: unknown, name: string, choices: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `${name} must be one of ${choices.join(', ')}`, { details: { parameter: name } });
  }
  return value as T;
}

/** An artifact kind: a dotted lowercase name (`command.transcript`). */
function parseKind(value: unknown): string {
  if (typeof value !== 'string' || !Name.safeParse(value).success) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'kind must be an artifact kind such as command.transcript', { details: { parameter: 'kind' } });
  }
  return value;
}


/** A read only a wide scope (director, operator, observer) covers. */
export function requireAll(scope: HttpReadScope, what: string, hint: string): void {
  if (scope.kind === 'all') return;
  throw new ProjectionError('PROJECTION_SCOPE_FORBIDDEN', `${what} is for directors, operators and observers; ${scope.principalId} reads its own only: ${hint}`);
}

function notFound(what: string, id: string, hint: string): ProjectionError {
  return new ProjectionError('PROJECTION_NOT_FOUND', `no ${what} ${id} in the projection; ${hint}`, { details: { [what]: id } });
}
