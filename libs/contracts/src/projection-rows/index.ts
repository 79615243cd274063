// The projection's public rows: what `GET /v1/...` answers and `<root>.proj.<view>.<id>` carries.
// One module per view; the projection service's row types are these (z.infer), so there is one source.
export { ActionRow, ActionStatus } from './action-row.js';
export { ApprovalRow } from './approval-row.js';
export { ArtifactRow } from './artifact-row.js';
export { AttemptRow } from './attempt-row.js';
export { CellRow, CellRowStatus, ParticipantSummary } from './cell-row.js';
export { DecisionRow } from './decision-row.js';
export { GrantRow, GrantStatus } from './grant-row.js';
export { PrincipalRow } from './principal-row.js';
export { ReceiptRow } from './receipt-row.js';
export { RowCount, RowId, RowObject, RowTimestamp } from './row-fields.js';
export { StepRow } from './step-row.js';
export { TaskEventRow } from './task-event-row.js';
export { TaskRow } from './task-row.js';
