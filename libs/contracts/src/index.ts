// Errors
export { WritError, hasErrorCode } from './writ-error.js';
export {
  ContractError,
  parseContract,
  safeParseContract,
  toContractIssues,
  type ContractErrorCode,
  type ContractIssue,
  type ParseResult,
} from './contract-error.js';

// Scalars and bounds
export { Id, IdempotencyKey, Name, Ref, Sha256Hex, Timestamp } from './ids.js';
export { FilePath, HttpUrl, LongText, ResourceName, Text, Title, UnitInterval, clipText } from './text.js';
export { JsonValue, jsonBoundsIssue } from './json.js';
export { LIMITS } from './limits.js';

// Vocabularies
export { PrincipalType } from './principal-type.js';
export {
  HTTP_AUTH_ERROR_CODES,
  HTTP_TOKEN_CLOCK_SKEW_SECONDS,
  HTTP_TOKEN_DEFAULT_TTL_SECONDS,
  HTTP_TOKEN_JWS_TYPE,
  HTTP_TOKEN_MAX_TTL_SECONDS,
  HttpTokenClaims,
  httpAudience,
  type HttpAuthErrorCode,
  type HttpReadScope,
} from './http-credential.js';
export {
  ActionClass,
  IMPORTANT_ACTION_CLASSES,
  Reversibility,
  WITNESS_REQUIRED_ACTION_CLASSES,
} from './action-class.js';
export { RiskBand } from './risk-band.js';
export { TrustTier } from './trust-tier.js';
export { ExecutionMode } from './execution-mode.js';

// State machines
export {
  APPROVAL_TERMINAL_STATES,
  ATTEMPT_TERMINAL_STATES,
  ApprovalStatus,
  AttemptStatus,
  STEP_TERMINAL_STATES,
  StepStatus,
  TASK_TERMINAL_STATES,
  TASK_TRANSITIONS,
  TaskStatus,
  isTaskTransitionAllowed,
} from './states.js';

// First-class objects and wire messages
export { EntityType, EventDraft, EventEnvelope, EventSeal, EventType, eventSealInput } from './event-envelope.js';
export { AuthorService, EVENT_AUTHORSHIP, authorsOf, type AuthorshipRule, type EventAuthors } from './event-authorship.js';
export { QuarantineCounts, QuarantineReason, QuarantineRecord } from './quarantine.js';
export { Principal } from './principal.js';
export { ContinuationAnchor, ParallelismMode, Task, TaskPriority } from './task.js';
export { Step } from './step.js';
export { StepAttempt } from './step-attempt.js';
export { IngressRecord, IngressResolution, IngressStatus } from './ingress-record.js';
export {
  ActionParams,
  ActionRequest,
  HttpMethod,
  SAFE_HTTP_METHODS,
  StepSpec,
  TaskSpec,
  parseActionRequest,
  safeParseActionRequest,
} from './action-request.js';
export { PolicyDowngrade, PolicyOutcome, PolicyResult } from './policy-result.js';
export { Decision, DecisionClass } from './decision.js';
export { Approval } from './approval.js';
export { ApprovalPacket } from './approval-packet.js';
export {
  CapabilityGrantClaims,
  GrantConstraints,
  NumericDate,
  RepoScope,
  ResourceScope,
  parseCapabilityGrantClaims,
  safeParseCapabilityGrantClaims,
} from './capability-grant.js';
export { Artifact, ArtifactClass, KNOWN_ARTIFACT_KINDS } from './artifact.js';
export { EvidenceRef, EvidenceSelector } from './evidence-ref.js';
export {
  Receipt,
  ReceiptApprovalResolution,
  ReceiptAttestation,
  ReceiptClass,
  ReceiptResultCode,
  ReceiptEventChainHead,
  ReceiptRollback,
  ReplayClass,
  RollbackMethod,
  RollbackStep,
  Verifiability,
  parseReceipt,
  safeParseReceipt,
} from './receipt.js';
export { ROLLBACK_RESTORE_MAX_BYTES, RollbackParams, parseRollbackParams, safeParseRollbackParams } from './rollback.js';
export {
  BundleKey,
  BundlePrincipal,
  BundleReference,
  BundleReferenceBinding,
  BundleReferenceField,
  BundledReceipt,
  NotAssertedStatement,
  RECEIPT_BUNDLE_MAX_EVENTS,
  RECEIPT_BUNDLE_VERSION,
  ReceiptBundle,
} from './receipt-bundle.js';

// Registry and generated documents
export {
  CONTRACTS,
  CONTRACT_NAMES,
  parseNamedContract,
  safeParseNamedContract,
  type ContractName,
  type Contracts,
} from './contracts.js';
export { jsonSchemaDocuments, jsonSchemaFileName, jsonSchemaOf, type JsonSchemaDocument } from './json-schemas.js';

// NATS subjects
export {
  COMMANDS_STREAM,
  COMMANDS_SUBJECTS,
  DLQ_STREAM,
  DLQ_SUBJECTS,
  EVENTS_STREAM,
  EVENTS_SUBJECTS,
  INGRESS_IDEMPOTENCY_KEY_HEADER,
  INGRESS_STREAM,
  INGRESS_SUBJECTS,
  subjects,
} from './subjects.js';
export * from './governed-path/index.js';
export * from './task-claims/index.js';
export * from './lineage/index.js';
export * from './knowledge/index.js';
export * from './projection-api/index.js';
