import type { PublishedView } from '@writ/contracts/projection-rows';
import type { RowChange } from './project-event.js';
import { VIEWS, type ViewName } from './views/index.js';

/**
 * A changed row as dashboards receive it (`<root>.proj.<view>.<id>` and its
 * headers, docs/dashboard-contract.md): the row, its version, and what lets
 * a reader tell that it missed something — the version the view had before
 * (`prevVersion`) and how many of the view's rows this version changed
 * (`versionRows`).
 */
export interface PublishedChange {
  readonly view: PublishedView;
  /** The `<id>` of the row's subject. */
  readonly id: string;
  readonly row: Readonly<Record<string, unknown>>;
  readonly rowVersion: number;
  /** The previous version that changed a row of this view (0: none). */
  readonly prevVersion: number;
  readonly versionRows: number;
}

/** The published views among `views`. */
export function publishedViews(views: Iterable<ViewName>): PublishedView[] {
  return [...new Set(views)].filter((view): view is PublishedView => VIEWS[view].published);
}

/**
 * Pure: the changes of one transaction as they are published, in commit
 * order. `before` is each published view's highest `row_version` before the
 * transaction (its committed rows: views only grow), so the chain of
 * `prevVersion`s of a view is unbroken across transactions, processes and
 * restarts — it is read from the database, not remembered.
 */
export function sequenceChanges(changes: readonly RowChange[], before: Readonly<Partial<Record<ViewName, number>>>): PublishedChange[] {
  const published: Array<{ view: PublishedView; id: string; row: Record<string, unknown>; rowVersion: number }> = [];
  for (const change of changes) {
    const view = VIEWS[change.view] as unknown as { published: boolean; topicId: (row: unknown) => string };
    if (!view.published) continue;
    const row = change.row as unknown as Record<string, unknown>;
    published.push({ view: change.view as PublishedView, id: view.topicId(row), row, rowVersion: Number(row['row_version']) });
  }
  const counts = new Map<string, number>();
  for (const change of published) counts.set(`${change.view}\u0000${change.rowVersion}`, (counts.get(`${change.view}\u0000${change.rowVersion}`) ?? 0) + 1);
  // Per view: the version before the current one, and the current one.
  const chain = new Map<PublishedView, { prev: number; current: number }>();
  return published.map((change) => {
    let link = chain.get(change.view);
    if (link === undefined) {
      link = { prev: before[change.view] ?? 0, current: change.rowVersion };
      chain.set(change.view, link);
    } else if (change.rowVersion !== link.current) {
      link = { prev: link.current, current: change.rowVersion };
      chain.set(change.view, link);
    }
    return { ...change, prevVersion: link.prev, versionRows: counts.get(`${change.view}\u0000${change.rowVersion}`) ?? 1 };
  });
}
