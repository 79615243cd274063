import type { ProjectedEvent } from './projected-event.js';
import { VIEW_NAMES, VIEWS, type Locator, type ViewName, type ViewRows } from './views/index.js';

/** A row a view's fold created or changed. */
export type RowChange = { readonly [K in ViewName]: { readonly view: K; readonly row: ViewRows[K] } }[ViewName];

/** Which row of which view the event touches (at most one per view). */
export type RowPlan = { readonly view: ViewName; readonly locator: Locator };

/** Pure: the rows `event` touches, to be loaded before `projectEvent`. */
export function planEvent(event: ProjectedEvent): RowPlan[] {
  const plans: RowPlan[] = [];
  for (const view of VIEW_NAMES) {
    const locator = VIEWS[view].locate(event);
    if (locator !== undefined) plans.push({ view, locator });
  }
  return plans;
}

/** The loaded rows of a plan, by view (absent = no such row). */
export type LoadedRows = { readonly [K in ViewName]?: ViewRows[K] };

/**
 * Pure: folds `event` into every view whose row it touches and returns the
 * rows that changed. Rows whose fold returned the same row are not changes.
 */
export function projectEvent(event: ProjectedEvent, plans: readonly RowPlan[], loaded: LoadedRows): RowChange[] {
  const changes: RowChange[] = [];
  for (const { view } of plans) changes.push(...foldView(view, event, loaded));
  return changes;
}

function foldView<K extends ViewName>(view: K, event: ProjectedEvent, loaded: LoadedRows): RowChange[] {
  const before = loaded[view] as ViewRows[K] | undefined;
  const after = (VIEWS[view] as unknown as { fold: (row: ViewRows[K] | undefined, e: ProjectedEvent) => ViewRows[K] | undefined }).fold(before, event);
  if (after === undefined || after === before) return [];
  return [{ view, row: withoutNul(after) } as RowChange];
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
