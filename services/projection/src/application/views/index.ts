import { actionsView, type ActionRow } from './actions.view.js';
import { approvalsView, type ApprovalRow } from './approvals.view.js';
import { artifactsView, type ArtifactRow } from './artifacts.view.js';
import { attemptsView, type AttemptRow } from './attempts.view.js';
import { cellsView, type CellRow } from './cells.view.js';
import { decisionsView, type DecisionRow } from './decisions.view.js';
import { grantsView, type GrantRow } from './grants.view.js';
import { principalsView, type PrincipalRow } from './principals.view.js';
import { receiptsView, type ReceiptRow } from './receipts.view.js';
import { stepsView, type StepRow } from './steps.view.js';
import { taskEventsView, type TaskEventRow } from './task-events.view.js';
import { tasksView, type TaskRow } from './tasks.view.js';
import { beliefsView, type BeliefRow } from './beliefs.view.js';
import { memoryView, type MemoryRow } from './memory.view.js';
import { workingStatesView, type WorkingStateRow } from './working-states.view.js';
import { conversationFocusView, type ConversationFocusRow } from './conversation-focus.view.js';
import { conversationMessagesView, type ConversationMessageRow } from './conversation-messages.view.js';
import type { View, ViewName } from './view.js';

export { ACTION_STATUSES, actionsView, type ActionRow, type ActionStatus } from './actions.view.js';
export { approvalsView, type ApprovalRow } from './approvals.view.js';
export { artifactsView, type ArtifactRow } from './artifacts.view.js';
export { attemptsView, type AttemptRow } from './attempts.view.js';
export { CELL_STATUS_BY_EVENT, cellsView, executionCellId, type CellRow, type ParticipantSummary } from './cells.view.js';
export { decisionsView, type DecisionRow } from './decisions.view.js';
export { grantsView, type GrantRow } from './grants.view.js';
export { principalsView, type PrincipalRow } from './principals.view.js';
export { receiptsView, type ReceiptRow } from './receipts.view.js';
export { nextAttemptStatus, stepsView, type StepRow } from './steps.view.js';
export { taskEventsView, type TaskEventRow } from './task-events.view.js';
export { tasksView, type TaskRow } from './tasks.view.js';
export { beliefsView, type BeliefRow } from './beliefs.view.js';
export { memoryView, type MemoryRow } from './memory.view.js';
export { workingStatesView, type WorkingStateRow } from './working-states.view.js';
export { conversationFocusView, type ConversationFocusRow } from './conversation-focus.view.js';
export { conversationMessagesView, type ConversationMessageRow } from './conversation-messages.view.js';
export { patch, type Folded, type Locator, type View, type ViewName } from './view.js';

/** The row type of each view. */
export interface ViewRows {
  readonly actions: ActionRow;
  readonly tasks: TaskRow;
  readonly task_events: TaskEventRow;
  readonly approvals: ApprovalRow;
  readonly grants: GrantRow;
  readonly receipts: ReceiptRow;
  readonly principals: PrincipalRow;
  readonly steps: StepRow;
  readonly attempts: AttemptRow;
  readonly artifacts: ArtifactRow;
  readonly decisions: DecisionRow;
  readonly cells: CellRow;
  readonly working_states: WorkingStateRow;
  readonly beliefs: BeliefRow;
  readonly memory: MemoryRow;
  readonly conversation_focus: ConversationFocusRow;
  readonly conversation_messages: ConversationMessageRow;
}

/** Every read model, in the order an event is folded into them. */
export const VIEWS: { readonly [K in ViewName]: View<ViewRows[K]> } = {
  task_events: taskEventsView,
  tasks: tasksView,
  actions: actionsView,
  approvals: approvalsView,
  grants: grantsView,
  receipts: receiptsView,
  principals: principalsView,
  steps: stepsView,
  attempts: attemptsView,
  artifacts: artifactsView,
  decisions: decisionsView,
  cells: cellsView,
  working_states: workingStatesView,
  beliefs: beliefsView,
  memory: memoryView,
  conversation_focus: conversationFocusView,
  conversation_messages: conversationMessagesView,
};

export const VIEW_NAMES = Object.keys(VIEWS) as ViewName[];
