/**
 * The dashboard contract of the projection service (issue 16): the zod
 * schema of every row published on `<root>.proj.<view>.<id>`, the headers
 * each message carries, the changes feed (`GET /v1/changes`, the SSE
 * stream) and the AsyncAPI document of the public subjects. Served as
 * `@writ/contracts/projection-rows`; docs/dashboard-contract.md explains it.
 */
export { ACTION_STATUSES, ActionRowSchema, ActionStatusSchema, type ActionRow, type ActionStatus } from './actions.row.js';
export { ApprovalRowSchema, type ApprovalRow } from './approvals.row.js';
export { ArtifactRowSchema, type ArtifactRow } from './artifacts.row.js';
export { AttemptRowSchema, type AttemptRow } from './attempts.row.js';
export {
  CELL_ROW_STATUSES,
  CellRowSchema,
  CellRowStatusSchema,
  ParticipantSummarySchema,
  type CellRow,
  type CellRowStatus,
  type ParticipantSummary,
} from './cells.row.js';
export { DecisionRowSchema, type DecisionRow } from './decisions.row.js';
export { WorkingStateRowSchema, type WorkingStateRow } from './working-states.row.js';
export { BeliefRowSchema, type BeliefRow } from './beliefs.row.js';
export { MemoryRowSchema, type MemoryRow } from './memory.row.js';
export { GRANT_STATUSES, GrantRowSchema, GrantStatusSchema, type GrantRow, type GrantStatus } from './grants.row.js';
export { PrincipalRowSchema, type PrincipalRow } from './principals.row.js';
export { ReceiptRowSchema, type ReceiptRow } from './receipts.row.js';
export { StepRowSchema, type StepRow } from './steps.row.js';
export { TaskRowSchema, type TaskRow } from './tasks.row.js';
export { TaskEventRowSchema, type TaskEventRow } from './task-events.row.js';
export { RowCount, RowId, RowInstant, RowKeyset, RowObject, RowRef, RowText, RowVersion } from './row-fields.js';
export {
  PROJECTION_HEADERS,
  PROJECTION_ROW_SCHEMAS,
  PROJECTION_ROW_SCHEMA_VERSIONS,
  PUBLISHED_VIEWS,
  PublishedView,
  projectionMsgId,
  type ProjectionRowOf,
} from './published-views.js';
export {
  CHANGES_DEFAULT_LIMIT,
  CHANGES_MAX_LIMIT,
  ChangesPageSchema,
  ProjectionChangeSchema,
  STREAM_EVENTS,
  StreamClosingSchema,
  StreamHeartbeatSchema,
  StreamRowsSchema,
  type ChangesPage,
  type ProjectionChange,
  type StreamClosing,
  type StreamHeartbeat,
  type StreamRows,
} from './changes.js';
export { projectionRowSchemaDocuments, projectionRowSchemaFile, projectionRowJsonSchema, type ProjectionSchemaDocument } from './row-json-schemas.js';
export { ASYNCAPI_FILE, asyncApiDocument, asyncApiText, type AsyncApiOptions } from './asyncapi.js';
