import { z } from 'zod';
import { Id } from '../ids.js';
import { ActionRowSchema } from './actions.row.js';
import { ApprovalRowSchema } from './approvals.row.js';
import { ArtifactRowSchema } from './artifacts.row.js';
import { AttemptRowSchema } from './attempts.row.js';
import { CellRowSchema } from './cells.row.js';
import { DecisionRowSchema } from './decisions.row.js';
import { GrantRowSchema } from './grants.row.js';
import { PrincipalRowSchema } from './principals.row.js';
import { ReceiptRowSchema } from './receipts.row.js';
import { RowVersion } from './row-fields.js';
import { StepRowSchema } from './steps.row.js';
import { TaskRowSchema } from './tasks.row.js';
import { BeliefRowSchema } from './beliefs.row.js';
import { MemoryRowSchema } from './memory.row.js';
import { WorkingStateRowSchema } from './working-states.row.js';

/**
 * The changes feed: `GET /v1/changes?since=<version>&views=a,b&limit=N` and
 * the SSE stream `GET /v1/changes/stream`. A change is a row as it is now in
 * the projection, with the version (`row_version`) it reached; the feed
 * lists rows with `row_version > since` in version order, so a reader that
 * resumes after the highest version it holds misses nothing.
 */

const Version = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

const change = <V extends string, R extends z.ZodType>(view: V, row: R) =>
  z.strictObject({
    view: z.literal(view),
    /** The row's topic id: the `<id>` of `<root>.proj.<view>.<id>`. */
    id: Id,
    row_version: RowVersion,
    row,
  });

/** One changed row of the feed, by view. */
export const ProjectionChangeSchema = z.discriminatedUnion('view', [
  change('actions', ActionRowSchema),
  change('tasks', TaskRowSchema),
  change('approvals', ApprovalRowSchema),
  change('grants', GrantRowSchema),
  change('receipts', ReceiptRowSchema),
  change('principals', PrincipalRowSchema),
  change('steps', StepRowSchema),
  change('attempts', AttemptRowSchema),
  change('artifacts', ArtifactRowSchema),
  change('decisions', DecisionRowSchema),
  change('cells', CellRowSchema),
  change('working_states', WorkingStateRowSchema),
  change('beliefs', BeliefRowSchema),
  change('memory', MemoryRowSchema),
]);
export type ProjectionChange = z.infer<typeof ProjectionChangeSchema>;

export const CHANGES_DEFAULT_LIMIT = 500;
export const CHANGES_MAX_LIMIT = 5_000;

/**
 * One page of `GET /v1/changes`, read from one database snapshot. A version
 * is never split across pages (every row one event changed comes in the
 * same page), so a page may hold a few more rows than `limit`.
 */
export const ChangesPageSchema = z.strictObject({
  /** Rows with `since < row_version <= next`, in (row_version, view, id) order. */
  changes: z.array(ProjectionChangeSchema),
  /**
   * Pass it as `since` next time: the last change's version while `more`;
   * once the page reached the end, the projection's checkpoint (every
   * version up to it is in this answer or changed nothing you may read), or
   * `since` itself when that is higher. (An agent's is its last row's.)
   */
  next: Version,
  /** Whether rows after `next` were left for the next page. */
  more: z.boolean(),
  /**
   * The projection's checkpoint (last stream sequence folded) in the snapshot
   * this page was read from. For a caller that reads its own rows only (an
   * agent) it is `next`: the log's position is not its to see.
   */
  checkpoint: Version,
});
export type ChangesPage = z.infer<typeof ChangesPageSchema>;

/** The events of `GET /v1/changes/stream` (`event:` names). */
export const STREAM_EVENTS = {
  /** Every row one version changed (that the caller may read), `id: <row_version>`. */
  rows: 'rows',
  /** The replay from `since` reached the end of the views; live changes follow. `id: <checkpoint>`. */
  synced: 'synced',
  /** Every `WRIT_SSE_HEARTBEAT_MS` while nothing changes; `id: <checkpoint>` once everything up to it was sent. */
  heartbeat: 'heartbeat',
  /** The server ends the stream (a slow reader, an expired credential, a shutdown): reconnect with `Last-Event-ID` / `since`. */
  closing: 'closing',
} as const;

/** `event: rows`. */
export const StreamRowsSchema = z.strictObject({
  row_version: RowVersion,
  changes: z.array(ProjectionChangeSchema).min(1),
});
export type StreamRows = z.infer<typeof StreamRowsSchema>;

/** `event: synced` and `event: heartbeat`: everything up to `checkpoint` was sent. */
export const StreamHeartbeatSchema = z.strictObject({ checkpoint: Version });
export type StreamHeartbeat = z.infer<typeof StreamHeartbeatSchema>;

/**
 * `event: closing`: why the stream ends, and where to resume. `SLOW_READER`:
 * the client did not take what was sent in time; `CREDENTIAL_EXPIRED`: the
 * bearer token's `exp` passed (reconnect with a fresh one); `SHUTDOWN`: the
 * instance stops; `UNAVAILABLE`: the views could not be read (Postgres).
 */
export const StreamClosingSchema = z.strictObject({
  code: z.enum(['PROJECTION_STREAM_SLOW_READER', 'PROJECTION_STREAM_CREDENTIAL_EXPIRED', 'PROJECTION_STREAM_SHUTDOWN', 'PROJECTION_STREAM_UNAVAILABLE']),
  message: z.string(),
  /** Reconnect with `Last-Event-ID: <resume_after>` (or `?since=`): nothing after it was skipped. */
  resume_after: Version,
});
export type StreamClosing = z.infer<typeof StreamClosingSchema>;
