import {
  AuditRollbackProposed,
  BlockedClaimAccepted,
  BlockedClaimRefused,
  BlockedClaimSubmitted,
  CapabilityGrantClaims,
  CorrectionRecorded,
  DoneClaimAccepted,
  DoneClaimRefused,
  DoneClaimSubmitted,
  DoneVerificationRequested,
  ExecutionCompleted,
  FileOwnershipAudited,
  QuestionAsked,
  QuestionWithdrawn,
  ExecutionOutcomeResolved,
  Id,
  PolicyEvaluated,
  ReceiptResultCode,
  Timestamp,
  type EventEnvelope,
} from '@writ/contracts';
import {
  approvalDecider,
  attemptDecider,
  grantDecider,
  stepDecider,
  taskDecider,
  workingStateDecider,
  type WorkingStateState,
  type ApprovalState,
  type AttemptState,
  type GrantState,
  type StepState,
  type TaskState,
} from '@writ/kernel';
import type { ResolutionRefusal } from '@writ/runtime';
import { z } from 'zod';

/** The envelope fields the fold reads: a stored event, or one the planner is about to append. */
export type LoggedEvent = Pick<
  EventEnvelope,
  'event_id' | 'event_type' | 'entity_type' | 'entity_id' | 'step_id' | 'attempt_id' | 'task_seq' | 'payload'
>;

/** A fact appended by another service, with where it sits in the task's order. */
export interface Fact<T> {
  readonly seq: number;
  readonly event_id: string;
  readonly value: T;
}

/**
 * What the orchestrator needs of a receipt: which attempt it closes, or, for
 * an `approval_resolved` receipt, which approval it receipts (such a receipt
 * never closes its attempt).
 */
const ReceiptFactSchema = z.object({
  receipt: z
    .object({
      receipt_id: Id,
      attempt_id: Id,
      result_code: ReceiptResultCode,
      approval_ref: z.string().nullable().optional(),
      receipt_hash: z.string().optional(),
      // Parsed (ReceiptRollback) where a failed audit reads it: a receipt is placed on its attempt whatever this holds.
      rollback: z.unknown().optional(),
    })
    .loose(),
  cause: z.string().optional(),
});
export type ReceiptFact = z.infer<typeof ReceiptFactSchema>['receipt'];

/**
 * `grant.issued` as the approval service appends it: the kernel's `{ claims, at }`
 * plus the compact JWS the executor verifies (`jws`; the kernel's GrantEvent
 * does not list it yet — see the README).
 */
const GrantIssuedPayload = z.object({ claims: CapabilityGrantClaims, jws: z.string().min(1).max(16 * 1024).optional(), at: Timestamp });

const GrantRefusedPayload = z.object({ code: z.string().min(1).max(64), message: z.string().max(4_096), at: Timestamp.optional() }).loose();

export interface GrantView {
  readonly grant_id: string;
  readonly attempt_id: string;
  readonly claims: CapabilityGrantClaims;
  readonly jws: string | null;
  readonly issued_seq: number;
  /** The kernel's fold of the grant (uses claimed, revocation). */
  state: GrantState;
  /** The executor's last refusal of this grant, if any, at the executor's clock (`at`). */
  refusal: { readonly code: string; readonly message: string; readonly at: string | null } | null;
  /** task_seq of that refusal (a refusal after a `not_run` ends the re-runs). */
  refused_seq: number | null;
  /** When the first use was claimed (the executor's clock, from the event). */
  first_use_at: string | null;
}

export interface ApprovalView {
  readonly approval_id: string;
  state: ApprovalState;
}

export interface AttemptView {
  readonly attempt_id: string;
  state: AttemptState;
  /** task_seq of the attempt's latest entry into awaiting_policy (0 before any). */
  entry_seq: number;
  /** task_seq of the last attempt event that applied (its current state's start). */
  status_seq: number;
  readonly policy: Fact<PolicyEvaluated>[];
  readonly executions: Fact<ExecutionCompleted>[];
  /** `execution.outcome_resolved`: a director's resolution of an unknown outcome (Hermit 19.4). */
  readonly resolutions: Fact<ExecutionOutcomeResolved>[];
  readonly receipts: Fact<ReceiptFact>[];
}

