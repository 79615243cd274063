import type { ConversationFocusRow, ConversationMessageRow, ProjectionRebuildJob, QuarantineCounts, QuarantineRecord } from '@writ/contracts';
import type { RawStoredEvent } from './projected-event.js';
import type { ChangesPage, PublishedView } from '@writ/contracts/projection-rows';
import type { RowChange, RowPlan } from './project-event.js';
import type { PublishedChange } from './published-change.js';
import type { Keyset, ListFilterOf } from './list-page.js';
import type {
  ActionRow,
  ApprovalRow,
  ArtifactRow,
  AttemptRow,
  CellRow,
  DecisionRow,
  BeliefRow,
  MemoryRow,
  WorkingStateRow,
  GrantRow,
  Locator,
  PrincipalRow,
  ReceiptRow,
  StepRow,
  TaskEventRow,
  TaskRow,
  ViewName,
  ViewRows,
} from './views/index.js';

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
  /** Inserts or replaces the row (by primary key); a later `load` in this transaction sees it. */
  save(change: RowChange): Promise<void>;
  /** A hint: the rows these plans name will be loaded (an adapter may read them in bulk first). */
  prefetch?(plans: readonly RowPlan[]): Promise<void>;
  setCheckpoint(streamSeq: number): Promise<void>;
  /**
   * The highest `row_version` of each of `views` as committed (0 for an empty
   * view), read before this transaction writes: the `Writ-Prev-Version` of the
   * first change of each view it publishes.
   */
  viewVersions(views: readonly PublishedView[]): Promise<Readonly<Partial<Record<ViewName, number>>>>;
  /** Records a message of the log passed over as junk (once per stream sequence). */
  quarantine(record: QuarantineRecord): Promise<void>;
}

/** The messages of the log the projection passed over as junk: counted by reason, the latest first. */
export interface QuarantineSummary extends QuarantineCounts {
  readonly latest: readonly QuarantineRecord[];
}

export interface ViewChecksum {
  readonly rows: number;
  /** md5 over the rows' JSON in primary-key order. */
  readonly checksum: string;
}

/** The checkpoint and the checksum of each view asked for, read from one consistent snapshot. */
export interface ProjectionSnapshot {
  readonly lastSeq: number;
  readonly views: Readonly<Partial<Record<ViewName, ViewChecksum>>>;
}

export interface ProjectionStore {
  /** Runs `work` in one database transaction (all or nothing). */
  transaction<T>(work: (tx: ProjectionTx) => Promise<T>): Promise<T>;
  /** The last applied stream sequence (0 if none), without locking. */
  checkpoint(): Promise<number>;
  /** The checkpoint and the checksums of `views` (default all). */
  snapshot(views?: readonly ViewName[]): Promise<ProjectionSnapshot>;
  /** What was quarantined so far (the `latest` few records). */
  quarantined(latest: number): Promise<QuarantineSummary>;
}

/** A message as the durable consumer delivered it: where, and its bytes (which the log vouches for, or replaces). */
export interface DeliveredMessage {
  readonly subject: string;
  readonly streamSeq: number;
  readonly data: Uint8Array;
}

/** The event log, read-only. */
export interface EventLog {
  /**
   * Every message from `fromStreamSeq` to the end of the log as it was when
   * the replay started, in stream order: events, and junk with its
   * `quarantined` record (every position, so the checkpoint moves past junk).
   */
  replay(fromStreamSeq: number): AsyncIterable<RawStoredEvent>;
  /** The message delivered at `streamSeq` on `subject`, judged as the replay judges it. */
  entryAt(subject: string, streamSeq: number): Promise<RawStoredEvent>;
  /**
   * A consumer's delivery of consecutive stream sequences (every message the
   * log stores there), with the delivered bytes, judged as `entryAt` judges
   * each, in the same order.
   */
  entriesOf(run: readonly DeliveredMessage[]): Promise<RawStoredEvent[]>;
  /** The log's last stream sequence (0 when empty). */
  lastSeq(): Promise<number>;
  /** When the log stored the event at `streamSeq` (its stream timestamp), or undefined when there is none. */
  storedAt(streamSeq: number): Promise<Date | undefined>;
}

