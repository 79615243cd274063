import { z } from 'zod';
import { ActionRowSchema } from './actions.row.js';
import { ApprovalRowSchema } from './approvals.row.js';
import { ArtifactRowSchema } from './artifacts.row.js';
import { AttemptRowSchema } from './attempts.row.js';
import { CellRowSchema } from './cells.row.js';
import { DecisionRowSchema } from './decisions.row.js';
import { GrantRowSchema } from './grants.row.js';
import { PrincipalRowSchema } from './principals.row.js';
import { ReceiptRowSchema } from './receipts.row.js';
import { StepRowSchema } from './steps.row.js';
import { TaskRowSchema } from './tasks.row.js';
import { BeliefRowSchema } from './beliefs.row.js';
import { MemoryRowSchema } from './memory.row.js';
import { WorkingStateRowSchema } from './working-states.row.js';

/**
 * The views whose rows are public: published on `<root>.proj.<view>.<id>`
 * and served by the changes feed. (`task_events`, the raw timeline, is read
 * per task over HTTP only.)
 */
export const PUBLISHED_VIEWS = ['actions', 'tasks', 'approvals', 'grants', 'receipts', 'principals', 'steps', 'attempts', 'artifacts', 'decisions', 'cells', 'working_states', 'beliefs', 'memory'] as const;
export const PublishedView = z.enum(PUBLISHED_VIEWS);
export type PublishedView = z.infer<typeof PublishedView>;

/** The schema of each published view's rows. */
export const PROJECTION_ROW_SCHEMAS = {
  actions: ActionRowSchema,
  tasks: TaskRowSchema,
  approvals: ApprovalRowSchema,
  grants: GrantRowSchema,
  receipts: ReceiptRowSchema,
  principals: PrincipalRowSchema,
  steps: StepRowSchema,
  attempts: AttemptRowSchema,
  artifacts: ArtifactRowSchema,
  decisions: DecisionRowSchema,
  cells: CellRowSchema,
  working_states: WorkingStateRowSchema,
  beliefs: BeliefRowSchema,
  memory: MemoryRowSchema,
} as const satisfies Record<PublishedView, z.ZodType>;

export type ProjectionRowOf<V extends PublishedView> = z.infer<(typeof PROJECTION_ROW_SCHEMAS)[V]>;

/**
 * `Writ-Schema-Version` of each view's rows: raised when a column is removed,
 * renamed or retyped, so a reader can refuse rows it would misread. Adding a
 * column keeps it; the JSON Schemas are closed (no unknown column), so a
 * validating reader takes the new schema from docs/schemas/projection-rows.
 */
export const PROJECTION_ROW_SCHEMA_VERSIONS: Readonly<Record<PublishedView, number>> = {
  actions: 1,
  tasks: 1,
  approvals: 1,
  grants: 1,
  receipts: 1,
  principals: 1,
  steps: 1,
  attempts: 1,
  artifacts: 1,
  decisions: 1,
  cells: 1,
  working_states: 1,
  beliefs: 1,
  memory: 1,
};

/** The NATS headers of every message on `<root>.proj.<view>.<id>` (values are strings, as NATS headers are). */
export const PROJECTION_HEADERS = {
  /** `<view>.<id>.<row_version>`: the same for a redelivery of the same change, different for every other change. */
  msgId: 'Writ-Msg-Id',
  /** The view (the `<view>` token of the subject). */
  view: 'Writ-View',
  /** `PROJECTION_ROW_SCHEMA_VERSIONS[view]`. */
  schemaVersion: 'Writ-Schema-Version',
  /** The row's `row_version`: the log sequence of the last event applied to it. */
  rowVersion: 'Writ-Row-Version',
  /** The version this view had before this change: the previous version that changed a row of the view (0 for its first). A reader holding less has missed a change. */
  prevVersion: 'Writ-Prev-Version',
  /** How many rows of this view this version changed (usually 1; an execution's artifacts are several): the version is complete once that many are held. */
  versionRows: 'Writ-Version-Rows',
} as const;

/** `Writ-Msg-Id` of a change: deterministic per (view, id, row version). Views and ids hold no dots, so it parses back. */
export function projectionMsgId(view: PublishedView, id: string, rowVersion: number): string {
  return `${view}.${id}.${rowVersion}`;
}
