import type { ProjectedEvent } from './projected-event.js';
import { VIEW_NAMES, VIEWS, type Locator, type ViewName, type ViewRows } from './views/index.js';

/** A row a view's fold created or changed. */
export type RowChange = { readonly [K in ViewName]: { readonly view: K; readonly row: ViewRows[K] } }[ViewName];

/** One row of one view the event touches. */
export type RowPlan = { readonly view: ViewName; readonly locator: Locator };

/**
 * Pure: the rows `event` touches, view by view in `VIEWS` order (only the
 * `views` given, default all), each to be loaded before it is folded. A
 * locator a view names twice for one event is planned once.
 */
export function planEvent(event: ProjectedEvent, views: readonly ViewName[] = VIEW_NAMES): RowPlan[] {
  const plans: RowPlan[] = [];
  for (const view of VIEW_NAMES) {
    if (views !== VIEW_NAMES && !views.includes(view)) continue;
    const located = VIEWS[view].locate(event);
    if (located === undefined) continue;
    const seen = new Set<string>();
    for (const locator of isLocatorList(located) ? located : [located]) {
      const key = JSON.stringify(Object.entries(locator).sort(([a], [b]) => (a < b ? -1 : 1)));
      if (seen.has(key)) continue;
      seen.add(key);
      plans.push({ view, locator });
    }
  }
  return plans;
}

function isLocatorList(located: Locator | readonly Locator[]): located is readonly Locator[] {
  return Array.isArray(located);
}

/** The row each plan loaded (same index; undefined = no such row). */
export type LoadedRows = ReadonlyArray<ViewRows[ViewName] | undefined>;

/**
 * Pure: folds `event` into the row of one plan; the change, or undefined
 * when the fold created nothing or returned the same row. A changed row of
 * a published view gets `row_version` = the event's stream sequence.
 */
export function foldPlan(event: ProjectedEvent, plan: RowPlan, before: ViewRows[ViewName] | undefined): RowChange | undefined {
  const view = VIEWS[plan.view] as unknown as { published: boolean; fold: (row: unknown, e: ProjectedEvent, locator: Locator) => ViewRows[ViewName] | undefined };
  const after = view.fold(before, event, plan.locator);
  if (after === undefined || after === before) return undefined;
  const row = withoutNul(after);
  // The row's version is the log sequence of the event that changed it (issue 16), stamped here so that a rebuild versions rows exactly as the live projector did.
  return { view: plan.view, row: view.published ? { ...row, row_version: event.streamSeq } : row } as RowChange;
}

/**
 * Pure: folds `event` into every planned row and returns the rows that
 * changed. Rows whose fold returned the same row are not changes.
 */
export function projectEvent(event: ProjectedEvent, plans: readonly RowPlan[], loaded: LoadedRows): RowChange[] {
  const changes: RowChange[] = [];
  plans.forEach((plan, index) => {
    const change = foldPlan(event, plan, loaded[index]);
    if (change !== undefined) changes.push(change);
  });
  return changes;
}

/**
 * Postgres text and jsonb cannot hold U+0000, which JSON (and so an event)
 * can: such a character would make the row unwritable and stall the
 * projector on that event forever. It is replaced by U+FFFD, here in the pure
 * part, so a rebuild writes the very same rows.
 */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return (value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => withoutNul(item)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [withoutNul(key), withoutNul(inner)])) as T;
  }
  return value;
}