/** A done claim of the task (seed 003 done.json) and how far it got: verification proposed, verdict. */
export interface DoneClaimView {
  readonly claim_id: string;
  readonly seq: number;
  readonly event_id: string;
  readonly submitted: DoneClaimSubmitted;
  verification: DoneVerificationRequested | null;
  verdict: { readonly kind: 'accepted'; readonly value: DoneClaimAccepted } | { readonly kind: 'refused'; readonly value: DoneClaimRefused } | null;
}

/** A blocked claim of the task (seed 003 blocked.json) and its verdict. */
export interface BlockedClaimView {
  readonly claim_id: string;
  readonly seq: number;
  readonly event_id: string;
  readonly submitted: BlockedClaimSubmitted;
  verdict: { readonly kind: 'accepted'; readonly value: BlockedClaimAccepted } | { readonly kind: 'refused'; readonly value: BlockedClaimRefused } | null;
}

/** A question a legal block put in the approval inbox. */
export interface QuestionView {
  readonly asked: QuestionAsked;
  withdrawn: boolean;
}

/** An event the fold could not place; kept for logs, never fatal. */
export interface IgnoredEvent {
  readonly seq: number;
  readonly event_type: string;
  /** `unauthorized`: a director's resolution whose signature does not hold up (it resolves nothing). */
  readonly reason: 'malformed' | 'unplaced' | 'unknown_type' | 'unauthorized';
}

const ENTRY_EVENTS = new Set(['attempt.awaiting_policy', 'attempt.policy_reentered']);

