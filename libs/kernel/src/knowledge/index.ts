export { KnowledgeError, type KnowledgeErrorCode } from './knowledge.errors.js';
export { assertionHoldsSecretByValue, entryHoldsSecretByValue } from './secret-by-reference.js';
export {
  TRUST_TIER_ADMISSION,
  TRUST_TIER_GATES,
  TRUST_TIER_RANK,
  contradictionNeedsReview,
  trustGate,
  trustTierRefusal,
  type TrustGate,
} from './trust-tier.gates.js';
export {
  COMPACTION_ROOT_KINDS,
  DEFAULT_WORKING_STATE_LIMITS,
  compactionKeeps,
  workingStateDecider,
  workingStateOverLimit,
  type NoWorkingState,
  type WorkingStateCommand,
  type WorkingStateRecord,
  type WorkingStateState,
} from './working-state.decider.js';
export { WorkingStateEvent, type WorkingStateEventType } from './working-state.events.js';
export { beliefDecider, findBelief, isBeliefActive, type Asserter, type BeliefCommand, type BeliefDraft, type BeliefSetState } from './belief.decider.js';
export { BeliefEvent, type BeliefEventType } from './belief.events.js';
export { EPISTEMIC_TRUST_TIERS, epistemicTrustTier, lastWillArtifactId, lastWillBeliefId, lastWillBeliefs, type LastWillLanding } from './last-will-beliefs.js';
export {
  judgeMemoryPromotion,
  memoryCandidateKey,
  type MemoryPromotionFacts,
  type MemoryPromotionJudgment,
  type MemoryPromotionRequest,
} from './memory-promotion.js';
export { memoryDecider, type DegradedMemory, type MemoryCommand, type MemoryRecordState, type MemoryState, type NoMemory } from './memory.decider.js';
export { MemoryEvent, PromotionDegradeReason, type MemoryEventType } from './memory.events.js';
export { decideMemoryWrite, memoryWriteAuthority, memoryWriteCommand, taskBeliefs, type MemoryWriteInput, type TaskLogEvent } from './memory-write.js';
export { ContextCompileInput, ContextProfile, compileContextPack, type CompiledContextPack, type ContextPackCodec } from './context-compiler.js';
export {
  bindingProblem,
  ingressBindingDecider,
  type IngressBinding,
  type IngressBindingCommand,
  type IngressRecordState,
  type IngressState,
  type NoIngress,
} from './ingress-binding.decider.js';
export { BindingCandidate, IngressBindingEvent, type IngressBindingEventType } from './ingress-binding.events.js';
export { chooseBinding, conversationTasks, disambiguation, type BindingChoice, type BindingInput, type BindingTask, type ConversationTasks, type PendingMessage } from './ingress-binder.js';
export {
  emptyFocusView,
  evolveFocus,
  focusKey,
  foldConversationFocus,
  type ConversationFocusView,
  type FocusLogEntry,
  type PrincipalFocus,
} from './conversation-focus.projection.js';
export { contextPackDecider, type ContextPackCommand, type ContextPackState, type NoContextPack, type RecordedContextPack, type RefusedContextPack } from './context-pack.decider.js';
export { ContextPackEvent, type ContextPackEventType } from './context-pack.events.js';
export { DEFAULT_CONTEXT_PROFILE, contextInputsFromLog, contextPackOpening, foldContextPack, knowledgeLimitsInForce, type ContextLogEvent, type ContextPackInputs } from './context-inputs.js';
