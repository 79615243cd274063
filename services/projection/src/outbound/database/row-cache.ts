import type { EntityManager, EntitySchema } from 'typeorm';
import type { RowPlan, RowChange } from '../../application/project-event.js';
import { VIEWS, type Locator, type ViewName, type ViewRows } from '../../application/views/index.js';
import { VIEW_ENTITIES } from './entities.js';

type Row = Record<string, unknown>;
type ColumnType = 'varchar' | 'text' | 'timestamptz' | 'integer' | 'bigint' | 'jsonb' | 'boolean';

/** One view's table as the cache reads and writes it: columns in table order, their types, the primary key. */
interface Table {
  readonly view: ViewName;
  readonly name: string;
  readonly columns: readonly string[];
  readonly types: Readonly<Record<string, ColumnType>>;
  readonly primaryKey: readonly string[];
}

const TABLES = new Map<ViewName, Omit<Table, 'name'>>();

function tableOf(view: ViewName): Omit<Table, 'name'> {
  let table = TABLES.get(view);
  if (table === undefined) {
    const columns = (VIEW_ENTITIES[view] as EntitySchema).options.columns as Record<string, { type: ColumnType }>;
    table = {
      view,
      columns: Object.keys(columns),
      types: Object.fromEntries(Object.entries(columns).map(([name, column]) => [name, column.type])),
      primaryKey: VIEWS[view].primaryKey,
    };
    TABLES.set(view, table);
  }
  return table;
}

/**
 * A value as Postgres hands it back: timestamps as canonical ISO strings,
 * bigints as numbers, jsonb re-serialized with its keys in jsonb's own order
 * (shorter keys first, then bytewise). A row kept in the cache is exactly the
 * row a load from the database would return, so a fold sees the same row
 * whether the event before it committed or is still in the batch.
 */
function asStored(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return value ?? null;
  switch (type) {
    case 'timestamptz':
      return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
    case 'bigint':
      return Number(value);
    case 'jsonb':
      return jsonbOrder(JSON.parse(JSON.stringify(value)) as unknown);
    default:
      return value;
  }
}

function jsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (typeof value !== 'object' || value === null) return value;
  const keys = Object.keys(value).sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return Object.fromEntries(keys.map((key) => [key, jsonbOrder((value as Row)[key])]));
}

function stored(table: Omit<Table, 'name'>, row: Row): Row {
  return Object.fromEntries(table.columns.map((column) => [column, asStored(table.types[column] ?? 'text', row[column])]));
}