/** A fresh, migrated projection in its own schema, to rebuild into and swap in. */
export interface RebuildTarget {
  readonly schema: string;
  readonly store: ProjectionStore;
  /**
   * Swaps the tables of `views` in, in one transaction that first locks the
   * live checkpoint against the projector (readers go on): `settle` gets the
   * live checkpoint and must bring `store` exactly to it; then each live table
   * moves out (into `<live schema>_old_<UTC yyyymmddhhmmss of at>` when
   * `keepOld`, else dropped) and the target's moves in. The live checkpoint
   * stays where it is, so the projector continues from it, on the rebuilt rows.
   */
  swapIn(
    views: readonly ViewName[],
    options: { readonly keepOld: boolean; readonly at: Date },
    settle: (liveCheckpoint: number) => Promise<void>,
  ): Promise<{ readonly checkpoint: number; readonly oldSchema: string | null }>;
  /** Drops the target schema with whatever is left in it. */
  discard(): Promise<void>;
}

export interface RebuildTargets {
  create(): Promise<RebuildTarget>;
}

/** Held by the one rebuild running against a live projection. */
export interface RebuildLock {
  release(): Promise<void>;
}

/** Rebuild jobs, recorded beside the live projection so that any instance answers for them. */
export interface RebuildJobStore {
  /** The one-rebuild-at-a-time lock (held until released or the process dies), or undefined when another holds it. */
  tryLock(): Promise<RebuildLock | undefined>;
  /** Whether some process holds the lock. */
  locked(): Promise<boolean>;
  save(job: ProjectionRebuildJob): Promise<void>;
  get(jobId: string): Promise<ProjectionRebuildJob | undefined>;
  latest(): Promise<ProjectionRebuildJob | undefined>;
  /** Jobs recorded as running. */
  running(): Promise<ProjectionRebuildJob[]>;
}

/** Publishes changed rows on `<root>.proj.<view>.<id>` with their headers (core NATS, best effort, after commit), and tells the in-process change stream. */
export interface UpdatePublisher {
  publish(changes: readonly PublishedChange[]): void;
}

/** A read of the changes feed: whose rows, after which version, how many. */
export interface ChangesQuery {
  /** Rows with `row_version > since`. */
  readonly since: number;
  /** Published views to read, in the order ties are listed. */
  readonly views: readonly PublishedView[];
  /** Versions (not rows) to aim for: a page ends at the version of the `limit`-th row and holds every row of that version. */
  readonly limit: number;
  /** Only rows this principal may read (`httpReadScope` own); undefined: every row. */
  readonly owner: string | undefined;
}

/** The changes feed over the read models (`GET /v1/changes`, the SSE stream). */
export interface ChangeFeed {
  /** One page, read from one snapshot with the checkpoint (docs/dashboard-contract.md). */
  changes(query: ChangesQuery): Promise<ChangesPage>;
  /** The last applied stream sequence, without locking. */
  checkpoint(): Promise<number>;
}

/** Request/reply to another service; a remote failure is a `WritError` carrying the remote code. */
export interface Upstream {
  request(subject: string, payload: unknown): Promise<unknown>;
}

/**
 * One page of a list: rows matching `filter`, in the list's order, strictly
 * after `after`, at most `limit`. `visibleTo` narrows it to one principal's
 * own rows (an agent's scope): the tasks it owns and what belongs to them
 * (for actions, also those it proposed), as the single reads decide.
 */
export interface ListRequest<Filter> {
  readonly filter: Filter;
  readonly visibleTo: string | undefined;
  readonly after: Keyset | undefined;
  readonly limit: number;
}

