// @writ/agent: what an agent needs to act through Writ (README.md). Semver applies to what is exported here.

// Keys
export { generateAgentKey, loadAgentKey, type AgentKey, type AgentPrivateJwk, type AgentPublicJwk, type GeneratedAgentKey } from './agent-key.js';

// Requests and tokens
export { buildActionRequest, ingressSubject, newTaskId, signActionRequest, type ActionRequestFields, type SignedActionRequest } from './action-request.js';
export { signHttpToken, type HttpTokenOptions } from './http-token.js';

// Briefed tasks and claims
export { briefedTaskRequest, type BriefedTaskOptions, type FirstActionFields } from './task-brief.js';
export { claimSubject, signTaskClaim, type TaskClaim, type TaskClaimKind } from './task-claims.js';

// Receipts
export {
  RECEIPT_JWS_TYPE,
  verifyReceipt,
  type JsonWebKeySet,
  type ReceiptCheck,
  type ReceiptCheckName,
  type ReceiptDocument,
  type ReceiptVerification,
  type ReceiptVerifyOptions,
  type TimelineReceipt,
} from './receipt-verification.js';

// The client
export { WritAgent, isSettled, type AwaitOutcomeOptions, type Outcome, type SubmitResult, type VerifiedReceipt, type Via, type WritAgentOptions } from './writ-agent.js';
export type { TaskUpdate, TaskUpdates, TaskUpdatesOptions } from './task-updates.js';
export type { NatsOptions, PublishAck } from './nats-link.js';
export type { Fetch } from './writ-api.js';
export { ACTION_STATUSES, TERMINAL_ACTION_STATUSES, type ActionStatus, type ActionView, type IngressReplyView, type TaskEventView, type TaskView } from './api-views.js';

// Errors
export { AGENT_ERROR_CODES, AgentError, isAgentError, type AgentErrorCode } from './agent-errors.js';

// The wire contracts, from Writ's own zod schemas (vendored into this package at build time)
export {
  ActionRequest,
  BlockedClaim,
  Brief,
  ClaimReply,
  Correction,
  DoneClaim,
  Receipt,
  type HttpAuthErrorCode,
  type IngressRejectionCode,
  type ReceiptResultCode,
} from './contracts.js';
