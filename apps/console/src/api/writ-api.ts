import { ApiError, consoleError, hasCode } from './api-error.js';
import type { HttpClient } from './http-client.js';
import type {
  ActionRow,
  ApprovalDetail,
  ApprovalRow,
  ArtifactRow,
  CellRow,
  DecisionRow,
  GrantRow,
  Json,
  Page,
  PrincipalRow,
  ReceiptRow,
  ResolveReply,
  RevokeReply,
  StepRow,
  StepView,
  TaskEventRow,
  TaskRow,
  TaskView,
} from './rows.js';

/**
 * Every call the console makes to the projection's API, in one small module,
 * so the endpoints that are on their way (list endpoints with cursors, the
 * changes feed) switch on here and nowhere else. Where a list endpoint is
 * missing (404 `PROJECTION_ROUTE_NOT_FOUND`) the list is derived from what
 * exists today, and says so (`source`).
 */

export interface Listed<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
  /** `endpoint`: the list endpoint answered; `derived`: assembled from today's endpoints (see `note`). */
  readonly source: 'endpoint' | 'derived';
  readonly note?: string;
}

export type InclusionAnswer = { readonly kind: 'proof'; readonly proof: Json; readonly tree_head: Json } | { readonly kind: 'not_served' } | { readonly kind: 'not_yet' };

export interface TaskFilter {
  readonly status?: string;
  /** Matched against id, title, goal, owner and profile. */
  readonly search?: string;
  readonly cursor?: string;
}

/** A route the server does not have (yet): the projection's 404 PROJECTION_ROUTE_NOT_FOUND. */
export function isMissingRoute(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && hasCode(error, 'PROJECTION_ROUTE_NOT_FOUND');
}

const DERIVED_TASK_LIMIT = 60;

export function matchesSearch(task: TaskRow, search: string | undefined): boolean {
  const needle = search?.trim().toLowerCase() ?? '';
  if (needle === '') return true;
  return [task.task_id, task.title, task.goal, task.owner_principal_id ?? '', task.policy_profile ?? '', task.status].some((field) => field.toLowerCase().includes(needle));
}

export class WritApi {
  constructor(readonly http: HttpClient) {}

  action(id: string): Promise<ActionRow> {
    return this.http.get(`/v1/actions/${encodeURIComponent(id)}`);
  }

  task(id: string, after?: number): Promise<TaskView> {
    return this.http.get(`/v1/tasks/${encodeURIComponent(id)}`, { after, limit: 1000 });
  }

  /** The whole timeline, every page of it. */
  async taskWithTimeline(id: string): Promise<TaskView> {
    const first = await this.task(id);
    const events: TaskEventRow[] = [...first.events];
    let after = first.next_after;
    while (after !== null) {
      const page = await this.task(id, after);
      events.push(...page.events);
      after = page.next_after;
    }
    return { ...first, events, next_after: null };
  }

  async decisions(taskId: string): Promise<readonly DecisionRow[]> {
    return (await this.http.get<{ decisions: readonly DecisionRow[] }>(`/v1/tasks/${encodeURIComponent(taskId)}/decisions`, { limit: 1000 })).decisions;
  }

  async approvals(status?: string, limit = 200): Promise<readonly ApprovalRow[]> {
    return (await this.http.get<{ approvals: readonly ApprovalRow[] }>('/v1/approvals', { status, limit })).approvals;
  }

  approval(id: string): Promise<ApprovalDetail> {
    return this.http.get(`/v1/approvals/${encodeURIComponent(id)}`);
  }

  resolveApproval(id: string, decision: 'grant' | 'deny', body: { readonly task_id: string; readonly resolution_jws: string }): Promise<ResolveReply> {
    return this.http.post(`/v1/approvals/${encodeURIComponent(id)}/${decision}`, body);
  }

  revokeGrant(id: string, body: { readonly task_id: string; readonly revocation_jws: string }): Promise<RevokeReply> {
    return this.http.post(`/v1/grants/${encodeURIComponent(id)}/revoke`, body);
  }

  receipt(id: string): Promise<ReceiptRow> {
    return this.http.get(`/v1/receipts/${encodeURIComponent(id)}`);
  }

