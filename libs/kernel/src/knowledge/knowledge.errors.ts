import { KernelError } from '../shared/kernel-error.js';

/** Closed set of reasons a knowledge-layer command is refused (working state, beliefs, memory, context packs, ingress binding). */
export type KnowledgeErrorCode =
  /** The task has no working state yet: open it first (`open-working-state`). */
  | 'KNOWLEDGE_WORKING_STATE_NOT_OPEN'
  /** `open-working-state` on a task whose working state is already open. */
  | 'KNOWLEDGE_WORKING_STATE_ALREADY_OPEN'
  /** The revision would pass a limit (entries, bytes of one entry, total bytes): compact, or keep large content in an artifact and reference it. */
  | 'KNOWLEDGE_WORKING_STATE_TOO_LARGE'
  /** `expected_revision` is not the current revision: reload and retry. */
  | 'KNOWLEDGE_WORKING_STATE_REVISION_CONFLICT'
  /** A key is set twice, or set and removed, in one revision. */
  | 'KNOWLEDGE_WORKING_STATE_REVISION_INVALID'
  /** A removal or a compaction reference names a key the working state does not hold. */
  | 'KNOWLEDGE_WORKING_STATE_ENTRY_UNKNOWN'
  /** An entry would reference (`refs`) a key that does not exist after the revision. */
  | 'KNOWLEDGE_WORKING_STATE_DANGLING_REF'
  /**
   * Knowledge marked `sensitivity: secret` holds something other than a reference to where the secret lives
   * (`{ "secret_ref": <Ref> }`): a working state entry's `value`, a belief's or memory record's `structured_assertion`.
   * A secret is recorded by reference, never by value (invariant 6); nothing was recorded.
   */
  | 'KNOWLEDGE_SECRET_BY_VALUE'
  /** The command names another task than the aggregate's. */
  | 'KNOWLEDGE_WRONG_TASK'
  /** A Last Will is to land on a task its participant's line does not own (another owner, or an actor neither the writer nor reconstituted from it): no belief lands. */
  | 'KNOWLEDGE_LAST_WILL_NOT_OF_TASK'
  /** A belief with this id already exists. */
  | 'KNOWLEDGE_BELIEF_EXISTS'
  /** The command names a belief this task does not hold. */
  | 'KNOWLEDGE_BELIEF_NOT_FOUND'
  /** The belief is superseded, revoked or expired (or contradicted, where that matters): it cannot change or be promoted. */
  | 'KNOWLEDGE_BELIEF_NOT_ACTIVE'
  /** A contradiction of a belief with itself, or one already marked. */
  | 'KNOWLEDGE_CONTRADICTION_INVALID'
  /** The trust tier claimed is not one the asserter or the evidence can support (e.g. `verified` without a receipt, `user_asserted` by an agent). */
  | 'KNOWLEDGE_TRUST_TIER_UNSUPPORTED'
  /** A memory would carry a higher trust tier than the belief it is promoted from. */
  | 'KNOWLEDGE_TRUST_TIER_ESCALATION'
  /** A memory record with this id already exists. */
  | 'KNOWLEDGE_MEMORY_EXISTS'
  /** The command needs a promoted memory record, and none exists in this stream. */
  | 'KNOWLEDGE_MEMORY_NOT_FOUND'
  /** The memory record is no longer active (invalidated, revoked or expired). */
  | 'KNOWLEDGE_MEMORY_NOT_ACTIVE'
  /** A supported promotion cites no policy result: promotion is an important action and goes through policy. */
  | 'KNOWLEDGE_PROMOTION_AUTHORITY_MISSING'
  /** Beliefs and memory are never deleted: invalidate, revoke or supersede instead. */
  | 'KNOWLEDGE_DELETION_FORBIDDEN'
  /** The task contract, step contract and policy constraints alone do not fit the pack's budget. */
  | 'KNOWLEDGE_CONTEXT_BUDGET_TOO_SMALL'
  /** The compiler's inputs are malformed or name one source twice. */
  | 'KNOWLEDGE_CONTEXT_INPUT_INVALID'
  /** The attempt already has another pack (or refusal) recorded: the first stands; a different recompile is a determinism bug. */
  | 'KNOWLEDGE_CONTEXT_PACK_CONFLICT'
  /** The ingress was not recorded before being bound (Hermit 8.1.2: record first). */
  | 'KNOWLEDGE_INGRESS_NOT_RECORDED'
  /** `record-ingress` for an id already recorded. */
  | 'KNOWLEDGE_INGRESS_ALREADY_RECORDED'
  /** The ingress is already bound (only a pending disambiguation may be bound again). */
  | 'KNOWLEDGE_INGRESS_ALREADY_BOUND'
  /** The binding lacks what its outcome needs (a target task, a parent, candidates, a continuation anchor). */
  | 'KNOWLEDGE_INGRESS_BINDING_INVALID'
  /** The binding would implicitly reopen a terminal task: start a new task carrying a continuation anchor instead (Hermit 8.1.1). */
  | 'KNOWLEDGE_INGRESS_TERMINAL_TASK';

export class KnowledgeError extends KernelError<KnowledgeErrorCode> {}
