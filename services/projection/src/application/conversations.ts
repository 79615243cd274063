import { Id, TASK_TERMINAL_STATES, type ConversationFocus, type ConversationFocusList, type ConversationHistory, type HttpReadScope } from '@writ/contracts';
import type { ArtifactReader } from './context-packs.js';
import type { ReadModel } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { parseCount } from './query-count.js';
import { DEFAULT_PAGE, MAX_PAGE } from './read-service.js';

/** Conversations listed per `GET /v1/focus`. */
const MAX_CONVERSATIONS = 200;

/**
 * `GET /v1/focus` and `GET /v1/conversations/<id>/history` (issue 17): a
 * principal's conversations as the projection folded them. Reads decide
 * nothing, and nothing in Writ decides from these: ingress binds from the
 * log. A caller that reads its own only (an agent) reads its own
 * conversations; naming another principal is PROJECTION_SCOPE_FORBIDDEN.
 */
export class ConversationReads {
  constructor(
    private readonly model: ReadModel,
    private readonly artifacts: ArtifactReader,
  ) {}

  async focus(query: { readonly principal_id?: unknown }, scope: HttpReadScope, callerId: string): Promise<ConversationFocusList> {
    const principalId = whose(query.principal_id, scope, callerId);
    const rows = await this.model.conversationFocus(principalId, MAX_CONVERSATIONS);
    const focus: ConversationFocus[] = [];
    for (const row of rows) {
      // The bindings set the focus; a focused task that has ended releases it (Hermit 13.6), as the tasks view says now.
      const task = row.bound_focus_task_id === null ? undefined : await this.model.task(row.bound_focus_task_id);
      const ended = task !== undefined && (TASK_TERMINAL_STATES as readonly string[]).includes(task.status);
      focus.push({ ...row, focus_task_id: ended ? null : row.bound_focus_task_id, last_outcome_task_id: ended ? row.bound_focus_task_id : null });
    }
    return { principal_id: principalId, focus };
  }

  async history(conversationId: string, query: { readonly principal_id?: unknown; readonly after?: unknown; readonly limit?: unknown }, scope: HttpReadScope, callerId: string): Promise<ConversationHistory> {
    if (!Id.safeParse(conversationId).success) {
      throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'the conversation id must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-"', { details: { parameter: 'id' } });
    }
    const principalId = whose(query.principal_id, scope, callerId);
    const afterSeq = parseCount(query.after, 'after', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = parseCount(query.limit, 'limit', DEFAULT_PAGE, 1, MAX_PAGE);
    const rows = await this.model.conversationMessages(principalId, conversationId, { afterSeq, limit });
    const messages = [];
    for (const row of rows) messages.push({ ...row, text: await this.#text(row.text_sha256) });
    return { principal_id: principalId, conversation_id: conversationId, messages };
  }

  /** The stored (redacted) text; null when the bucket does not hold it or cannot be read now (the row still says where the message went). */
  async #text(sha256: string): Promise<string | null> {
    try {
      const bytes = await this.artifacts.get(sha256);
      return bytes === null ? null : new TextDecoder().decode(bytes);
    } catch {
      return null;
    }
  }
}

/** Whose conversations: the one named (a wide scope, or the caller itself), else the caller's. */
function whose(named: unknown, scope: HttpReadScope, callerId: string): string {
  if (named === undefined) return callerId;
  if (typeof named !== 'string' || !Id.safeParse(named).success) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', 'principal_id must be 1-128 characters of A-Z, a-z, 0-9, "_" or "-"', { details: { parameter: 'principal_id' } });
  }
  if (scope.kind === 'own' && named !== scope.principalId) {
    throw new ProjectionError('PROJECTION_SCOPE_FORBIDDEN', `${scope.principalId} reads its own conversations only: leave out principal_id`, { details: { parameter: 'principal_id' } });
  }
  return named;
}

