import { z } from 'zod';
import { ChangedFile } from '../governed-path/fact-events.js';
import { Id, Sha256Hex, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { FilePath, Text } from '../text.js';
import { BlockedClaim, HumanRequiredFor } from './blocked-claim.js';
import { Correction } from './correction.js';
import { DoneClaim, DoneClaimStatus } from './done-claim.js';

/**
 * Why a done claim was refused: one code per forbidden pattern of seed 003
 * (prompt-protocols, "Status values + forbidden patterns"; the no-idle-wait
 * terminal states; idempotency) and per fact Writ checks itself.
 */
export const DoneRefusalCode = z.enum([
  /** `done_clean` / `pending` without an exit 0 of the brief's verify command observed by Writ (not run, denied, unknown outcome, timed out). */
  'DONE_VERIFY_NOT_OBSERVED',
  /** Writ ran the verify command in the task's cell and it exited non-zero. */
  'DONE_VERIFY_FAILED',
  /** `done_clean` / `pending` whose own evidence says `verify_exit_code != 0`. */
  'DONE_VERIFY_EXIT_NONZERO',
  /** The evidence names another command than the brief's verify_command. */
  'DONE_VERIFY_COMMAND_MISMATCH',
  /** `done_clean` with `regressions[]` non-empty. */
  'DONE_REGRESSIONS',
  /** `done_clean` with a required audit gate (brief or claim) missing from `gates_passed`. */
  'DONE_AUDIT_GATE_MISSING',
  /** `done_clean` whose audit verdict is not `satisfied`. */
  'DONE_AUDIT_UNSATISFIED',
  /** `done_clean` after a ship that returned `failed` or `frozen`. */
  'DONE_AFTER_FAILED_SHIP',
  /** The brief asked for a ship and a `done_clean` claim reports none. */
  'DONE_SHIP_NOT_REPORTED',
  /** A ship ran although the brief did not ask for one. */
  'DONE_SHIP_NOT_AUTHORIZED',
  /** `pending` with an empty `pending_actions[]`. */
  'DONE_PENDING_WITHOUT_ACTIONS',
  /** `failed` with an empty `evidence.verify_stderr` (seed: a failed terminal state carries its stderr). */
  'DONE_FAILED_WITHOUT_STDERR',
  /** `mission` is not a copy of the brief's mission. */
  'DONE_MISSION_MISMATCH',
  /** A done claim already stands for the task (being verified, or accepted); a later fix is a correction record. */
  'DONE_ALREADY_CLAIMED',
  /** The task has ended (completed, failed, cancelled) without an accepted claim. */
  'DONE_TASK_ENDED',
]);
export type DoneRefusalCode = z.infer<typeof DoneRefusalCode>;

/** Why a blocked claim is illegal (seed 003 "Legal vs illegal blocks", "no idle wait"). */
export const BlockRefusalCode = z.enum([
  /** The reason is not a genuine block (credential missing, destructive op outside scope, scope expansion, semantic ambiguity). */
  'BLOCK_NOT_GENUINE',
  /** The question is a preference ("confirm before proceeding", "which option do you prefer", "validate the approach first", "should I proceed?"). */
  'BLOCK_PREFERENCE',
  /** No fallback action is stated. */
  'BLOCK_NO_FALLBACK',
  /** The fallback is not executing: no action of the task is in flight (or the named fallback request is not). */
  'BLOCK_FALLBACK_NOT_EXECUTING',
  /** `can_resume_without_answer` is false: an idle wait. */
  'BLOCK_CANNOT_RESUME',
  /** The question is empty. */
  'BLOCK_QUESTION_MISSING',
  /** The task has ended. */
  'BLOCK_TASK_ENDED',
]);
export type BlockRefusalCode = z.infer<typeof BlockRefusalCode>;

export const DoneRefusal = z.strictObject({ code: DoneRefusalCode, message: Text });
export type DoneRefusal = z.infer<typeof DoneRefusal>;
export const BlockRefusal = z.strictObject({ code: BlockRefusalCode, message: Text });
export type BlockRefusal = z.infer<typeof BlockRefusal>;

/** What every submitted claim records besides the claim itself. */
const Submission = {
  /** `dcl-` / `bcl-` / `cor-` + the first 32 hex of SHA-256 of the signed claim: the same JWS is the same claim. */
  claim_id: Id,
  /** The task owner who signed it. */
  claimed_by: Id,
  claimed_at: Timestamp,
  /** SHA-256 of the compact JWS, binding the log to what was signed. */
  claim_jws_sha256: Sha256Hex,
};

/** `claim.done_submitted` (task stream, entity task): a signed done.json, recorded before it is judged. Secret-looking values are redacted. */
export const DoneClaimSubmitted = z.strictObject({ ...Submission, claim: DoneClaim });
export type DoneClaimSubmitted = z.infer<typeof DoneClaimSubmitted>;

/** The verify run Writ observed: the orchestrator's execute_command attempt and its execution. */
export const VerifyObservation = z.strictObject({
  action_request_id: Id,
  attempt_id: Id,
  /** `observed`: an exit code Writ recorded itself; `unobserved`: denied, refused, unknown outcome, timed out. */
  status: z.enum(['observed', 'unobserved']),
  exit_code: z.int().nullable(),
  execution_event_id: z.string().min(1).max(256).nullable(),
  reason: Text.optional(),
});
export type VerifyObservation = z.infer<typeof VerifyObservation>;

/** `claim.done_verification_requested`: the orchestrator proposed the brief's verify command as a governed action of the task. */
export const DoneVerificationRequested = z.strictObject({
  claim_id: Id,
  action_request_id: Id,
  step_id: Id,
  attempt_id: Id,
  argv: z.array(z.string().max(LIMITS.arg)).min(1).max(LIMITS.argvItems),
  at: Timestamp,
});
export type DoneVerificationRequested = z.infer<typeof DoneVerificationRequested>;

/** `claim.done_accepted`: the claim holds; the task closes (after the file-ownership audit). */
export const DoneClaimAccepted = z.strictObject({
  claim_id: Id,
  status: DoneClaimStatus,
  verification: VerifyObservation.nullable(),
  pending_actions: z.array(Text).max(LIMITS.listItems),
  decision_id: Id,
  at: Timestamp,
});
export type DoneClaimAccepted = z.infer<typeof DoneClaimAccepted>;

/** `claim.done_refused`: every violated rule; the task is reopened (stays running) and the refusal is a decision. */
export const DoneClaimRefused = z.strictObject({
  claim_id: Id,
  refusals: z.array(DoneRefusal).min(1).max(LIMITS.shortListItems),
  verification: VerifyObservation.nullable(),
  /** True when the task stays open for a new claim; false when it had already ended. */
  reopened: z.boolean(),
  decision_id: Id,
  at: Timestamp,
});
export type DoneClaimRefused = z.infer<typeof DoneClaimRefused>;

/** `claim.blocked_submitted`: a signed blocked.json, recorded before it is judged. */
export const BlockedClaimSubmitted = z.strictObject({ ...Submission, claim: BlockedClaim });
export type BlockedClaimSubmitted = z.infer<typeof BlockedClaimSubmitted>;

/** `claim.blocked_accepted`: a legal block; its question is in the approval inbox. */
export const BlockedClaimAccepted = z.strictObject({ claim_id: Id, question_id: Id, at: Timestamp });
export type BlockedClaimAccepted = z.infer<typeof BlockedClaimAccepted>;

/** `claim.blocked_refused`: an illegal block (a preference, an idle wait): decide and proceed. */
export const BlockedClaimRefused = z.strictObject({ claim_id: Id, refusals: z.array(BlockRefusal).min(1).max(LIMITS.shortListItems), decision_id: Id, at: Timestamp });
export type BlockedClaimRefused = z.infer<typeof BlockedClaimRefused>;

/**
 * `question.asked` (entity approval, id = `approval_id`): a legal block's
 * question for a human, an approval-like record of kind `question` in the
 * inbox. It authorizes nothing; the receiver runs its fallback meanwhile.
 */
export const QuestionAsked = z.strictObject({
  approval_id: Id.describe('The question id, in the approval inbox namespace (`qst-…`).'),
  kind: z.literal('question'),
  claim_id: Id,
  question: Text,
  best_guess: z.string().max(LIMITS.text),
  fallback_action: Text,
  human_required_for: HumanRequiredFor.nullable(),
  requested_by: Id,
  at: Timestamp,
});
export type QuestionAsked = z.infer<typeof QuestionAsked>;

/** `question.withdrawn`: the task ended while its question was open. */
export const QuestionWithdrawn = z.strictObject({ approval_id: Id, reason: Text, at: Timestamp });
export type QuestionWithdrawn = z.infer<typeof QuestionWithdrawn>;

/** `claim.correction_recorded`: a correction of a done claim, kept beside it (never rewriting it). */
export const CorrectionRecorded = z.strictObject({ ...Submission, correction: Correction });
export type CorrectionRecorded = z.infer<typeof CorrectionRecorded>;

/** A changed file the audit flags, with the execution that changed it. */
export const AuditedChange = ChangedFile.extend({ execution_event_id: z.string().min(1).max(256) });
export type AuditedChange = z.infer<typeof AuditedChange>;

/** One rollback a failed audit asks for: the receipt it undoes, the governed action that will, and the flagged paths it puts back. */
export const AuditRollbackRef = z.strictObject({ receipt_id: Id, action_request_id: Id, paths: z.array(FilePath).min(1).max(LIMITS.listItems) });
export type AuditRollbackRef = z.infer<typeof AuditRollbackRef>;

/** A flagged path Writ cannot put back, the receipt of the action that changed it (null: none), and why. */
export const UnrollablePath = z.strictObject({ path: FilePath, receipt_id: Id.nullable(), reason: Text });
export type UnrollablePath = z.infer<typeof UnrollablePath>;

/**
 * What the flagged changes need to be undone. `proposed`: the receipts in
 * `rollbacks` name a rollback method, and the orchestrator proposes each as a
 * governed `rollback` action of the task (latest first; the task ends once they
 * have); `unrollable` lists the paths no receipt can undo (a command modified
 * them without a pre-image...). `unavailable`: no flagged path can be put back;
 * `restore` lists the content a manual restore needs (path, hash of the bytes
 * to put back, null: remove).
 */
export const SacredRollback = z.strictObject({
  status: z.enum(['not_needed', 'unavailable', 'proposed']),
  reason: Text.optional(),
  restore: z.array(z.strictObject({ path: FilePath, before_sha256: Sha256Hex.nullable() })).max(LIMITS.listItems),
  rollbacks: z.array(AuditRollbackRef).max(LIMITS.listItems).optional(),
  unrollable: z.array(UnrollablePath).max(LIMITS.listItems).optional(),
});
export type SacredRollback = z.infer<typeof SacredRollback>;

/**
 * `audit.file_ownership_passed` / `audit.file_ownership_failed` (seed 003
 * file-ownership audit): every file the task's executions changed against the
 * task's files_owned and the Sacred Scopes, when the task closes.
 */
export const FileOwnershipAudited = z.strictObject({
  claim_id: Id.nullable(),
  files_owned: z.array(FilePath).max(LIMITS.listItems),
  /** Executions whose changed files were audited (`execution.completed` event ids). */
  executions: z.int().nonnegative(),
  changed_files: z.int().nonnegative(),
  modified_not_owned: z.array(AuditedChange).max(LIMITS.listItems),
  sacred_modified: z.array(AuditedChange).max(LIMITS.listItems),
  /** Executions whose workspace diff was not captured: the audit cannot vouch for them, so it fails closed. */
  unaudited_executions: z.array(z.string().min(1).max(256)).max(LIMITS.listItems),
  rollback: SacredRollback,
  decision_id: Id.nullable(),
  at: Timestamp,
});
export type FileOwnershipAudited = z.infer<typeof FileOwnershipAudited>;

/**
 * `audit.rollback_proposed`: after a failed file-ownership audit, the
 * orchestrator proposed a receipt's rollback as a governed action of the task
 * (a step `rollback` and its attempt awaiting policy, proposed by the
 * orchestrator's principal), one receipt at a time, latest first.
 */
export const AuditRollbackProposed = z.strictObject({
  receipt_id: Id,
  receipt_hash: Sha256Hex,
  action_request_id: Id,
  step_id: Id,
  attempt_id: Id,
  paths: z.array(FilePath).min(1).max(LIMITS.listItems),
  decision_id: Id,
  at: Timestamp,
});
export type AuditRollbackProposed = z.infer<typeof AuditRollbackProposed>;
