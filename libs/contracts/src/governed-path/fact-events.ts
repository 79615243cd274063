import { z } from 'zod';
import { ActionRequest } from '../action-request.js';
import { Artifact } from '../artifact.js';
import { Decision } from '../decision.js';
import { Id, Name, Ref, Sha256Hex, Timestamp } from '../ids.js';
import { KnowledgeLimits } from '../knowledge/knowledge-limits.js';
import { LIMITS } from '../limits.js';
import { PolicyResult } from '../policy-result.js';
import { Receipt } from '../receipt.js';
import { ReceiptCause } from './service-commands.js';
import { FilePath } from '../text.js';
import { MemoryWriteOutcome } from '../knowledge/memory-write.js';

/**
 * What a grant for the evaluated request may encode at most (the kernel's
 * `CapabilityScope`): the task's write globs, egress host patterns (`*` is a
 * policy pattern only: a grant lists the request's concrete hosts), the secret
 * handles a request may name, and the wall-clock ceiling of one use.
 */
export const PolicyCapabilityScope = z.strictObject({
  write_paths: z.array(z.string().min(1).max(LIMITS.path)).max(LIMITS.listItems),
  egress_hosts: z.array(z.string().min(1).max(259)).max(LIMITS.listItems),
  secret_handles: z.array(Name).max(LIMITS.shortListItems),
  max_wall_clock_ms: z.int().min(1).max(86_400_000),
});
export type PolicyCapabilityScope = z.infer<typeof PolicyCapabilityScope>;

/** `policy.evaluated` on the task stream: the policy result and the Decision that records it. */
export const PolicyEvaluated = z.strictObject({
  policy_result: PolicyResult,
  decision: Decision,
  /** On a downgrade: the rewritten, lower-risk request the attempt continues with (Hermit 11.4); `policy_result.rewritten_action_request_ref` names it. */
  rewritten_action_request: ActionRequest.optional(),
  /** The capability scope the approval service encodes into the grant; absent when the evaluation could not run (a recorded deny) and in events written before it existed. */
  capability_scope: PolicyCapabilityScope.optional(),
  /**
   * The knowledge limits of the profile evaluated (its `knowledge` section, defaults filled in): what the
   * orchestrator opens the task's working state with and compiles its next packs within. Absent when the
   * evaluation could not use a profile, and in events written before it existed (the defaults hold).
   */
  knowledge: KnowledgeLimits.optional(),
});
export type PolicyEvaluated = z.infer<typeof PolicyEvaluated>;

/**
 * `decision.recorded` on the task stream (entity `decision`, id = `decision.decision_id`):
 * a Decision made outside policy evaluation, appended together with the event it
 * explains, e.g. every approval resolution with its resolver (`decided_by`).
 */
export const DecisionRecorded = z.strictObject({
  decision: Decision,
  /** What was decided on: `approval:<approval_id>`. */
  subject_ref: Ref,
  /** The event the decision was appended with: `approval.granted`, `approval.expired`, ... */
  outcome_event: z.string().regex(/^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$/),
});
export type DecisionRecorded = z.infer<typeof DecisionRecorded>;

/** One file the action changed in the cell's workspace (null hash: absent on that side). */
export const ChangedFile = z.strictObject({
  path: FilePath,
  change: z.enum(['added', 'modified', 'deleted']),
  before_sha256: Sha256Hex.nullable(),
  after_sha256: Sha256Hex.nullable(),
});
export type ChangedFile = z.infer<typeof ChangedFile>;

/** The cell as actually applied, read back from the container (not from the request). */
export const CellEnvironment = z.strictObject({
  image: z.string().min(1).max(256),
  image_id: z.string().min(1).max(256),
  network_mode: z.string().min(1).max(64),
  readonly_rootfs: z.boolean(),
  cap_drop: z.array(z.string().max(64)).max(64),
  user: z.string().max(64),
  memory_bytes: z.int().nonnegative(),
  pids_limit: z.int().nonnegative(),
  mounts: z.array(z.strictObject({ destination: z.string().max(1024), read_only: z.boolean() })).max(16),
  /** Egress: the grant's hosts the cell's proxy allowed (absent: the cell had no network). */
  egress_hosts: z.array(z.string().min(1).max(261)).max(64).optional(),
});
export type CellEnvironment = z.infer<typeof CellEnvironment>;

