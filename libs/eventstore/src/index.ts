export {
  EventStore,
  type AppendResult,
  type EventStoreAuthorship,
  type ChainVerification,
  type DeliveredMessage,
  type LogEntry,
  type QuarantineListener,
  type ReplayHandler,
  type ReplayOptions,
  type ReplaySummary,
  type StoredEvent,
} from './event-store.js';
export {
  EventStoreConfig,
  desiredStreamConfig,
  ensureEventStream,
  parseEventStoreConfig,
  type EnsureStreamOptions,
  type EnsureStreamOutcome,
  type EventStoreConfigInput,
} from './stream-config.js';
export {
  ChainScanner,
  GENESIS,
  NOT_JSON,
  computeEventHash,
  sealEvent,
  verifyEventChain,
  type ChainBreakReason,
  type ChainAggregate,
  type ChainLink,
  type ChainReport,
  type MessageVerdict,
} from './event-chain.js';
export {
  EventStoreError,
  isEventStoreError,
  type AppendedEvent,
  type EventStoreErrorCode,
  type EventStoreErrorDetails,
} from './eventstore-errors.js';
export type { StreamHead } from './head-cache.js';
export { Authorship, eventSealer, foldKeys, sealVerifies, type AuthorshipOptions, type EventSealer, type PrincipalKeys } from './event-seal.js';
