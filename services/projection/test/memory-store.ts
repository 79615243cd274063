import { applyEvent } from '../src/application/apply-event.js';
import type { QuarantineRecord } from '@writ/contracts';
import type { DeliveredMessage, EventLog, ProjectionSnapshot, ProjectionStore, ProjectionTx, QuarantineSummary, ViewChecksum } from '../src/application/ports.js';
import type { ProjectedEvent, RawStoredEvent } from '../src/application/projected-event.js';
import type { RowChange } from '../src/application/project-event.js';
import { VIEW_NAMES, VIEWS, type Locator, type ViewName, type ViewRows } from '../src/application/views/index.js';

type Row = Record<string, unknown>;

function keyOf(view: ViewName, row: Row): string {
  return VIEWS[view].primaryKey.map((column) => String(row[column])).join('\u0001');
}

/**
 * The projection store port in memory, for unit tests of the application:
 * same contract as the Postgres adapter (first match in primary-key order,
 * upsert by primary key, all-or-nothing transactions), no Postgres.
 */
export class MemoryProjectionStore implements ProjectionStore {
  tables = new Map<ViewName, Map<string, Row>>(VIEW_NAMES.map((view) => [view, new Map()]));
  lastSeq = 0;
  /** Quarantine records by stream sequence. */
  quarantine = new Map<number, QuarantineRecord>();
  /** Fails the next transactions with this error (a database outage). */
  failWith: Error | undefined;

  async transaction<T>(work: (tx: ProjectionTx) => Promise<T>): Promise<T> {
    if (this.failWith !== undefined) throw this.failWith;
    const tables = new Map([...this.tables].map(([view, rows]) => [view, new Map(rows)]));
    let lastSeq = this.lastSeq;
    const quarantine = new Map(this.quarantine);
    const tx: ProjectionTx = {
      lockCheckpoint: async () => lastSeq,
      load: async <K extends ViewName>(view: K, locator: Locator) => {
        const rows = [...(tables.get(view)?.values() ?? [])]
          .filter((row) => Object.entries(locator).every(([column, value]) => row[column] === value))
          .sort((a, b) => (keyOf(view, a) < keyOf(view, b) ? -1 : 1));
        return rows[0] as ViewRows[K] | undefined;
      },
      save: async (change: RowChange) => {
        tables.get(change.view)?.set(keyOf(change.view, change.row as unknown as Row), structuredClone(change.row) as unknown as Row);
      },
      setCheckpoint: async (seq: number) => {
        lastSeq = seq;
      },
      // The committed rows (as Postgres answers before the commit's writes).
      viewVersions: async (views: readonly ViewName[]) =>
        Object.fromEntries(views.map((view) => [view, Math.max(0, ...[...(this.tables.get(view)?.values() ?? [])].map((row) => Number(row['row_version'] ?? 0)))])),
      quarantine: async (record: QuarantineRecord) => {
        if (!quarantine.has(record.stream_seq)) quarantine.set(record.stream_seq, record);
      },
    };
    const result = await work(tx);
    this.tables = tables;
    this.lastSeq = lastSeq;
    this.quarantine = quarantine;
    return result;
  }

  async quarantined(latest: number): Promise<QuarantineSummary> {
    const records = [...this.quarantine.values()].sort((a, b) => b.stream_seq - a.stream_seq);
    const byReason: Record<string, number> = {};
    for (const record of records) byReason[record.reason] = (byReason[record.reason] ?? 0) + 1;
    return { total: records.length, by_reason: byReason, latest: records.slice(0, latest) };
  }

  async checkpoint(): Promise<number> {
    return this.lastSeq;
  }

  async snapshot(only: readonly ViewName[] = VIEW_NAMES): Promise<ProjectionSnapshot> {
    const views: Partial<Record<ViewName, ViewChecksum>> = {};
    for (const view of only) {
      const rows = [...(this.tables.get(view)?.entries() ?? [])].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
      views[view] = { rows: rows.length, checksum: JSON.stringify(rows) };
    }
    return { lastSeq: this.lastSeq, views };
  }

  rows<K extends ViewName>(view: K): ViewRows[K][] {
    return [...(this.tables.get(view)?.values() ?? [])] as unknown as ViewRows[K][];
  }

  row<K extends ViewName>(view: K, ...key: Array<string | number>): ViewRows[K] | undefined {
    return this.tables.get(view)?.get(key.map(String).join('\u0001')) as ViewRows[K] | undefined;
  }
}

/** The log in memory: events in stream order, each stored at `storedAt` (default: the epoch plus its sequence in seconds). */
export class MemoryLog implements EventLog {
  constructor(
    readonly events: RawStoredEvent[],
    private readonly stored: (streamSeq: number) => Date = (seq) => new Date(seq * 1000),
  ) {}

  async *replay(from: number): AsyncGenerator<RawStoredEvent> {
    for (const event of [...this.events]) if (event.streamSeq >= from) yield event;
  }

  async entryAt(subject: string, streamSeq: number): Promise<RawStoredEvent> {
    const event = this.events.find((e) => e.streamSeq === streamSeq && e.subject === subject);
    if (event === undefined) throw Object.assign(new Error(`no message at ${streamSeq}`), { code: 'PROJECTION_LOG_UNAVAILABLE' });
    return event;
  }

  /** Judged one by one (`entryAt`); counted, so a test can tell a run was judged in one call. */
  async entriesOf(run: readonly DeliveredMessage[]): Promise<RawStoredEvent[]> {
    this.runsJudged += 1;
    return Promise.all(run.map((message) => this.entryAt(message.subject, message.streamSeq)));
  }

  runsJudged = 0;

  async lastSeq(): Promise<number> {
    return this.events.at(-1)?.streamSeq ?? 0;
  }

  async storedAt(streamSeq: number): Promise<Date | undefined> {
    return this.events.some((e) => e.streamSeq === streamSeq) ? this.stored(streamSeq) : undefined;
  }
}

/** Folds `events` (stream order, contiguous from 1) into a fresh memory store. */
export async function foldStory(events: readonly ProjectedEvent[]): Promise<MemoryProjectionStore> {
  const store = new MemoryProjectionStore();
  for (const event of events) {
    const outcome = await applyEvent(store, event.streamSeq, event);
    if (outcome.kind !== 'applied') throw new Error(`event ${event.streamSeq} was ${outcome.kind}`);
  }
  return store;
}

/** The status of the action after each event, for status-sequence assertions (consecutive repeats collapsed). */
export async function statusTrail(events: readonly ProjectedEvent[], actionRequestId: string): Promise<string[]> {
  const store = new MemoryProjectionStore();
  const trail: string[] = [];
  for (const event of events) {
    await applyEvent(store, event.streamSeq, event);
    const status = store.row('actions', actionRequestId)?.status;
    if (status !== undefined && trail.at(-1) !== status) trail.push(status);
  }
  return trail;
}
