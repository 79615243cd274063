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
export { Id, Sha256Hex, Timestamp } from './ids.js';
export { PrincipalType } from './principal-type.js';
export { EntityType, EventDraft, EventEnvelope, EventType } from './event-envelope.js';
export { EVENTS_STREAM, EVENTS_SUBJECTS, subjects } from './subjects.js';
