/**
 * @writ/kernel — the pure domain core of Writ.
 *
 * Deciders (Emmett style), one per aggregate, each as three plain functions
 * and a `Decider` object: `initialState()`, `decide(command, state) → events`,
 * `evolve(state, event) → state`.
 *
 * - Commands are imperative (`issue-grant`) and carry `metadata.now` (RFC 3339);
 *   ids arrive in command data. The kernel never reads a clock or randomness.
 * - Events are `{ type, data }` with dotted past-tense types exactly as they
 *   appear as `event_type` in the envelope (`attempt.awaiting_approval`,
 *   `grant.refused`); every expected outcome, failures included, is an event.
 * - Error style: `decide` THROWS a `KernelError` (a `WritError<Code>` with a
 *   closed per-context code union) when a command is invalid in the current
 *   state; no event exists in that case. Branch with `hasErrorCode`.
 * - `evolve` is total: it parses each event with the context's zod schema and
 *   applies it only when valid in the current state; anything else leaves the
 *   state as is and is recorded in `state.anomalies`.
 *
 * Policy is a pure function of (request, profile, facts): `evaluatePolicy`,
 * with `classifyRisk` and the destructive-command detector beside it.
 * Profiles are data: a `PolicyProfileDocument` (what an author writes) plus
 * a `version` derived from its content makes a `PolicyProfile`.
 *
 * Knowledge (Hermit 15, 8.1.2-8.1.3, 13.6): deciders for a task's
 * WorkingState, its Beliefs, each MemoryRecord and each free-form ingress's
 * binding; the trust-tier gates as a table; the context compiler and the
 * conversation focus fold as pure functions.
 */

// Shared
export { KernelError, type KernelCommandErrorCode } from './shared/kernel-error.js';
export { fold, handle, type Anomaly, type Command, type CommandMetadata, type Decider, type DomainEvent } from './shared/decider.js';
export { normalizePath, ROOT_PATH, type NormalizedPath, type NormalizeOptions, type PathRefusal } from './shared/paths.js';
export { compileGlob, GlobPattern, matchGlob, matchAnyGlob, type CompiledGlob } from './shared/glob.js';

// Task
export { taskDecider, isTaskTerminal, TASK_COMMAND_EVENTS, type TaskCommand, type TaskCommandType, type TaskRecord, type TaskState } from './task/task.decider.js';
export { TaskEvent, TASK_EVENT_EDGES, type TaskEventType } from './task/task.events.js';
export { TaskError, type TaskErrorCode } from './task/task.errors.js';

// Step and StepAttempt
export { stepDecider, type StepAttemptEntry, type StepCommand, type StepRecord, type StepState } from './attempt/step.decider.js';
export { StepEvent, STEP_EVENT_EDGES, ClosedAttemptOutcome, type StepEventType } from './attempt/step.events.js';
export { StepError, type StepErrorCode } from './attempt/step.errors.js';
export {
  attemptDecider,
  isAttemptTerminal,
  type ApprovalResolution,
  type AttachedGrant,
  type AttemptCommand,
  type AttemptCommandType,
  type AttemptRecord,
  type AttemptState,
  type DriftRecovery,
  type ReplacedGrant,
} from './attempt/attempt.decider.js';
export {
  AttemptEvent,
  ATTEMPT_EVENT_EDGES,
  ATTEMPT_PRE_EXECUTION_STATES,
  ATTEMPT_TRANSITIONS,
  CodedReason,
  DriftCause,
  ExecutionOutcome,
  PolicyDecision,
  SettledResult,
  type AttemptEventType,
} from './attempt/attempt.events.js';
export { AttemptError, type AttemptErrorCode } from './attempt/attempt.errors.js';

// Approval
export { approvalDecider, APPROVER_ROLE, driftedResources, type ApprovalCommand, type ApprovalRecord, type ApprovalState, type PolicyVersions, type Resolver } from './approval/approval.decider.js';
export { ApprovalEvent, Fingerprints, InvalidationCause, StateWitness, type ApprovalEventType } from './approval/approval.events.js';
export { ApprovalError, type ApprovalErrorCode } from './approval/approval.errors.js';

// Grant
export {
  consumedUses,
  grantDecider,
  isGrantExhausted,
  useSettlements,
  type ClaimedUse,
  type GrantCommand,
  type GrantRecord,
  type GrantState,
  type GrantUseSettlement,
  type SettledUse,
  type UseCompletion,
} from './grant/grant.decider.js';
export { GrantEvent, type GrantEventType } from './grant/grant.events.js';
export { assertGrantUse, checkGrantUse, hostInScope, pathInScope, repoRefInScope, type GrantResources, type GrantUse, type GrantUseCheck, type RepoRefUse } from './grant/grant-use.js';
export { GrantError, type GrantErrorCode, type GrantRefusalCode } from './grant/grant.errors.js';