/** The queries of the HTTP API. */
export interface ReadModel {
  action(actionRequestId: string): Promise<ActionRow | undefined>;
  task(taskId: string): Promise<TaskRow | undefined>;
  taskEvents(taskId: string, page: { readonly afterSeq: number; readonly limit: number }): Promise<TaskEventRow[]>;
  /** Newest first, by (created_at, task_id). */
  listTasks(request: ListRequest<ListFilterOf<'tasks'>>): Promise<TaskRow[]>;
  /** Newest first, by (created_at, action_request_id). */
  listActions(request: ListRequest<ListFilterOf<'actions'>>): Promise<ActionRow[]>;
  /** The inbox: oldest request first, by (requested_at, approval_id). */
  listApprovals(request: ListRequest<ListFilterOf<'approvals'>>): Promise<ApprovalRow[]>;
  /** Newest first, by (created_at, receipt_id). */
  listReceipts(request: ListRequest<ListFilterOf<'receipts'>>): Promise<ReceiptRow[]>;
  /** Newest first, by (created_at, cell_id). */
  listCells(request: ListRequest<ListFilterOf<'cells'>>): Promise<CellRow[]>;
  approval(approvalId: string): Promise<ApprovalRow | undefined>;
  /** The task's events about one approval and the `decision.recorded` events whose `subject_ref` is `approval:<id>`, in task order. */
  approvalEvents(taskId: string, approvalId: string): Promise<TaskEventRow[]>;
  receipt(receiptId: string): Promise<ReceiptRow | undefined>;
  grant(grantId: string): Promise<GrantRow | undefined>;
  servicePrincipals(): Promise<PrincipalRow[]>;
  principal(principalId: string): Promise<PrincipalRow | undefined>;
  /** Grants by status and task, newest issue first. */
  grants(filter: { readonly status: string | undefined; readonly taskId: string | undefined; readonly limit: number }): Promise<GrantRow[]>;
  /** The step queue: by status and task, oldest planned first. */
  steps(filter: { readonly status: string | undefined; readonly taskId: string | undefined; readonly limit: number }): Promise<StepRow[]>;
  step(stepId: string): Promise<StepRow | undefined>;
  /** A step's attempts, by attempt number. */
  stepAttempts(stepId: string): Promise<AttemptRow[]>;
  attempt(attemptId: string): Promise<AttemptRow | undefined>;
  /** The catalog: by task and kind, in task order. */
  artifacts(filter: { readonly taskId: string | undefined; readonly kind: string | undefined; readonly limit: number }): Promise<ArtifactRow[]>;
  artifact(artifactId: string): Promise<ArtifactRow | undefined>;
  /** A task's decision timeline after `afterSeq`, in task order. */
  decisions(taskId: string, page: { readonly afterSeq: number; readonly limit: number }): Promise<DecisionRow[]>;
  cell(cellId: string): Promise<CellRow | undefined>;
  /** A task's working state, when it has one. */
  workingState(taskId: string): Promise<WorkingStateRow | undefined>;
  /** A task's beliefs in assertion order, optionally of one status. */
  beliefs(taskId: string, filter: { readonly status: string | undefined }): Promise<BeliefRow[]>;
  /** A memory record, when the projection holds one. */
  memoryRecord(memoryId: string): Promise<MemoryRow | undefined>;
  /** Memory records newest first (at most `limit`), filtered by status, scope, promoting task and promoter. */
  memoryRecords(filter: { readonly status?: string; readonly scope?: string; readonly taskId?: string; readonly promotedBy?: string; readonly limit: number }): Promise<MemoryRow[]>;
  /** A principal's conversations and the focus in each, most recently changed first (at most `limit`). */
  conversationFocus(principalId: string, limit: number): Promise<ConversationFocusRow[]>;
  /** One principal's conversation, in conversation order after `afterSeq` (at most `limit`). */
  conversationMessages(principalId: string, conversationId: string, page: { readonly afterSeq: number; readonly limit: number }): Promise<ConversationMessageRow[]>;
  /** Rows per view, without checksums (cheap). */
  viewRows(): Promise<Readonly<Record<ViewName, number>>>;
  /** Resolves when the database answers. */
  ping(): Promise<void>;
}
