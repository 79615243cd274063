import { ATTEMPT_TERMINAL_STATES, safeParseActionRequest, type ActionRequest, type AttemptStatus, type ExecutionMode } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, instantMs, unknownCommand } from '../shared/instant.js';
import type { SettledUse } from '../grant/grant.decider.js';
import { AttemptError } from './attempt.errors.js';
import {
  ATTEMPT_EVENT_EDGES,
  AttemptEvent,
  type AttemptEventType,
  type CodedReason,
  type DriftCause,
  type ExecutionOutcome,
  type PolicyDecision,
  type SettledResult,
} from './attempt.events.js';

type NoData = Readonly<Record<string, never>>;

/** How an approval the attempt waits for was resolved (Approval statuses, Hermit 8.9). */
export type ApprovalResolution = 'granted' | 'denied' | 'expired' | 'cancelled' | 'invalidated';

/** How a drift is recovered: re-enter policy with the same attempt, or supersede it (Hermit 11.5). */
export type DriftRecovery = 'reenter_policy' | 'supersede';

/**
 * Commands of the StepAttempt aggregate. The path of one attempt:
 * `create-attempt` → `lease-workspace` → (`compile-context` → `start-reasoning`) →
 * `submit-action` → `record-policy-result` → (`record-approval-resolution`) →
 * `attach-grant` → `start-execution` → (`attach-renewal`) → `report-execution-outcome` →
 * (`record-unknown-outcome-receipt`) → `settle-observation` → `record-receipt`.
 */
export type AttemptCommand =
  | Command<
      'create-attempt',
      { readonly attempt_id: string; readonly task_id: string; readonly step_id: string; readonly attempt_no: number; readonly idempotency_key: string }
    >
  | Command<'lease-workspace', { readonly workspace_lease_ref: string }>
  | Command<'compile-context', NoData>
  | Command<'start-reasoning', { readonly context_pack_ref: string }>
  | Command<'submit-action', { readonly action_request: ActionRequest }>
  | Command<
      'record-policy-result',
      {
        readonly policy: PolicyDecision;
        /** Required for require_approval: the Approval the attempt will wait for. */
        readonly approval_id?: string;
        /** Why policy denied (deny only). */
        readonly reasons?: readonly CodedReason[];
        /** Required for downgrade: the lower-risk request the attempt continues with (Hermit 11.4). */
        readonly rewritten_request?: ActionRequest;
        readonly restricted_mode?: ExecutionMode;
        readonly summary?: string;
      }
    >
  | Command<
      'record-approval-resolution',
      {
        readonly approval_id: string;
        readonly resolution: ApprovalResolution;
        /** The granted approval revalidated the state witness (required when policy asked for one). */
        readonly witness_validated?: boolean;
        /** The policy version in force now; a different one than the attempt's re-enters policy (Hermit 19.6). */
        readonly policy_version?: string;
        /** For `invalidated`: how to recover; re-enter policy unless told to supersede. */
        readonly recovery?: DriftRecovery;
        readonly superseded_by_attempt_id?: string;
      }
    >
  | Command<'report-drift', { readonly cause: DriftCause; readonly recovery: DriftRecovery; readonly superseded_by_attempt_id?: string; readonly note?: string }>
  | Command<'attach-grant', { readonly grant_id: string; readonly expires_at: string }>
  /** While executing: a renewal in place of the held grant, on what the log shows of that grant's uses. */
  | Command<'attach-renewal', { readonly grant_id: string; readonly expires_at: string; readonly replaces: ReplacedGrant }>
  | Command<'start-execution', { readonly grant_id: string }>
  | Command<'report-execution-outcome', { readonly outcome: ExecutionOutcome; readonly output_refs?: readonly string[] }>
  | Command<'record-unknown-outcome-receipt', { readonly receipt_ref: string }>
  | Command<'settle-observation', { readonly result_code: SettledResult; readonly resolved_by?: string; readonly evidence_refs?: readonly string[] }>
  | Command<'record-receipt', { readonly receipt_ref: string }>
  | Command<'fail-attempt', { readonly reason_code: string; readonly reason: string }>
  | Command<'cancel-attempt', { readonly reason: string }>
  | Command<'supersede-attempt', { readonly superseded_by_attempt_id?: string; readonly note?: string }>;

