import { ApiError, hasCode } from './api-error.js';
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
  BeliefRow,
  StepRow,
  StepView,
  TaskEventRow,
  TaskRow,
  TaskView,
  WorkingStateRow,
  ConversationFocusRow,
  ConversationMessageRow,
  MemoryRow,
} from './rows.js';

/**
 * Every call the console makes to the projection's API, in one small module:
 * the pages never build a URL themselves.
 */

export interface Listed<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

export type InclusionAnswer = { readonly kind: 'proof'; readonly proof: Json; readonly tree_head: Json } | { readonly kind: 'not_served' } | { readonly kind: 'not_yet' };

export interface TaskFilter {
  readonly status?: string;
  /** Matched by the API (`q`) against id, title, goal, owner and profile. */
  readonly search?: string;
  readonly cursor?: string;
}

/** A route the server does not have (yet): the projection's 404 PROJECTION_ROUTE_NOT_FOUND. */
export function isMissingRoute(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && hasCode(error, 'PROJECTION_ROUTE_NOT_FOUND');
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

  /** Every step of a task with its attempts (one list, then each step's view). */
  async stepViews(taskId: string): Promise<readonly StepView[]> {
    return Promise.all((await this.steps({ taskId })).map((step) => this.step(step.step_id)));
  }

  /** The task's working state, or null before its first revision (the projection's 404 PROJECTION_NOT_FOUND). */
  workingState(taskId: string): Promise<WorkingStateRow | null> {
    return this.http
      .get<WorkingStateRow>(`/v1/tasks/${encodeURIComponent(taskId)}/working-state`)
      .catch((error: unknown) => (hasCode(error, 'PROJECTION_NOT_FOUND') ? null : Promise.reject(error)));
  }

  async beliefs(taskId: string): Promise<readonly BeliefRow[]> {
    return (await this.http.get<{ beliefs: readonly BeliefRow[] }>(`/v1/tasks/${encodeURIComponent(taskId)}/beliefs`)).beliefs;
  }

  /** Durable memory records, newest first (an agent: the ones it promoted). */
  async memory(status?: string): Promise<readonly MemoryRow[]> {
    return (await this.http.get<{ memory: readonly MemoryRow[] }>('/v1/memory', { status, limit: 200 })).memory;
  }

  memoryRecord(id: string): Promise<MemoryRow> {
    return this.http.get(`/v1/memory/${encodeURIComponent(id)}`);
  }

  /** Each conversation's focus of `of` (default the signed-in principal; a director may name any). */
  focus(of?: string): Promise<{ readonly principal_id: string; readonly focus: readonly ConversationFocusRow[] }> {
    return this.http.get('/v1/focus', { principal_id: of });
  }

  /** A conversation's messages, in order, each with where it was bound (the session history is this projection). */
  conversation(id: string, of?: string): Promise<{ readonly principal_id: string; readonly messages: readonly ConversationMessageRow[] }> {
    return this.http.get(`/v1/conversations/${encodeURIComponent(id)}/history`, { principal_id: of });
  }

  /** The context pack an attempt was proposed under, as the projection serves its stored bytes (checked against the hash the log recorded). */
  contextPack(attemptId: string): Promise<Json> {
    return this.http.get(`/v1/attempts/${encodeURIComponent(attemptId)}/context`);
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

  /** Tasks, newest first: `GET /v1/tasks?status=&q=&cursor=` (the API scopes it: an agent sees its own). */
  async listTasks(filter: TaskFilter): Promise<Listed<TaskRow>> {
    const search = filter.search?.trim();
    const page = await this.http.get<Page<TaskRow>>('/v1/tasks', {
      status: filter.status === '' ? undefined : filter.status,
      q: search === '' ? undefined : search,
      cursor: filter.cursor,
      limit: 100,
    });
    return { items: page.items, nextCursor: page.next_cursor };
  }
}