  /**
   * The receipt's inclusion proof and the signed tree head it is against:
   * `not_served` when the API has no such route, `not_yet` while the receipt
   * is not sequenced in the transparency log.
   */
  async inclusionProof(receiptId: string): Promise<InclusionAnswer> {
    try {
      return { kind: 'proof', ...(await this.http.get<{ proof: Json; tree_head: Json }>(`/v1/receipts/${encodeURIComponent(receiptId)}/inclusion-proof`)) };
    } catch (error) {
      if (isMissingRoute(error)) return { kind: 'not_served' };
      if (hasCode(error, 'PROJECTION_NOT_FOUND')) return { kind: 'not_yet' };
      throw error;
    }
  }

  keys(): Promise<Json> {
    return this.http.get('/v1/keys');
  }

  async grants(taskId: string, status?: string): Promise<readonly GrantRow[]> {
    return (await this.http.get<{ grants: readonly GrantRow[] }>('/v1/grants', { task_id: taskId, status, limit: 1000 })).grants;
  }

  async steps(query: { readonly taskId?: string; readonly status?: string; readonly limit?: number }): Promise<readonly StepRow[]> {
    return (await this.http.get<{ steps: readonly StepRow[] }>('/v1/steps', { task_id: query.taskId, status: query.status, limit: query.limit ?? 1000 })).steps;
  }

  step(id: string): Promise<StepView> {
    return this.http.get(`/v1/steps/${encodeURIComponent(id)}`);
  }

  async artifacts(taskId: string): Promise<readonly ArtifactRow[]> {
    return (await this.http.get<{ artifacts: readonly ArtifactRow[] }>('/v1/artifacts', { task_id: taskId, limit: 1000 })).artifacts;
  }

  async cells(status?: string): Promise<readonly CellRow[]> {
    return (await this.http.get<{ cells: readonly CellRow[] }>('/v1/cells', { status, limit: 500 })).cells;
  }

  cell(id: string): Promise<CellRow> {
    return this.http.get(`/v1/cells/${encodeURIComponent(id)}`);
  }

  principal(id: string): Promise<PrincipalRow> {
    return this.http.get(`/v1/principals/${encodeURIComponent(id)}`);
  }

  /**
   * Tasks, newest change first: `GET /v1/tasks?status=&q=&cursor=` once it
   * exists (the server scopes it: an agent sees its own). Until then, for a
   * wide reader, the tasks behind today's lists (steps, approvals, cells),
   * each read once; an agent gets CONSOLE_LIST_UNAVAILABLE (the lists across
   * tasks are 403 for it) and looks its work up by id instead.
   */
  async listTasks(filter: TaskFilter): Promise<Listed<TaskRow>> {
    try {
      // The search is the console's own (matchesSearch): the list refuses parameters it does not know.
      const page = await this.http.get<Page<TaskRow>>('/v1/tasks', { status: filter.status, cursor: filter.cursor, limit: 100 });
      return { items: page.items.filter((task) => matchesSearch(task, filter.search)), nextCursor: page.next_cursor, source: 'endpoint' };
    } catch (error) {
      if (!isMissingRoute(error)) throw error;
    }
    let ids: string[];
    try {
      const [steps, approvals, cells] = await Promise.all([this.steps({ limit: 1000 }), this.approvals(undefined, 1000), this.cells()]);
      ids = [...new Set([...steps.map((s) => s.task_id), ...approvals.map((a) => a.task_id), ...cells.map((c) => (typeof c.task_id === 'string' ? c.task_id : ''))].filter((id) => id !== ''))];
    } catch (error) {
      if (hasCode(error, 'PROJECTION_SCOPE_FORBIDDEN')) {
        throw consoleError('CONSOLE_LIST_UNAVAILABLE', 'this API has no task list yet (GET /v1/tasks), and the lists across tasks are for directors, operators and observers: look your task or action up by id');
      }
      throw error;
    }
    const tasks = (await Promise.all(ids.map((id) => this.http.get<TaskView>(`/v1/tasks/${encodeURIComponent(id)}`, { limit: 1 }).catch(() => undefined)))).filter(
      (task): task is TaskView => task !== undefined,
    );
    const items = tasks
      .map(({ events: _events, next_after: _next, ...task }) => task as TaskRow)
      .filter((task) => (filter.status === undefined || filter.status === '' || task.status === filter.status) && matchesSearch(task, filter.search))
      .sort((a, b) => b.updated_at.localeCompare(a.updated_at))
      .slice(0, DERIVED_TASK_LIMIT);
    return { items, nextCursor: null, source: 'derived', note: `derived from the step, approval and cell lists (GET /v1/tasks is not served yet); at most ${DERIVED_TASK_LIMIT} tasks` };
  }
}
