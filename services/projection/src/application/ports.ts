import type { RawStoredEvent } from './projected-event.js';
import type { RowChange } from './project-event.js';
import type { ActionRow, ApprovalRow, GrantRow, Locator, PrincipalRow, ReceiptRow, TaskEventRow, TaskRow, ViewName, ViewRows } from './views/index.js';

/**
 * What the application needs from the outside, as ports: the outbound
 * adapters implement them (Postgres, the event log, NATS), and the handlers
 * stay free of NestJS, typeorm and NATS types.
 */

/** One transaction of the projection database. */
export interface ProjectionTx {
  /** Locks this projector's checkpoint row until the transaction ends; the last applied stream sequence (0 if none). */
  lockCheckpoint(): Promise<number>;
  /** The first row matching `locator` (in primary-key order), or undefined. */
  load<K extends ViewName>(view: K, locator: Locator): Promise<ViewRows[K] | undefined>;
  /** Inserts or replaces the row (by primary key). */
  save(change: RowChange): Promise<void>;
  setCheckpoint(streamSeq: number): Promise<void>;
}

export interface ViewChecksum {
  readonly rows: number;
  /** md5 over the rows' JSON in primary-key order. */
  readonly checksum: string;
}

/** The checkpoint and every view's checksum, read from one consistent snapshot. */
export interface ProjectionSnapshot {
  readonly lastSeq: number;
  readonly views: Readonly<Record<ViewName, ViewChecksum>>;
}

export interface ProjectionStore {
  /** Runs `work` in one database transaction (all or nothing). */
  transaction<T>(work: (tx: ProjectionTx) => Promise<T>): Promise<T>;
  /** The last applied stream sequence (0 if none), without locking. */
  checkpoint(): Promise<number>;
  snapshot(): Promise<ProjectionSnapshot>;
}

/** The event log, read-only. */
export interface EventLog {
  /** Every event from `fromStreamSeq` to the end of the log as it was when the replay started, in stream order. */
  replay(fromStreamSeq: number): AsyncIterable<RawStoredEvent>;
  /** The log's last stream sequence (0 when empty). */
  lastSeq(): Promise<number>;
}

/** Publishes changed rows on `<root>.proj.<view>.<id>` (core NATS, best effort, after commit). */
export interface UpdatePublisher {
  publish(changes: readonly RowChange[]): void;
}

/** Request/reply to another service; a remote failure is a `WritError` carrying the remote code. */
export interface Upstream {
  request(subject: string, payload: unknown): Promise<unknown>;
}

/** The queries of the HTTP API. */
export interface ReadModel {
  action(actionRequestId: string): Promise<ActionRow | undefined>;
  task(taskId: string): Promise<TaskRow | undefined>;
  taskEvents(taskId: string, page: { readonly afterSeq: number; readonly limit: number }): Promise<TaskEventRow[]>;
  approvals(filter: { readonly status: string | undefined; readonly limit: number }): Promise<ApprovalRow[]>;
  approval(approvalId: string): Promise<ApprovalRow | undefined>;
  /** The task's events about one approval and the `decision.recorded` events whose `subject_ref` is `approval:<id>`, in task order. */
  approvalEvents(taskId: string, approvalId: string): Promise<TaskEventRow[]>;
  receipt(receiptId: string): Promise<ReceiptRow | undefined>;
  grant(grantId: string): Promise<GrantRow | undefined>;
  servicePrincipals(): Promise<PrincipalRow[]>;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
}