export type AttemptCommandType = AttemptCommand['type'];

export interface NoAttempt {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

/**
 * What the log shows of the grant an executing attempt holds when a renewal is to replace it
 * (`attach-renewal`): whether it was revoked, and every claimed use of it with how it stands
 * (the grant kernel's `useSettlements`). The renewal itself was minted by the approval service on
 * the same authority; the attempt only decides whether nothing of the action can have run.
 */
export interface ReplacedGrant {
  readonly grant_id: string;
  readonly revoked: boolean;
  readonly uses: readonly SettledUse[];
}

export interface AttachedGrant {
  readonly grant_id: string;
  readonly expires_at: string;
}

export interface AttemptRecord {
  readonly status: AttemptStatus;
  readonly attempt_id: string;
  readonly task_id: string;
  readonly step_id: string;
  readonly attempt_no: number;
  readonly idempotency_key: string;
  readonly workspace_lease_ref: string | null;
  readonly context_pack_ref: string | null;
  /** The request the attempt will execute: the submitted one, or its downgrade. */
  readonly action_request: ActionRequest | null;
  /** The request as submitted, kept when a downgrade rewrote it. */
  readonly submitted_request: ActionRequest | null;
  readonly restricted_mode: ExecutionMode | null;
  /** The policy result in force; cleared when policy is re-entered. */
  readonly policy: PolicyDecision | null;
  readonly authorized_via: 'policy_allow' | 'policy_downgrade' | 'approval' | null;
  readonly approval_id: string | null;
  readonly grant: AttachedGrant | null;
  /** How many times the attempt entered awaiting_policy (re-entries after drift included). */
  readonly policy_entries: number;
  readonly last_drift: DriftCause | null;
  readonly execution_outcome: ExecutionOutcome | null;
  /** The effect may or may not have happened: replay is blocked until settled on evidence. */
  readonly outcome_uncertain: boolean;
  readonly unknown_outcome_receipt_ref: string | null;
  readonly output_refs: readonly string[];
  readonly result_code: SettledResult | null;
  readonly receipt_ref: string | null;
  readonly failure: CodedReason | null;
  readonly superseded_by_attempt_id: string | null;
  readonly created_at: string;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  readonly updated_at: string;
  readonly anomalies: readonly Anomaly[];
}

export type AttemptState = NoAttempt | AttemptRecord;

export function initialState(): AttemptState {
  return { status: 'initial', anomalies: [] };
}

export function isAttemptTerminal(state: AttemptState): boolean {
  return state.status !== 'initial' && ATTEMPT_TERMINAL_STATES.includes(state.status);
}

function requireEdge(state: AttemptRecord, eventType: Exclude<AttemptEventType, 'attempt.created'>, command: string): void {
  const edge = ATTEMPT_EVENT_EDGES[eventType];
  if (edge.from.includes(state.status)) return;
  const details = { attempt_id: state.attempt_id, status: state.status, command };
  if (ATTEMPT_TERMINAL_STATES.includes(state.status)) {
    throw new AttemptError('ATTEMPT_TERMINAL', `attempt ${state.attempt_id} is ${state.status}; a retry is a new attempt`, { details });
  }
  throw new AttemptError('ATTEMPT_TRANSITION_NOT_ALLOWED', `attempt ${state.attempt_id} cannot ${command} while ${state.status}`, { details });
}

function parseRequest(request: unknown, state: AttemptRecord, what: string): ActionRequest {
  const parsed = safeParseActionRequest(request);
  if (!parsed.ok) {
    throw new AttemptError('ATTEMPT_REQUEST_INVALID', `${what} is not a valid ActionRequest`, { cause: parsed.error, details: { issues: parsed.error.issues } });
  }
  if (parsed.value.task_id !== undefined && parsed.value.task_id !== state.task_id) {
    throw new AttemptError('ATTEMPT_REQUEST_INVALID', `${what} belongs to task ${parsed.value.task_id}, not ${state.task_id}`, {
      details: { task_id: parsed.value.task_id },
    });
  }
  return parsed.value;
}

function decidePolicyResult(command: Extract<AttemptCommand, { type: 'record-policy-result' }>, state: AttemptRecord, at: string): AttemptEvent[] {
  const { policy } = command.data;
  // Every policy outcome answers `awaiting_policy`, and only it (edges of the table differ per outcome).
  requireEdge(state, 'attempt.policy_denied', command.type);
  switch (policy.outcome) {
    case 'allow':
      requireEdge(state, 'attempt.authorized', command.type);
      return [{ type: 'attempt.authorized', data: { via: 'policy_allow', policy, at } }];
    case 'require_approval': {
      requireEdge(state, 'attempt.awaiting_approval', command.type);
      const approvalId = command.data.approval_id;
      if (approvalId === undefined) {
        throw new AttemptError('ATTEMPT_POLICY_RESULT_INVALID', 'require_approval needs the approval_id the attempt will wait for');
      }
      return [{ type: 'attempt.awaiting_approval', data: { policy, approval_id: approvalId, at } }];
    }
    case 'deny':
      requireEdge(state, 'attempt.policy_denied', command.type);
      return [{ type: 'attempt.policy_denied', data: { policy, reasons: [...(command.data.reasons ?? [])], at } }];
    case 'downgrade': {
      requireEdge(state, 'attempt.downgraded', command.type);
      if (command.data.rewritten_request === undefined) {
        throw new AttemptError('ATTEMPT_POLICY_RESULT_INVALID', 'downgrade needs the rewritten, lower-risk request (Hermit 11.4)');
      }
      const rewritten = parseRequest(command.data.rewritten_request, state, 'the rewritten request');
      const summary = command.data.summary ?? `${state.action_request?.action_class ?? 'request'} downgraded to ${rewritten.action_class}`;
      const restricted = command.data.restricted_mode === undefined ? {} : { restricted_mode: command.data.restricted_mode };
      return [{ type: 'attempt.downgraded', data: { policy, action_request: rewritten, ...restricted, summary, at } }];
    }
    default:
      throw new AttemptError('ATTEMPT_POLICY_RESULT_INVALID', `unknown policy outcome ${JSON.stringify(policy.outcome)}`);
  }
}

function reenterOrSupersede(
  state: AttemptRecord,
  command: string,
  cause: DriftCause,
  recovery: DriftRecovery,
  at: string,
  extra: { superseded_by_attempt_id?: string | undefined; note?: string | undefined },
): AttemptEvent[] {
  const optional = {
    ...(extra.note === undefined ? {} : { note: extra.note }),
  };
  if (recovery === 'supersede') {
    requireEdge(state, 'attempt.superseded', command);
    const by = extra.superseded_by_attempt_id === undefined ? {} : { superseded_by_attempt_id: extra.superseded_by_attempt_id };
    return [{ type: 'attempt.superseded', data: { cause, ...by, ...optional, at } }];
  }
  requireEdge(state, 'attempt.policy_reentered', command);
  return [{ type: 'attempt.policy_reentered', data: { cause, ...optional, at } }];
}

function decideApprovalResolution(command: Extract<AttemptCommand, { type: 'record-approval-resolution' }>, state: AttemptRecord, at: string): AttemptEvent[] {
  const { approval_id: approvalId, resolution } = command.data;
  // Every resolution answers the pause of Hermit 12.4: only an attempt awaiting approval takes one.
  requireEdge(state, 'attempt.approval_denied', command.type);
  if (approvalId !== state.approval_id) {
    throw new AttemptError('ATTEMPT_APPROVAL_MISMATCH', `attempt ${state.attempt_id} waits for approval ${state.approval_id}, not ${approvalId}`, {
      details: { expected: state.approval_id, actual: approvalId },
    });
  }
  switch (resolution) {
    case 'granted': {
      const policyVersion = command.data.policy_version;
      if (policyVersion !== undefined && state.policy !== null && policyVersion !== state.policy.policy_version) {
        return reenterOrSupersede(state, command.type, 'policy_drift', 'reenter_policy', at, {
          note: `policy version ${state.policy.policy_version} is now ${policyVersion}`,
        });
      }
      if (state.policy?.witness_required === true && command.data.witness_validated !== true) {
        throw new AttemptError('ATTEMPT_WITNESS_NOT_VALIDATED', `attempt ${state.attempt_id} needs its state witness revalidated before authorization`);
      }
      requireEdge(state, 'attempt.authorized', command.type);
      return [{ type: 'attempt.authorized', data: { via: 'approval', approval_id: approvalId, at } }];
    }
    case 'denied':
      return [{ type: 'attempt.approval_denied', data: { approval_id: approvalId, at } }];
    case 'expired':
      return [{ type: 'attempt.approval_expired', data: { approval_id: approvalId, at } }];
    case 'cancelled':
      requireEdge(state, 'attempt.cancelled', command.type);
      return [{ type: 'attempt.cancelled', data: { reason: `approval ${approvalId} was cancelled`, at } }];
    case 'invalidated':
      return reenterOrSupersede(state, command.type, 'approval_invalidated', command.data.recovery ?? 'reenter_policy', at, {
        superseded_by_attempt_id: command.data.superseded_by_attempt_id,
      });
    default:
      return unknownCommand(`record-approval-resolution/${String(resolution)}`, 'the attempt decider');
  }
}

function decideFor(command: AttemptCommand, state: AttemptRecord, now: number): AttemptEvent[] {
  const at = command.metadata.now;
  switch (command.type) {
    case 'create-attempt':
      throw new AttemptError('ATTEMPT_ALREADY_EXISTS', `attempt ${state.attempt_id} already exists`);
    case 'lease-workspace':
      requireEdge(state, 'attempt.leased', command.type);
      return [{ type: 'attempt.leased', data: { workspace_lease_ref: command.data.workspace_lease_ref, at } }];
    case 'compile-context':
      requireEdge(state, 'attempt.compiling_context', command.type);
      return [{ type: 'attempt.compiling_context', data: { at } }];
    case 'start-reasoning':
      requireEdge(state, 'attempt.reasoning', command.type);
      return [{ type: 'attempt.reasoning', data: { context_pack_ref: command.data.context_pack_ref, at } }];
    case 'submit-action': {
      requireEdge(state, 'attempt.awaiting_policy', command.type);
      const request = parseRequest(command.data.action_request, state, 'the submitted request');
      return [{ type: 'attempt.awaiting_policy', data: { action_request: request, at } }];
    }
    case 'record-policy-result':
      return decidePolicyResult(command, state, at);
    case 'record-approval-resolution':
      return decideApprovalResolution(command, state, at);
    case 'report-drift':
      return reenterOrSupersede(state, command.type, command.data.cause, command.data.recovery, at, command.data);
    case 'attach-grant': {
      requireEdge(state, 'attempt.grant_attached', command.type);
      if (state.grant !== null && instantMs(state.grant.expires_at, 'grant.expires_at') > now) {
        throw new AttemptError('ATTEMPT_GRANT_ALREADY_ATTACHED', `attempt ${state.attempt_id} already holds the live grant ${state.grant.grant_id}`, {
          details: { grant_id: state.grant.grant_id },
        });
      }
      if (instantMs(command.data.expires_at, 'data.expires_at') <= now) {
        throw new AttemptError('ATTEMPT_GRANT_EXPIRED', `grant ${command.data.grant_id} is already expired`, { details: { grant_id: command.data.grant_id } });
      }
      return [{ type: 'attempt.grant_attached', data: { grant_id: command.data.grant_id, expires_at: command.data.expires_at, at } }];
    }
    case 'attach-renewal':
      return decideRenewal(command, state, now, at);
    case 'start-execution': {
      requireEdge(state, 'attempt.executing', command.type);
      if (state.grant === null) throw new AttemptError('ATTEMPT_GRANT_MISSING', `attempt ${state.attempt_id} has no grant: no side effect without one`);
      if (state.grant.grant_id !== command.data.grant_id) {
        throw new AttemptError('ATTEMPT_GRANT_MISMATCH', `attempt ${state.attempt_id} holds grant ${state.grant.grant_id}, not ${command.data.grant_id}`, {
          details: { expected: state.grant.grant_id, actual: command.data.grant_id },
        });
      }
      if (instantMs(state.grant.expires_at, 'grant.expires_at') <= now) {
        throw new AttemptError('ATTEMPT_GRANT_EXPIRED', `grant ${state.grant.grant_id} expired at ${state.grant.expires_at}`, {
          details: { grant_id: state.grant.grant_id, expires_at: state.grant.expires_at },
        });
      }
      return [{ type: 'attempt.executing', data: { grant_id: command.data.grant_id, at } }];
    }
    case 'report-execution-outcome':
      requireEdge(state, 'attempt.observing', command.type);
      return [{ type: 'attempt.observing', data: { execution_outcome: command.data.outcome, output_refs: [...(command.data.output_refs ?? [])], at } }];
    case 'record-unknown-outcome-receipt':
      requireEdge(state, 'attempt.unknown_outcome_receipted', command.type);
      if (!state.outcome_uncertain || state.unknown_outcome_receipt_ref !== null) {
        throw new AttemptError('ATTEMPT_OUTCOME_NOT_UNCERTAIN', `attempt ${state.attempt_id} has no unreceipted uncertain outcome`);
      }
      return [{ type: 'attempt.unknown_outcome_receipted', data: { receipt_ref: command.data.receipt_ref, at } }];
    case 'settle-observation': {
      requireEdge(state, 'attempt.receipt_pending', command.type);
      const evidence = [...(command.data.evidence_refs ?? [])];
      if (state.outcome_uncertain && evidence.length === 0) {
        throw new AttemptError('ATTEMPT_RESOLUTION_EVIDENCE_MISSING', `attempt ${state.attempt_id} had an unknown outcome; settle it on evidence`);
      }
      const by = command.data.resolved_by === undefined ? {} : { resolved_by: command.data.resolved_by };
      return [{ type: 'attempt.receipt_pending', data: { result_code: command.data.result_code, ...by, evidence_refs: evidence, at } }];
    }
    case 'record-receipt': {
      const receiptRef = command.data.receipt_ref;
      if (state.status === 'receipt_pending' && state.result_code === 'failed') {
        return [{ type: 'attempt.failed', data: { ...failureOf(state), receipt_ref: receiptRef, at } }];
      }
      requireEdge(state, 'attempt.succeeded', command.type);
      return [{ type: 'attempt.succeeded', data: { receipt_ref: receiptRef, at } }];
    }
    case 'fail-attempt':
      // Only before any side effect: once executing, the attempt ends through observation and a receipt.
      requireEdge(state, 'attempt.cancelled', command.type);
      return [{ type: 'attempt.failed', data: { reason_code: command.data.reason_code, reason: command.data.reason, at } }];
    case 'cancel-attempt':
      requireEdge(state, 'attempt.cancelled', command.type);
      return [{ type: 'attempt.cancelled', data: { reason: command.data.reason, at } }];
    case 'supersede-attempt': {
      requireEdge(state, 'attempt.superseded', command.type);
      const by = command.data.superseded_by_attempt_id === undefined ? {} : { superseded_by_attempt_id: command.data.superseded_by_attempt_id };
      const note = command.data.note === undefined ? {} : { note: command.data.note };
      return [{ type: 'attempt.superseded', data: { cause: 'orchestrator', ...by, ...note, at } }];
    }
    default:
      return unknownCommand((command as { type?: unknown }).type, 'the attempt decider');
  }
}

/**
 * A renewal in place of the grant an executing attempt holds (issue 13: a use proven never to
 * have started is not a failure of the action). Allowed only when nothing of the action can have
 * run under that grant: every claimed use of it was proven not run and released (none in flight,
 * none completed, errored or unknown), it was not revoked (a revoked grant is never renewed: a
 * revocation stops the action), and it has expired (while it lives, the next use runs under it).
 * The attempt stays executing: it is never entered twice.
 */
function decideRenewal(command: Extract<AttemptCommand, { type: 'attach-renewal' }>, state: AttemptRecord, now: number, at: string): AttemptEvent[] {
  requireEdge(state, 'attempt.grant_renewed', command.type);
  const current = state.grant;
  const { grant_id: grantId, expires_at: expiresAt, replaces } = command.data;
  if (current === null) throw new AttemptError('ATTEMPT_GRANT_MISSING', `attempt ${state.attempt_id} holds no grant to renew`);
  if (replaces.grant_id !== current.grant_id) {
    throw new AttemptError('ATTEMPT_GRANT_MISMATCH', `attempt ${state.attempt_id} holds grant ${current.grant_id}, not ${replaces.grant_id}`, {
      details: { expected: current.grant_id, actual: replaces.grant_id },
    });
  }
  if (grantId === current.grant_id) {
    throw new AttemptError('ATTEMPT_GRANT_ALREADY_ATTACHED', `grant ${grantId} is the one attempt ${state.attempt_id} holds; a renewal is another grant`, { details: { grant_id: grantId } });
  }
  const details = { grant_id: current.grant_id, renewal_grant_id: grantId };
  if (replaces.revoked) {
    throw new AttemptError('ATTEMPT_RENEWAL_NOT_ALLOWED', `grant ${current.grant_id} was revoked: a revoked grant is never renewed`, { details: { ...details, revoked: true } });
  }
  const ran = replaces.uses.find((use) => use.settlement !== 'not_run');
  if (ran !== undefined) {
    const why = ran.settlement === 'in_flight' ? 'is in flight (it may be running)' : `ended ${ran.settlement} (it ran, or may have)`;
    throw new AttemptError('ATTEMPT_RENEWAL_NOT_ALLOWED', `use ${ran.use_no} of grant ${current.grant_id} ${why}: only a grant none of whose uses started is renewed`, {
      details: { ...details, use_no: ran.use_no, settlement: ran.settlement },
    });
  }
  if (instantMs(current.expires_at, 'grant.expires_at') > now) {
    throw new AttemptError('ATTEMPT_GRANT_ALREADY_ATTACHED', `attempt ${state.attempt_id} still holds the live grant ${current.grant_id}: its next use runs under it`, {
      details: { grant_id: current.grant_id, expires_at: current.expires_at },
    });
  }
  if (instantMs(expiresAt, 'data.expires_at') <= now) {
    throw new AttemptError('ATTEMPT_GRANT_EXPIRED', `grant ${grantId} is already expired`, { details: { grant_id: grantId } });
  }
  return [
    {
      type: 'attempt.grant_renewed',
      data: {
        grant_id: grantId,
        expires_at: expiresAt,
        renews_grant_id: current.grant_id,
        renews_expired_at: current.expires_at,
        not_run_uses: replaces.uses.map((use) => use.use_no),
        at,
      },
    },
  ];
}

/**
 * Why a settled attempt failed, saying only what its execution record shows (issue 13: a receipt
 * never states "ran" for an action that did not): an exit status → it ran and failed; errored →
 * it did not complete (it could not start, or was stopped); an unknown outcome resolved as failed
 * → resolved on evidence, not observed.
 */
function failureOf(state: AttemptRecord): { readonly reason_code: string; readonly reason: string } {
  if (state.unknown_outcome_receipt_ref !== null) {
    return { reason_code: 'outcome_resolved_failed', reason: 'the outcome was unknown; it was resolved as failed on evidence outside the log' };
  }
  switch (state.execution_outcome) {
    case 'completed':
      return { reason_code: 'execution_failed', reason: 'the action ran and failed' };
    case 'errored':
      return { reason_code: 'execution_errored', reason: 'the action did not complete: it could not start, or it was stopped (its execution record says which)' };
    default:
      return { reason_code: 'execution_failed', reason: 'the action failed' };
  }
}

const COMMAND_TYPES: readonly string[] = [
  'create-attempt', 'lease-workspace', 'compile-context', 'start-reasoning', 'submit-action', 'record-policy-result',
  'record-approval-resolution', 'report-drift', 'attach-grant', 'attach-renewal', 'start-execution', 'report-execution-outcome',
  'record-unknown-outcome-receipt', 'settle-observation', 'record-receipt', 'fail-attempt', 'cancel-attempt', 'supersede-attempt',
];

export function decide(command: AttemptCommand, state: AttemptState): AttemptEvent[] {
  const now = commandNowMs(command);
  if (!COMMAND_TYPES.includes(command.type)) return unknownCommand((command as { type?: unknown }).type, 'the attempt decider');
  if (state.status === 'initial') {
    if (command.type !== 'create-attempt') throw new AttemptError('ATTEMPT_NOT_FOUND', `${command.type} needs an existing attempt`);
    return emit(AttemptEvent, [{ type: 'attempt.created', data: { ...command.data, at: command.metadata.now } }]);
  }
  return emit(AttemptEvent, decideFor(command, state, now));
}

const cleared = {
  policy: null,
  authorized_via: null,
  approval_id: null,
  grant: null,
} as const;

function apply(state: AttemptRecord, event: Exclude<AttemptEvent, { type: 'attempt.created' }>): AttemptRecord | undefined {
  const edge = ATTEMPT_EVENT_EDGES[event.type];
  if (!edge.from.includes(state.status)) return undefined;
  const base: AttemptRecord = {
    ...state,
    status: edge.to,
    updated_at: event.data.at,
    finished_at: ATTEMPT_TERMINAL_STATES.includes(edge.to) ? event.data.at : state.finished_at,
  };
  switch (event.type) {
    case 'attempt.leased':
      return { ...base, workspace_lease_ref: event.data.workspace_lease_ref, started_at: event.data.at };
    case 'attempt.compiling_context':
      return base;
    case 'attempt.reasoning':
      return { ...base, context_pack_ref: event.data.context_pack_ref };
    case 'attempt.awaiting_policy':
      return { ...base, action_request: event.data.action_request, submitted_request: event.data.action_request, policy_entries: state.policy_entries + 1 };
    case 'attempt.authorized':
      if (event.data.via === 'policy_allow') {
        if (state.status !== 'awaiting_policy' || event.data.policy.outcome !== 'allow') return undefined;
        return { ...base, policy: event.data.policy, authorized_via: 'policy_allow' };
      }
      if (state.status !== 'awaiting_approval' || event.data.approval_id !== state.approval_id) return undefined;
      return { ...base, authorized_via: 'approval' };
    case 'attempt.downgraded':
      if (event.data.policy.outcome !== 'downgrade') return undefined;
      return {
        ...base,
        policy: event.data.policy,
        authorized_via: 'policy_downgrade',
        action_request: event.data.action_request,
        restricted_mode: event.data.restricted_mode ?? null,
      };
    case 'attempt.awaiting_approval':
      if (event.data.policy.outcome !== 'require_approval') return undefined;
      return { ...base, policy: event.data.policy, approval_id: event.data.approval_id };
    case 'attempt.policy_denied':
      if (event.data.policy.outcome !== 'deny') return undefined;
      return { ...base, policy: event.data.policy, failure: { code: 'policy_denied', message: event.data.reasons[0]?.message ?? 'policy denied the action' } };
    case 'attempt.approval_denied':
    case 'attempt.approval_expired':
      if (event.data.approval_id !== state.approval_id) return undefined;
      return {
        ...base,
        failure: event.type === 'attempt.approval_denied'
          ? { code: 'approval_denied', message: `approval ${event.data.approval_id} was denied` }
          : { code: 'approval_expired', message: `approval ${event.data.approval_id} expired` },
      };
    case 'attempt.policy_reentered':
      // Same attempt, back before policy: the submitted request is evaluated afresh; earlier authority is void.
      return {
        ...base,
        ...cleared,
        action_request: state.submitted_request,
        restricted_mode: null,
        last_drift: event.data.cause,
        policy_entries: state.policy_entries + 1,
      };
    case 'attempt.grant_attached':
      if (state.authorized_via === null) return undefined;
      return { ...base, grant: { grant_id: event.data.grant_id, expires_at: event.data.expires_at } };
    case 'attempt.executing':
      if (state.grant === null || state.grant.grant_id !== event.data.grant_id || state.authorized_via === null) return undefined;
      return base;
    case 'attempt.grant_renewed':
      if (state.grant === null || state.grant.grant_id !== event.data.renews_grant_id || event.data.grant_id === state.grant.grant_id) return undefined;
      return { ...base, grant: { grant_id: event.data.grant_id, expires_at: event.data.expires_at } };
    case 'attempt.observing':
      return { ...base, execution_outcome: event.data.execution_outcome, outcome_uncertain: event.data.execution_outcome === 'unknown', output_refs: event.data.output_refs };
    case 'attempt.unknown_outcome_receipted':
      if (!state.outcome_uncertain || state.unknown_outcome_receipt_ref !== null) return undefined;
      return { ...base, unknown_outcome_receipt_ref: event.data.receipt_ref };
    case 'attempt.receipt_pending':
      if (state.outcome_uncertain && event.data.evidence_refs.length === 0) return undefined;
      return { ...base, result_code: event.data.result_code, outcome_uncertain: false };
    case 'attempt.succeeded':
      if (state.result_code !== 'succeeded') return undefined;
      return { ...base, receipt_ref: event.data.receipt_ref };
    case 'attempt.failed':
      if (state.status === 'receipt_pending' && state.result_code !== 'failed') return undefined;
      return { ...base, failure: { code: event.data.reason_code, message: event.data.reason }, receipt_ref: event.data.receipt_ref ?? state.receipt_ref };
    case 'attempt.cancelled':
      return { ...base, failure: { code: 'cancelled', message: event.data.reason } };
    case 'attempt.superseded':
      return {
        ...base,
        superseded_by_attempt_id: event.data.superseded_by_attempt_id ?? null,
        last_drift: event.data.cause === 'orchestrator' ? state.last_drift : event.data.cause,
      };
    default:
      return undefined;
  }
}

export const evolve = totalEvolve<AttemptState, AttemptEvent>(AttemptEvent, (state, event) => {
  if (event.type === 'attempt.created') {
    if (state.status !== 'initial') return undefined;
    const { at, ...ids } = event.data;
    return {
      ...ids,
      status: 'created',
      workspace_lease_ref: null,
      context_pack_ref: null,
      action_request: null,
      submitted_request: null,
      restricted_mode: null,
      ...cleared,
      policy_entries: 0,
      last_drift: null,
      execution_outcome: null,
      outcome_uncertain: false,
      unknown_outcome_receipt_ref: null,
      output_refs: [],
      result_code: null,
      receipt_ref: null,
      failure: null,
      superseded_by_attempt_id: null,
      created_at: at,
      started_at: null,
      finished_at: null,
      updated_at: at,
      anomalies: state.anomalies,
    };
  }
  if (state.status === 'initial') return undefined;
  return apply(state, event);
});

export const attemptDecider: Decider<AttemptCommand, AttemptEvent, AttemptState> = Object.freeze({ initialState, decide, evolve });
