export { KnowledgeEvidenceRef, KnowledgeScope, KnowledgeSensitivity } from './knowledge-evidence.js';
export { SecretReference, isSecretReference } from './secret-reference.js';
export { WORKING_STATE_CEILINGS, WorkingState, WorkingStateEntry, WorkingStateEntryKind, WorkingStateLimits } from './working-state.js';
export { CONTEXT_PACK_CEILINGS, ContextPackBudget, DEFAULT_KNOWLEDGE_LIMITS, KnowledgeLimits } from './knowledge-limits.js';
export { Belief, BeliefStatus } from './belief.js';
export { InvalidationPolicy, MemoryRecord, MemorySource, MemoryStatus } from './memory-record.js';
export {
  ContextItem,
  ContextOmission,
  ContextOmissionReason,
  ContextPack,
  ContextPackCompiled,
  ContextPackRefusalCode,
  ContextPackRefused,
  ContextSection,
  ContextSource,
} from './context-pack.js';
export {
  BELIEF_REQUEST_JWS_TYPE,
  BeliefAssertion,
  BeliefChange,
  BeliefRequestReply,
  BeliefRequestSubmission,
  SubmitKnowledgeRequest,
  WORKING_STATE_REVISION_JWS_TYPE,
  WorkingStateRevisionReply,
  WorkingStateRevisionSubmission,
} from './requests.js';
export { INGRESS_MESSAGE_JWS_TYPE, IngressMessageKind, IngressMessageReply, IngressMessageSubmission, SubmitIngressMessage } from './ingress-message.js';
export { ConversationFocus, ConversationFocusList, ConversationFocusRow, ConversationHistory, ConversationMessageRow } from './conversation.js';
export { MemoryInvalidationParams, MemoryPromotionParams, MemoryWriteOutcome, MemoryWriteParams } from './memory-write.js';