function stringField(payload: Record<string, unknown>, key: string): string | undefined {
  const value = payload[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * One task folded from its stream with the kernel's deciders: the task, its
 * steps, attempts, approvals and grants, and the facts other services
 * appended (`policy.evaluated`, `execution.completed`, `receipt.issued`)
 * attached to the attempt they are about. Mutable only through `apply`, so
 * the planner can fold what it is about to append exactly as a reader will.
 */
export class TaskView {
  task: TaskState = taskDecider.initialState();
  readonly steps = new Map<string, StepState>();
  readonly attempts = new Map<string, AttemptView>();
  readonly approvals = new Map<string, ApprovalView>();
  readonly grants = new Map<string, GrantView>();
  /** Approvals whose resolution is already receipted (`receipt.issued` with cause `approval_resolved`). */
  readonly receiptedApprovals = new Set<string>();
  /** Claims (docs/task-claims.md), in log order, by claim id. */
  readonly doneClaims = new Map<string, DoneClaimView>();
  readonly blockedClaims = new Map<string, BlockedClaimView>();
  readonly corrections: CorrectionRecorded[] = [];
  readonly questions = new Map<string, QuestionView>();
  /** The file-ownership audit of the task, once it ran. */
  ownershipAudit: { readonly event_type: string; readonly value: FileOwnershipAudited } | null = null;
  /** Rollbacks a failed audit proposed (`audit.rollback_proposed`), by the receipt they undo. */
  readonly auditRollbacks = new Map<string, AuditRollbackProposed>();
  readonly ignored: IgnoredEvent[] = [];
  /** The task's working state, and the request ids its revisions carried (a revision is written once per id). */
  workingState: WorkingStateState = workingStateDecider.initialState();
  readonly workingStateRequests = new Set<string>();
  /**
   * Director decisions in the log that failed their authority check (`@writ/runtime`
   * ResolutionAuthority), by event id: folded as if absent, so a forged `approval.granted`
   * resumes no attempt and is receipted by nobody.
   */
  readonly refusedResolutions: ReadonlyMap<string, ResolutionRefusal>;
  /** Resolution events whose refusal is on the record (`approval.resolution_refused`). */
  readonly recordedRefusals = new Set<string>();
  headSeq = 0;

  constructor(
    readonly taskId: string,
    refused: ReadonlyMap<string, ResolutionRefusal> = new Map(),
  ) {
    this.refusedResolutions = refused;
  }

  /** Folds the task's events; `refused` (event id → refusal) are left out, each noted in `ignored` as `unauthorized`. */
  static fold(taskId: string, events: readonly LoggedEvent[], refused?: ReadonlyMap<string, ResolutionRefusal>): TaskView {
    const view = new TaskView(taskId, refused);
    for (const event of events) view.apply(event);
    return view;
  }

  attempt(attemptId: string): AttemptView {
    let view = this.attempts.get(attemptId);
    if (view === undefined) {
      view = { attempt_id: attemptId, state: attemptDecider.initialState(), entry_seq: 0, status_seq: 0, policy: [], executions: [], resolutions: [], receipts: [] };
      this.attempts.set(attemptId, view);
    }
    return view;
  }

  /** The attempt that took the request `actionRequestId` (as submitted), if any. */
  attemptOfRequest(actionRequestId: string): AttemptView | undefined {
    for (const attempt of this.attempts.values()) {
      if (attempt.state.status !== 'initial' && attempt.state.submitted_request?.action_request_id === actionRequestId) return attempt;
    }
    return undefined;
  }

  /** Grants issued for `attemptId`, in log order. */
  grantsOf(attemptId: string): GrantView[] {
    return [...this.grants.values()].filter((grant) => grant.attempt_id === attemptId);
  }

  apply(event: LoggedEvent): void {
    this.headSeq = Math.max(this.headSeq, event.task_seq);
    if (this.refusedResolutions.has(event.event_id)) return this.ignore(event, 'unauthorized');
    const domainEvent = { type: event.event_type, data: event.payload };
    const [family] = event.event_type.split('.', 1);
    switch (family) {
      case 'task':
        this.task = taskDecider.evolve(this.task, domainEvent);
        return;
      case 'step': {
        const stepId = event.step_id ?? (event.entity_type === 'step' ? event.entity_id : stringField(event.payload, 'step_id'));
        if (stepId === undefined) return this.ignore(event, 'unplaced');
        this.steps.set(stepId, stepDecider.evolve(this.steps.get(stepId) ?? stepDecider.initialState(), domainEvent));
        return;
      }
      case 'attempt': {
        const attemptId = event.attempt_id ?? (event.entity_type === 'attempt' ? event.entity_id : stringField(event.payload, 'attempt_id'));
        if (attemptId === undefined) return this.ignore(event, 'unplaced');
        const attempt = this.attempt(attemptId);
        const before = attempt.state;
        attempt.state = attemptDecider.evolve(before, domainEvent);
        if (attempt.state.anomalies === before.anomalies) attempt.status_seq = event.task_seq;
        const entries = (state: AttemptState) => (state.status === 'initial' ? 0 : state.policy_entries);
        if (ENTRY_EVENTS.has(event.event_type) && entries(attempt.state) > entries(before)) attempt.entry_seq = event.task_seq;
        return;
      }
      case 'approval':
        return this.applyApproval(event, domainEvent);
      case 'grant':
        return this.applyGrant(event);
      case 'working_state':
        // Folded by the kernel as the knowledge handler folds it: the planner writes a degraded memory's candidate here (issue 17).
        this.workingState = workingStateDecider.evolve(this.workingState, domainEvent);
        if (event.event_type === 'working_state.revised') {
          const requestId = stringField(event.payload, 'request_id');
          if (requestId !== undefined) this.workingStateRequests.add(requestId);
        }
        return;
      default:
        return this.applyFact(event);
    }
  }

  private applyApproval(event: LoggedEvent, domainEvent: { type: string; data: unknown }): void {
    const approvalId = event.entity_type === 'approval' ? event.entity_id : stringField(event.payload, 'approval_id');
    if (approvalId === undefined) return this.ignore(event, 'unplaced');
    if (event.event_type === 'approval.resolution_refused') {
      const refused = stringField(event.payload, 'resolution_event_id');
      if (refused !== undefined) this.recordedRefusals.add(refused);
    }
    const approval = this.approvals.get(approvalId) ?? { approval_id: approvalId, state: approvalDecider.initialState() };
    approval.state = approvalDecider.evolve(approval.state, domainEvent);
    this.approvals.set(approvalId, approval);
  }

  private applyGrant(event: LoggedEvent): void {
    if (event.event_type === 'grant.issued') {
      const parsed = GrantIssuedPayload.safeParse(event.payload);
      if (!parsed.success) return this.ignore(event, 'malformed');
      const { claims, jws, at } = parsed.data;
      if (this.grants.has(claims.jti)) return this.ignore(event, 'unplaced');
      this.grants.set(claims.jti, {
        grant_id: claims.jti,
        attempt_id: claims.attempt_id,
        claims,
        jws: jws ?? null,
        issued_seq: event.task_seq,
        // The kernel's grant.issued is `{ claims, at }`; the JWS rides beside it.
        state: grantDecider.evolve(grantDecider.initialState(), { type: 'grant.issued', data: { claims, at } }),
        refusal: null,
        refused_seq: null,
        first_use_at: null,
      });
      return;
    }
    const grantId = event.entity_type === 'grant' ? event.entity_id : stringField(event.payload, 'grant_id');
    const grant = grantId === undefined ? undefined : this.grants.get(grantId);
    if (grant === undefined) return this.ignore(event, 'unplaced');
    const usesBefore = grant.state.status === 'initial' ? 0 : grant.state.uses.length;
    grant.state = grantDecider.evolve(grant.state, { type: event.event_type, data: event.payload });
    if (event.event_type === 'grant.use_claimed' && grant.state.status !== 'initial' && grant.state.uses.length > usesBefore) {
      grant.first_use_at ??= grant.state.uses[0]?.at ?? null;
    }
    if (event.event_type === 'grant.refused') {
      const refusal = GrantRefusedPayload.safeParse(event.payload);
      grant.refusal = refusal.success
        ? { code: refusal.data.code, message: refusal.data.message, at: refusal.data.at ?? null }
        : { code: 'GRANT_REFUSED', message: 'the executor refused the grant', at: null };
      grant.refused_seq = event.task_seq;
    }
  }

  private applyFact(event: LoggedEvent): void {
    switch (event.event_type) {
      case 'policy.evaluated': {
        const parsed = PolicyEvaluated.safeParse(event.payload);
        if (!parsed.success) return this.ignore(event, 'malformed');
        this.attempt(parsed.data.policy_result.attempt_id).policy.push({ seq: event.task_seq, event_id: event.event_id, value: parsed.data });
        return;
      }
      case 'execution.completed': {
        const parsed = ExecutionCompleted.safeParse(event.payload);
        if (!parsed.success) return this.ignore(event, 'malformed');
        const attemptId = event.attempt_id ?? this.grants.get(parsed.data.grant_id)?.attempt_id;
        if (attemptId === undefined) return this.ignore(event, 'unplaced');
        this.attempt(attemptId).executions.push({ seq: event.task_seq, event_id: event.event_id, value: parsed.data });
        return;
      }
      case 'execution.outcome_resolved': {
        const parsed = ExecutionOutcomeResolved.safeParse(event.payload);
        if (!parsed.success) return this.ignore(event, 'malformed');
        const attemptId = event.attempt_id ?? this.grants.get(parsed.data.grant_id)?.attempt_id;
        if (attemptId === undefined) return this.ignore(event, 'unplaced');
        this.attempt(attemptId).resolutions.push({ seq: event.task_seq, event_id: event.event_id, value: parsed.data });
        return;
      }
      case 'receipt.issued': {
        const parsed = ReceiptFactSchema.safeParse(event.payload);
        if (!parsed.success) return this.ignore(event, 'malformed');
        if (parsed.data.cause === 'approval_resolved') {
          const approvalRef = parsed.data.receipt.approval_ref;
          if (typeof approvalRef !== 'string' || !approvalRef.startsWith('approval:')) return this.ignore(event, 'unplaced');
          this.receiptedApprovals.add(approvalRef.slice('approval:'.length));
          return;
        }
        this.attempt(parsed.data.receipt.attempt_id).receipts.push({ seq: event.task_seq, event_id: event.event_id, value: parsed.data.receipt });
        return;
      }
      default:
        return this.applyClaimFact(event);
    }
  }

  /** Claims, their verdicts, questions and the ownership audit (task-claims contracts). */
  private applyClaimFact(event: LoggedEvent): void {
    const parse = <T>(schema: { safeParse: (value: unknown) => { success: true; data: T } | { success: false } }): T | undefined => {
      const parsed = schema.safeParse(event.payload);
      if (!parsed.success) this.ignore(event, 'malformed');
      return parsed.success ? parsed.data : undefined;
    };
    const doneClaim = (claimId: string) => this.doneClaims.get(claimId);
    switch (event.event_type) {
      case 'claim.done_submitted': {
        const value = parse(DoneClaimSubmitted);
        if (value === undefined || this.doneClaims.has(value.claim_id)) return;
        this.doneClaims.set(value.claim_id, { claim_id: value.claim_id, seq: event.task_seq, event_id: event.event_id, submitted: value, verification: null, verdict: null });
        return;
      }
      case 'claim.done_verification_requested': {
        const value = parse(DoneVerificationRequested);
        const claim = value === undefined ? undefined : doneClaim(value.claim_id);
        if (value === undefined) return;
        if (claim === undefined) return this.ignore(event, 'unplaced');
        claim.verification ??= value;
        return;
      }
      case 'claim.done_accepted':
      case 'claim.done_refused': {
        const accepted = event.event_type === 'claim.done_accepted';
        const value = accepted ? parse(DoneClaimAccepted) : parse(DoneClaimRefused);
        if (value === undefined) return;
        const claim = doneClaim(value.claim_id);
        if (claim === undefined) return this.ignore(event, 'unplaced');
        claim.verdict ??= accepted ? { kind: 'accepted', value: value as DoneClaimAccepted } : { kind: 'refused', value: value as DoneClaimRefused };
        return;
      }
      case 'claim.blocked_submitted': {
        const value = parse(BlockedClaimSubmitted);
        if (value === undefined || this.blockedClaims.has(value.claim_id)) return;
        this.blockedClaims.set(value.claim_id, { claim_id: value.claim_id, seq: event.task_seq, event_id: event.event_id, submitted: value, verdict: null });
        return;
      }
      case 'claim.blocked_accepted':
      case 'claim.blocked_refused': {
        const accepted = event.event_type === 'claim.blocked_accepted';
        const value = accepted ? parse(BlockedClaimAccepted) : parse(BlockedClaimRefused);
        if (value === undefined) return;
        const claim = this.blockedClaims.get(value.claim_id);
        if (claim === undefined) return this.ignore(event, 'unplaced');
        claim.verdict ??= accepted ? { kind: 'accepted', value: value as BlockedClaimAccepted } : { kind: 'refused', value: value as BlockedClaimRefused };
        return;
      }
      case 'claim.correction_recorded': {
        const value = parse(CorrectionRecorded);
        if (value !== undefined && !this.corrections.some((c) => c.claim_id === value.claim_id)) this.corrections.push(value);
        return;
      }
      case 'question.asked': {
        const value = parse(QuestionAsked);
        if (value !== undefined && !this.questions.has(value.approval_id)) this.questions.set(value.approval_id, { asked: value, withdrawn: false });
        return;
      }
      case 'question.withdrawn': {
        const value = parse(QuestionWithdrawn);
        const question = value === undefined ? undefined : this.questions.get(value.approval_id);
        if (value === undefined) return;
        if (question === undefined) return this.ignore(event, 'unplaced');
        question.withdrawn = true;
        return;
      }
      case 'audit.file_ownership_passed':
      case 'audit.file_ownership_failed': {
        const value = parse(FileOwnershipAudited);
        if (value !== undefined) this.ownershipAudit ??= { event_type: event.event_type, value };
        return;
      }
      case 'audit.rollback_proposed': {
        const value = parse(AuditRollbackProposed);
        if (value !== undefined && !this.auditRollbacks.has(value.receipt_id)) this.auditRollbacks.set(value.receipt_id, value);
        return;
      }
      default:
        return this.ignore(event, 'unknown_type');
    }
  }

  private ignore(event: LoggedEvent, reason: IgnoredEvent['reason']): void {
    this.ignored.push({ seq: event.task_seq, event_type: event.event_type, reason });
  }
}
