import type { ProjectedEvent } from '../projected-event.js';

/** The read models, named as their tables and their `<root>.proj.<view>.<id>` topics. */
export type ViewName =
  | 'actions'
  | 'tasks'
  | 'task_events'
  | 'approvals'
  | 'grants'
  | 'receipts'
  | 'principals'
  | 'steps'
  | 'attempts'
  | 'artifacts'
  | 'decisions'
  | 'cells'
  | 'working_states'
  | 'beliefs'
  | 'memory'
  | 'conversation_focus'
  | 'conversation_messages';

/**
 * A row as a fold builds it. A published view's `row_version` (the log
 * sequence of the last event applied to the row) is not the fold's to
 * choose: `foldPlan` stamps it from the event, so every fold, live or in a
 * rebuild, versions rows the same way. A fold may leave it out of a new row;
 * a row it patches keeps the one it had until the stamp.
 */
export type Folded<Row> = Row extends { readonly row_version: number } ? Omit<Row, 'row_version'> & { readonly row_version?: number } : Row;

/** Which row of a view an event touches: column = value conditions (the first match in primary-key order). */
export type Locator = Readonly<Record<string, string | number>>;

/**
 * One read model as pure functions. `locate` names the rows an event touches
 * (usually one; a list when one event describes several, e.g. the artifacts
 * of an execution; none), `fold` turns the row before (undefined when absent)
 * into the row after for one of those locators, returning `row` itself when
 * nothing changes. Every bit of projection logic lives here, so the live
 * projector and a rebuild from the log produce identical rows (invariant 2).
 */
export interface View<Row extends object> {
  readonly name: ViewName;
  /** Columns of the primary key, in order. */
  readonly primaryKey: readonly (keyof Row & string)[];
  /** Whether changed rows are published on `<root>.proj.<view>.<id>`. */
  readonly published: boolean;
  /** The `<id>` of the row's topic. */
  readonly topicId: (row: Row) => string;
  readonly locate: (event: ProjectedEvent) => Locator | readonly Locator[] | undefined;
  /** `locator` is the one `locate` returned that this row was loaded by (the projector always passes it). */
  readonly fold: (row: Row | undefined, event: ProjectedEvent, locator?: Locator) => Folded<Row> | undefined;
}

/**
 * `row` with `changes` applied, and `updated_at` = `at` only when a value
 * actually changed; `row` itself otherwise (so no-op events publish nothing).
 */
export function patch<Row extends { readonly updated_at: string }>(row: Row, changes: Partial<Row>, at: string): Row {
  const changed = (Object.keys(changes) as (keyof Row)[]).some((key) => !sameValue(row[key], changes[key]));
  return changed ? { ...row, ...changes, updated_at: at } : row;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null) return JSON.stringify(a) === JSON.stringify(b);
  return false;
}