// Policy
export {
  ActionClassRule,
  BUILTIN_POLICY_DOCUMENTS,
  BUILTIN_POLICY_PROFILES,
  CapabilityCeilings,
  DEFAULT_DRAFT_DIR,
  DEFAULT_MAX_WALL_CLOCK_MS,
  DowngradeTarget,
  KnowledgeProfileSection,
  PolicyProfile,
  PolicyProfileDocument,
  SUPPORTED_DOWNGRADES,
  builtinPolicyProfile,
  isSupportedDowngrade,
  knowledgeLimitsOf,
  parsePolicyDocument,
  parsePolicyProfile,
  preparePolicyProfile,
  versionPolicyProfile,
  type BuiltinPolicyProfileId,
  type PolicyDocumentIssue,
  type PolicyProfileDocumentInput,
  type PolicyProfileInput,
  type PreparedPolicyProfile,
} from './policy/policy-profile.js';
export { DEFAULT_SACRED_PATHS, DEFAULT_SECRET_PATHS, SACRED_SCOPE_GROUPS, type SacredScopeGroup } from './policy/sacred-scopes.js';
export { EGRESS_ANY_HOST, EgressHostPattern, egressAllowed, intersectEgress, urlHost } from './policy/egress.js';
export {
  capabilityScope,
  evaluatePolicy,
  rewriteRequest,
  toPolicyDecision,
  toPolicyResult,
  type CapabilityScope,
  type PolicyDowngradeResult,
  type PolicyEvaluation,
  type PolicyReason,
  type PolicyResultMetadata,
} from './policy/evaluate-policy.js';
export { BASE_RISK, classifyRisk, type RiskAssessment, type RiskFactor, type RiskFactorCode } from './policy/classify-risk.js';
export type { PolicyFacts } from './policy/request-view.js';
export {
  DESTRUCTIVE_PATTERNS,
  MAX_NESTING,
  analyzeCommand,
  analyzeShellScript,
  isBroadTarget,
  isDestructiveCommand,
  type CommandAnalysis,
  type CommandFinding,
  type DestructivePattern,
  type DestructiveSeverity,
  type WriteTarget,
} from './policy/destructive-commands.js';
export { splitShell, type ShellCommand, type ShellParse, type ShellRedirect } from './policy/shell-words.js';
export { destructiveSql, type SqlFinding } from './policy/sql-statements.js';
export { PolicyError, type PolicyErrorCode } from './policy/policy.errors.js';

// Task claims (seed 003: done.json, blocked.json, file-ownership audit)
export { judgeDoneClaim, VERIFIED_STATUSES, type DoneClaimFacts, type DoneJudgment, type StandingDoneClaim, type VerificationFact } from './claims/done-claim.rules.js';
export { judgeBlockedClaim, preferenceIn, PREFERENCE_PATTERNS, type BlockedClaimFacts, type BlockedJudgment, type FallbackStanding } from './claims/blocked-claim.rules.js';
export { auditFileOwnership, type ExecutedChange, type FileOwnershipAudit, type SacredScopes } from './claims/file-ownership.audit.js';
export { planAuditRollback, type AuditRollback, type AuditRollbackPlan, type ReceiptedExecution, type UnrollableChange } from './claims/audit-rollback.plan.js';

// Cell (Lazarus Cell Spec: lifecycle, TTLs, roles, filesystem layout)
export {
  archivedObjects,
  cellDecider,
  cellHolder,
  isCellTerminal,
  isoAt,
  lastCheckpoint,
  participantOf,
  CELL_CLOSE_REASONS,
  CELL_COMMANDS,
  type CellCheckpoint,
  type CellCommand,
  type CellCommandType,
  type CellParticipant,
  type CellRecord,
  type CellState,
  type RunningParticipant,
} from './cell/cell.decider.js';
export { CellEvent, CellSeat, CELL_TRANSITIONS, type CellEventType } from './cell/cell.events.js';
export {
  CellBackend,
  CellCloseReason,
  CellIsolation,
  CellPolicy,
  CellRole,
  CellStatus,
  CELL_ACTIVE_TTL_CEILING_MS,
  CELL_POLICY_DEFAULTS,
  type CellPolicyInput,
} from './cell/cell.policy.js';
export { CELL_ROLES, cellPermissions, roleEnabled, type CellPermissions, type CellWriteArea } from './cell/cell.roles.js';
export { CELL_DIRS, CELL_FILES, cellLayout, homePath, readablePaths, writablePaths, type CellLayout, type CellLayoutParticipant } from './cell/cell.layout.js';
export { dueTransitions, nextDueAt, type DueTransition } from './cell/cell.due.js';
export { CellError, type CellErrorCode } from './cell/cell.errors.js';

// Lineage (seed 002: signed spawn manifests, heartbeats, Last Wills, forensic seeds, reconstitution; participant scope)
export * from './lineage/index.js';

// Knowledge (issue 17): working state, beliefs, memory, context packs, ingress binding and conversation focus
export * from './knowledge/index.js';

// Access: who reads what through the HTTP API
export { httpReadScope, mayRead, READ_ALL_ROLES } from './access/http-read-scope.js';