/**
 * `execution.completed` on the task stream. `outcome: unknown` means the effect
 * may or may not have happened (Hermit 19.4): it is observed, never re-run silently.
 * `not_run`: the use is proven never to have started (its claimer died, and the exec was
 * fenced or never created; `grant.use_released` in the same append): not a result of the
 * action, which goes on with a new use of the grant (issue 13).
 */
export const ExecutionCompleted = z.strictObject({
  grant_id: Id,
  use_no: z.int().min(1),
  executor_id: Id,
  outcome: z.enum(['completed', 'errored', 'unknown', 'not_run']),
  exit_code: z.int().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number().nonnegative(),
  stdout_sha256: Sha256Hex,
  stderr_sha256: Sha256Hex,
  changed_files: z.array(ChangedFile).max(LIMITS.listItems),
  artifacts: z.array(Artifact).max(LIMITS.listItems),
  environment: CellEnvironment.nullable(),
  error: z.strictObject({ code: z.string().max(64), message: z.string().max(2_000) }).optional(),
  /** A memory_write: the memory event it appended and what it came to (absent for every other class, and when nothing was appended). */
  memory: MemoryWriteOutcome.optional(),
  at: Timestamp,
});
export type ExecutionCompleted = z.infer<typeof ExecutionCompleted>;

/**
 * `execution.started` on the task stream: the executor's journal of one use,
 * appended after the exec is created and before it is started (Hermit 19.2).
 * A restarted executor finds the container, the exec and the per-use record
 * through it, and knows until when the action may still be running.
 */
export const ExecutionStarted = z.strictObject({
  use_id: z.string().regex(/^use-[0-9a-f]{40}$/),
  grant_id: Id,
  use_no: z.int().min(1),
  executor_id: Id,
  container_id: z.string().regex(/^[0-9a-f]{12,64}$/),
  exec_id: z.string().regex(/^[0-9a-f]{12,64}$/),
  started_at: Timestamp,
  /** After this instant the in-cell timer and the host grace have both passed: the action is over or stuck. */
  deadline: Timestamp,
});
export type ExecutionStarted = z.infer<typeof ExecutionStarted>;

/**
 * `execution.outcome_resolved` on the task stream: a director settled an
 * execution whose outcome was `unknown` on evidence outside the log. It never
 * re-runs anything; the orchestrator settles the attempt with it.
 */
export const ExecutionOutcomeResolved = z.strictObject({
  grant_id: Id,
  use_no: z.int().min(1),
  /** The `execution.completed` (outcome unknown) this resolves. */
  execution_event_id: z.string().min(1).max(256),
  outcome: z.enum(['succeeded', 'failed']),
  resolved_by: Id,
  resolved_at: Timestamp,
  note: z.string().max(2_000).optional(),
  /** SHA-256 of the director's signed resolution (its compact JWS), so the log binds what was signed. */
  resolution_jws_sha256: Sha256Hex,
});
export type ExecutionOutcomeResolved = z.infer<typeof ExecutionOutcomeResolved>;

/** `receipt.issued` on the task stream: the receipt and its compact EdDSA JWS over the RFC 8785 body. */
export const ReceiptIssued = z.strictObject({
  receipt: Receipt,
  jws: z.string().min(1).max(64 * 1024),
  /**
   * The IssueReceipt cause it answers. `approval_resolved` receipts are about
   * an approval, not the end of the attempt; absent on receipts issued before
   * the field existed (they all end their attempt).
   */
  cause: ReceiptCause.optional(),
});
export type ReceiptIssued = z.infer<typeof ReceiptIssued>;
