import type { HttpReadScope } from '@writ/contracts';
import { CHANGES_DEFAULT_LIMIT, CHANGES_MAX_LIMIT, PUBLISHED_VIEWS, PublishedView, type ChangesPage } from '@writ/contracts/projection-rows';
import type { ChangeFeed, ChangesQuery } from './ports.js';
import { ProjectionError } from './projection-errors.js';
import { parseCount } from './query-count.js';

/** What `?since=&views=&limit=` (and `Last-Event-ID`) ask for, checked. */
export interface ChangesRequest {
  readonly since: number;
  readonly views: readonly PublishedView[];
  readonly limit: number;
}

/**
 * `GET /v1/changes`: the rows changed after a version, for a dashboard that
 * starts late or lost its subscription (docs/dashboard-contract.md). The
 * same scope as every read: a director, operator or observer reads every
 * row; anyone else (every agent) only its own — the rows `ReadService` would
 * answer it one by one — and never learns that others exist (their rows are
 * simply not in the feed).
 */
export class ChangesService {
  constructor(private readonly feed: ChangeFeed) {}

  /** Parses the query; `lastEventId` (the SSE `Last-Event-ID` header) wins over `since`: it is where a reconnecting EventSource stopped. */
  request(query: { readonly since?: unknown; readonly views?: unknown; readonly limit?: unknown }, lastEventId?: string): ChangesRequest {
    const since = lastEventId === undefined || lastEventId === '' ? version(query.since, 'since') : version(lastEventId, 'Last-Event-ID');
    return { since, views: views(query.views), limit: parseCount(query.limit, 'limit', CHANGES_DEFAULT_LIMIT, 1, CHANGES_MAX_LIMIT) };
  }

  page(request: ChangesRequest, scope: HttpReadScope): Promise<ChangesPage> {
    return this.feed.changes(feedQuery(request, scope));
  }
}

/** The feed's query for a request and a caller's scope. */
export function feedQuery(request: ChangesRequest, scope: HttpReadScope): ChangesQuery {
  return { since: request.since, views: request.views, limit: request.limit, owner: scope.kind === 'all' ? undefined : scope.principalId };
}

function version(value: unknown, name: string): number {
  if (value === undefined) return 0;
  return parseCount(value, name, 0, 0, Number.MAX_SAFE_INTEGER);
}


/** `views=actions,tasks` → those views in the feed's order; absent → every published view. */
function views(value: unknown): PublishedView[] {
  if (value === undefined || value === '') return [...PUBLISHED_VIEWS];
  const names = typeof value === 'string' ? value.split(',') : [];
  const parsed = names.map((name) => PublishedView.safeParse(name.trim()));
  if (names.length === 0 || parsed.some((result) => !result.success)) {
    throw new ProjectionError('PROJECTION_REQUEST_INVALID', `views must be a comma-separated list of ${PUBLISHED_VIEWS.join(', ')}`, { details: { parameter: 'views' } });
  }
  const asked = new Set(parsed.map((result) => result.data as PublishedView));
  return PUBLISHED_VIEWS.filter((view) => asked.has(view));
}
