// The projection's public HTTP API: list queries, pages, the other answers and errors as problem details.
export {
  ActionPage,
  ApprovalDecisionBody,
  ApprovalDetail,
  ApprovalPage,
  ApprovalResolutionView,
  ArtifactList,
  BeliefList,
  BeliefListQuery,
  CellPage,
  DecisionTimeline,
  ForwardedReply,
  GrantList,
  GrantRevocationBody,
  Health,
  KeySet,
  KnowledgeRequestBody,
  ProjectionLag,
  ProjectionReady,
  ReceiptPage,
  StepList,
  SubmitActionBody,
  StepView,
  TaskClaimBody,
  TaskPage,
  TaskView,
} from './api-views.js';
export {
  ActionListQuery,
  ApprovalListQuery,
  CellListQuery,
  LIST_QUERIES,
  ReceiptListQuery,
  TaskListQuery,
  type ListName,
} from './list-queries.js';
export { PAGE_CURSOR_MAX, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PageCursor, PageLimit, pageOf } from './pagination.js';
export { PROBLEM_JSON, ProblemDetails, ProblemType, WritErrorCode, problemTitle, problemType } from './problem-details.js';
