import { z } from 'zod';
import { QuarantineCounts, QuarantineRecord } from '../quarantine.js';
import { Id, Timestamp } from '../ids.js';

/**
 * The projection service's read models as an operator names them (`writ
 * projections rebuild --view <v>`, `GET /v1/projections/status`): each is one
 * Postgres table and the `<root>.proj.<view>.<id>` topic of its rows.
 */
export const ProjectionView = z.enum([
  'actions',
  'tasks',
  'task_events',
  'approvals',
  'grants',
  'receipts',
  'principals',
  'steps',
  'attempts',
  'artifacts',
  'decisions',
  'cells',
  'working_states',
  'beliefs',
  'memory',
  'conversation_focus',
  'conversation_messages',
]);
export type ProjectionView = z.infer<typeof ProjectionView>;

const Count = z.int().nonnegative();

/**
 * `writ.qry.projection.rebuild` (request/reply): start a rebuild job. The
 * service replays the log into a fresh schema, compares each view's checksum
 * with the live one at the same checkpoint, and only when every compared view
 * matches (or `force`) swaps the rebuilt tables in. The reply is the job as it
 * starts; follow it with `writ.qry.projection.rebuild-status`.
 */
export const StartProjectionRebuild = z.strictObject({
  /** The views to rebuild and swap (default: all); the others are left untouched. */
  views: z.array(ProjectionView).min(1).max(ProjectionView.options.length).optional(),
  /** Keep the replaced tables in `<schema>_old_<UTC yyyymmddhhmmss>` instead of dropping them. */
  keep_old: z.boolean().optional(),
  /** Swap even when a checksum differs (repairs a view that drifted from the log); the mismatch is still reported. */
  force: z.boolean().optional(),
});
export type StartProjectionRebuild = z.infer<typeof StartProjectionRebuild>;

/** `writ.qry.projection.rebuild-status` (request/reply): one rebuild job. */
export const GetProjectionRebuild = z.strictObject({ job_id: Id });
export type GetProjectionRebuild = z.infer<typeof GetProjectionRebuild>;

/** A view's row count and checksum (md5 over its rows' JSON in primary-key order). */
export const ProjectionViewChecksum = z.strictObject({ rows: Count, checksum: z.string().max(64) });
export type ProjectionViewChecksum = z.infer<typeof ProjectionViewChecksum>;

export const ProjectionViewComparison = z.strictObject({
  view: ProjectionView,
  live: ProjectionViewChecksum,
  rebuilt: ProjectionViewChecksum,
  match: z.boolean(),
});
export type ProjectionViewComparison = z.infer<typeof ProjectionViewComparison>;

/** Where a running job is: making the fresh schema, replaying the log, comparing checksums, catching up with the live checkpoint, swapping tables. */
export const ProjectionRebuildPhase = z.enum(['preparing', 'replaying', 'comparing', 'catching_up', 'swapping', 'done']);
export type ProjectionRebuildPhase = z.infer<typeof ProjectionRebuildPhase>;

/** `swapped`: proven (or forced) and swapped in; `mismatch`: a checksum differed, nothing swapped; `failed`: an error, nothing swapped. */
export const ProjectionRebuildState = z.enum(['running', 'swapped', 'mismatch', 'failed']);
export type ProjectionRebuildState = z.infer<typeof ProjectionRebuildState>;

/** A rebuild job as the service records it (in Postgres, so any instance answers for it). */
export const ProjectionRebuildJob = z.strictObject({
  job_id: Id,
  state: ProjectionRebuildState,
  phase: ProjectionRebuildPhase,
  views: z.array(ProjectionView).min(1),
  keep_old: z.boolean(),
  force: z.boolean(),
  /** The live checkpoint the proof replays up to (known once `replaying` starts). */
  target_seq: Count,
  /** Events of the log replayed into the fresh schema so far. */
  replayed: Count,
  /** Messages of the log that are not event envelopes: passed over, as the live projector does. */
  skipped: Count,
  /** Replay speed so far. */
  events_per_second: z.number().nonnegative(),
  /** Per view, live vs rebuilt at `target_seq`; empty until compared. */
  comparisons: z.array(ProjectionViewComparison),
  /** The live checkpoint at which the rebuilt tables were swapped in; the projector continues from it. */
  swapped_at_seq: Count.nullable(),
  /** Where the replaced tables are kept (`keep_old`), else null. */
  old_schema: z.string().max(63).nullable(),
  error: z.strictObject({ code: z.string().min(1).max(64), message: z.string().max(2_000) }).nullable(),
  started_at: Timestamp,
  updated_at: Timestamp,
  finished_at: Timestamp.nullable(),
});
export type ProjectionRebuildJob = z.infer<typeof ProjectionRebuildJob>;

/** One view in `GET /v1/projections/status`; `checksum` only with `?checksums=true`. */
export const ProjectionViewStatus = z.strictObject({ view: ProjectionView, rows: Count, checksum: z.string().max(64).nullable() });
export type ProjectionViewStatus = z.infer<typeof ProjectionViewStatus>;

/** `GET /v1/projections/status`: how far the views are behind the log, what they hold, and the last rebuild. */
export const ProjectionStatus = z.strictObject({
  /** The last stream sequence folded into the views. */
  checkpoint: Count,
  /** The log's last stream sequence. */
  last_stream_seq: Count,
  events_behind: Count,
  /** How long the oldest event not yet folded has waited in the log (now − its stream timestamp); 0 when caught up. */
  lag_ms: Count,
  views: z.array(ProjectionViewStatus),
  last_rebuild: ProjectionRebuildJob.nullable(),
  /** The messages of the log the views passed over as junk (invariant 10): counted by reason, the latest few records. */
  quarantined: QuarantineCounts.extend({ latest: z.array(QuarantineRecord).max(100) }),
});
export type ProjectionStatus = z.infer<typeof ProjectionStatus>;