/** Primary-key order, bytewise (ids are ASCII, so this is the C collation's order). */
function comparePk(primaryKey: readonly string[], a: Row, b: Row): number {
  for (const column of primaryKey) {
    const x = a[column];
    const y = b[column];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

const keyOf = (primaryKey: readonly string[], row: Row): string => JSON.stringify(primaryKey.map((column) => row[column]));
const matches = (row: Row, locator: Locator): boolean => Object.entries(locator).every(([column, value]) => row[column] === value);
const isPrimaryKey = (primaryKey: readonly string[], locator: Locator): boolean =>
  primaryKey.length === Object.keys(locator).length && primaryKey.every((column) => Object.hasOwn(locator, column));

/**
 * The rows one projection transaction reads and writes, kept in memory
 * until the commit: rows are read once (and, with `prefetch`, for a whole
 * batch of events in one query per view), changes are written back in one
 * multi-row upsert per view just before the commit. Loads answer exactly as
 * the database would after each save: the first row matching the locator in
 * primary-key order, this transaction's own writes included.
 *
 * A locator that is the primary key is answered from the cache (a row, or
 * known absent). Another locator is answered from the cache when its first
 * column's value was prefetched in full (every row with `task_id = X`),
 * else from the database merged with the cache's newer versions.
 */
export class RowCache {
  private readonly rows = new Map<ViewName, Map<string, Row | null>>();
  private readonly dirty = new Map<ViewName, Set<string>>();
  /** `${column}\u0000${JSON value}`: every row with that value is in the cache. */
  private readonly complete = new Map<ViewName, Set<string>>();

  constructor(
    private readonly manager: EntityManager,
    private readonly schema: string,
  ) {}

  private table(view: ViewName): Table {
    return { ...tableOf(view), name: `"${this.schema}"."${view}"` };
  }

  private cached(view: ViewName): Map<string, Row | null> {
    let rows = this.rows.get(view);
    if (rows === undefined) {
      rows = new Map();
      this.rows.set(view, rows);
    }
    return rows;
  }

  /** Keeps rows read from the database, unless the cache knows a row already (this transaction's version is the newer one). */
  private remember(table: Table, dbRows: readonly Row[]): void {
    const cache = this.cached(table.view);
    for (const dbRow of dbRows) {
      const row = stored(table, dbRow);
      const key = keyOf(table.primaryKey, row);
      if (!cache.has(key)) cache.set(key, row);
    }
  }

  /** Reads, in one query per view, every row the plans name by primary key, and every row sharing the first column of their other locators. */
  async prefetch(plans: readonly RowPlan[]): Promise<void> {
    const byView = new Map<ViewName, { keys: Locator[]; complete: Map<string, Set<string | number>> }>();
    for (const { view, locator } of plans) {
      const table = tableOf(view);
      const entry = byView.get(view) ?? { keys: [] as Locator[], complete: new Map<string, Set<string | number>>() };
      byView.set(view, entry);
      if (isPrimaryKey(table.primaryKey, locator)) {
        if (!this.cached(view).has(keyOf(table.primaryKey, locator))) entry.keys.push(locator);
        continue;
      }
      const [column, value] = Object.entries(locator)[0] ?? [];
      if (column === undefined || value === undefined || this.complete.get(view)?.has(`${column}\u0000${JSON.stringify(value)}`)) continue;
      const values = entry.complete.get(column) ?? new Set();
      values.add(value);
      entry.complete.set(column, values);
    }
    for (const [view, { keys, complete }] of byView) {
      const table = this.table(view);
      if (keys.length > 0) {
        const unique = [...new Map(keys.map((k) => [keyOf(table.primaryKey, k), k])).values()];
        const params: unknown[] = [];
        const tuples = unique.map((locator) => `(${table.primaryKey.map((column) => `$${params.push(locator[column])}`).join(', ')})`);
        const found: Row[] = await this.manager.query(`SELECT * FROM ${table.name} WHERE (${table.primaryKey.map((c) => `"${c}"`).join(', ')}) IN (${tuples.join(', ')})`, params);
        this.remember(table, found);
        const cache = this.cached(view);
        for (const locator of unique) {
          const key = keyOf(table.primaryKey, locator);
          if (!cache.has(key)) cache.set(key, null);
        }
      }
      for (const [column, values] of complete) {
        const found: Row[] = await this.manager.query(`SELECT * FROM ${table.name} WHERE "${column}" = ANY($1)`, [[...values]]);
        this.remember(table, found);
        const marks = this.complete.get(view) ?? new Set();
        for (const value of values) marks.add(`${column}\u0000${JSON.stringify(value)}`);
        this.complete.set(view, marks);
      }
    }
  }

  async load<K extends ViewName>(view: K, locator: Locator): Promise<ViewRows[K] | undefined> {
    const table = this.table(view);
    const cache = this.cached(view);
    if (isPrimaryKey(table.primaryKey, locator)) {
      const key = keyOf(table.primaryKey, locator);
      if (!cache.has(key)) {
        const params: unknown[] = [];
        const where = table.primaryKey.map((column) => `"${column}" = $${params.push(locator[column])}`).join(' AND ');
        this.remember(table, await this.manager.query(`SELECT * FROM ${table.name} WHERE ${where}`, params));
        if (!cache.has(key)) cache.set(key, null);
      }
      return (cache.get(key) ?? undefined) as ViewRows[K] | undefined;
    }
    const known = Object.entries(locator).some(([column, value]) => this.complete.get(view)?.has(`${column}\u0000${JSON.stringify(value)}`));
    if (!known) {
      const params: unknown[] = [];
      const where = Object.entries(locator)
        .map(([column, value]) => `"${column}" = $${params.push(value)}`)
        .join(' AND ');
      this.remember(table, await this.manager.query(`SELECT * FROM ${table.name} WHERE ${where}`, params));
    }
    const candidates = [...cache.values()].filter((row): row is Row => row !== null && matches(row, locator));
    candidates.sort((a, b) => comparePk(table.primaryKey, a, b));
    return candidates[0] as ViewRows[K] | undefined;
  }

  save(change: RowChange): void {
    const table = tableOf(change.view);
    const row = stored(table, change.row as unknown as Row);
    const key = keyOf(table.primaryKey, row);
    this.cached(change.view).set(key, row);
    const dirty = this.dirty.get(change.view) ?? new Set();
    dirty.add(key);
    this.dirty.set(change.view, dirty);
  }

  /** Writes every changed row, one multi-row upsert per view (in chunks that stay under Postgres's parameter limit). */
  async flush(): Promise<void> {
    for (const [view, keys] of this.dirty) {
      const table = this.table(view);
      const cache = this.cached(view);
      const rows = [...keys].map((key) => cache.get(key)).filter((row): row is Row => row !== null && row !== undefined);
      const chunk = Math.max(1, Math.floor(30_000 / table.columns.length));
      const columns = table.columns.map((c) => `"${c}"`).join(', ');
      const updates = table.columns.filter((c) => !table.primaryKey.includes(c)).map((c) => `"${c}" = EXCLUDED."${c}"`);
      const conflict = `ON CONFLICT (${table.primaryKey.map((c) => `"${c}"`).join(', ')}) ${updates.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${updates.join(', ')}`}`;
      for (let i = 0; i < rows.length; i += chunk) {
        const params: unknown[] = [];
        const values = rows
          .slice(i, i + chunk)
          .map((row) => `(${table.columns.map((column) => `$${params.push(table.types[column] === 'jsonb' ? JSON.stringify(row[column]) : row[column])}`).join(', ')})`)
          .join(', ');
        await this.manager.query(`INSERT INTO ${table.name} (${columns}) VALUES ${values} ${conflict}`, params);
      }
    }
    this.dirty.clear();
  }
}
