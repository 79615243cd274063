import {
  ContextPackCompiled,
  ContextPackRefused,
  ActionRequest,
  CapabilityGrantClaims,
  DecisionRecorded,
  ExecutionCompleted,
  ExecutionOutcomeResolved,
  PolicyEvaluated,
  ReceiptIssued,
  type CellEnvironment,
  type ChangedFile,
  type Decision,
  type EventEnvelope,
  type Receipt,
  type ReceiptRollback,
} from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { z } from 'zod';
import { summarizeParams } from './params-summary.js';

/**
 * `writ explain`: the questions of Hermit section 21 answered for each action
 * of a task, from the task's events alone — what happened, why, on which
 * evidence, under whose authority, what changed, whether it can be verified
 * and rolled back. Pure: the caller reads the log (and checks signatures,
 * which needs keys) and hands the results in.
 */

/** Version of the `--json` document; a field is only ever added under it. */
export const EXPLANATION_FORMAT = 'writ.explain/1';

/** A receipt's signature check, done by the caller against the signer's keys as the log records them. */
export interface SignatureCheck {
  readonly ok: boolean;
  /** The key that verified it, when one did. */
  readonly kid: string | null;
  /** Why not, when it did not (a check code), or why it was not checked. */
  readonly problem: string | null;
}

/** A receipt's leaf in the transparency log (`tlog.entry_appended`). */
export interface TransparencyLogEntry {
  readonly log_id: string;
  readonly leaf_index: number;
  readonly receipt_hash: string;
}

export interface ExplainInputs {
  /** Only the attempts of this action request (an explanation of `writ explain <action_id>`). */
  readonly actionRequestId?: string;
  /** By receipt id; absent: not checked. */
  readonly signatures?: ReadonlyMap<string, SignatureCheck>;
  /** By receipt id; `null` when the transparency log was not read. */
  readonly transparencyLog?: ReadonlyMap<string, TransparencyLogEntry> | null;
}

export interface PolicyView {
  readonly policy_result_id: string;
  readonly outcome: string;
  readonly action_class: string;
  readonly risk_band: string;
  /** The factors behind the band, as the policy summarised them (`band: message`). */
  readonly risk_factors: readonly string[];
  readonly matched_rules: readonly string[];
  readonly reasoning: string;
  readonly profile: string;
  readonly policy_version: string;
  readonly affected_resources: readonly string[];
  readonly witness_required: boolean;
  readonly revalidation_conditions: readonly string[];
  readonly approver_roles: readonly string[];
  readonly evaluated_at: string;
  readonly evaluated_by: string;
  readonly downgrade: string | null;
}

export interface DecisionView {
  readonly decision_id: string;
  readonly decision_type: string;
  readonly summary: string;
  readonly rationale: string;
  readonly risk_level: string;
  readonly decided_by: string;
  readonly reversible: boolean;
  readonly created_at: string;
  /** What it decided on: `policy_result:<id>` or the DecisionRecorded subject (`approval:<id>`). */
  readonly subject: string;
  /** The event it was recorded with (`policy.evaluated`, `approval.granted`, ...). */
  readonly recorded_with: string;
}

export interface ApprovalView {
  readonly approval_id: string;
  readonly status: string;
  readonly requested_at: string;
  readonly expires_at: string | null;
  readonly requested_by: string | null;
  readonly packet_ref: string | null;
  readonly resolved_by: string | null;
  readonly resolved_at: string | null;
  readonly note: string | null;
  readonly witness_validated: boolean | null;
  readonly invalidation_cause: string | null;
}

export interface GrantView {
  readonly grant_id: string;
  readonly issuer: string;
  readonly issued_by: string;
  readonly action_class: string;
  readonly paths: readonly string[];
  readonly hosts: readonly string[];
  readonly secret_handles: readonly string[];
  readonly max_uses: number;
  readonly uses_claimed: number;
  readonly issued_at: string;
  readonly expires_at: string;
  readonly jws_sha256: string | null;
  readonly revoked: { readonly by: string; readonly reason: string } | null;
  readonly refusals: readonly { readonly code: string; readonly message: string }[];
  /**
   * The grant this one replaced while the attempt was executing (`attempt.grant_renewed`, issue
   * 13): the uses of it proven never started, and when it expired; null for any other grant.
   */
  readonly renews: { readonly grant_id: string; readonly not_run_uses: readonly number[]; readonly expired_at: string } | null;
}

export interface ExecutionView {
  readonly event_id: string;
  readonly executor_id: string;
  readonly outcome: string;
  readonly exit_code: number | null;
  readonly timed_out: boolean;
  readonly duration_ms: number;
  readonly stdout_sha256: string;
  readonly stderr_sha256: string;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly at: string;
}

export interface ReceiptView {
  readonly receipt_id: string;
  readonly cause: string | null;
  readonly receipt_class: string;
  readonly result_code: string;
  readonly result_summary: string;
  readonly created_at: string;
  readonly signer_ref: string | null;
  readonly verifiability: string | null;
  /** `receipt_hash` is the SHA-256 of the receipt's RFC 8785 body. */
  readonly hash_recomputes: boolean;
  /** `prev_receipt_hash` names the task's previous receipt (null for its first). */
  readonly chained: boolean;
  readonly signature: SignatureCheck | null;
  /** null: not in the log; undefined in the document when the log was not read. */
  readonly transparency_log: TransparencyLogEntry | null | 'not_read';
  readonly binds: {
    readonly request_hash: string | null;
    readonly policy_result_hash: string | null;
    readonly grant_hash: string | null;
    readonly state_witness_ref: string | null;
    readonly environment_ref: string | null;
    readonly approval_resolution_ref: string | null;
  };
  readonly not_asserted: readonly string[];
}

export interface ActionExplanation {
  readonly action_request_id: string;
  readonly attempt_id: string;
  readonly step_id: string | null;
  readonly what: {
    readonly action_class: string;
    readonly proposed_by: string;
    readonly proposed_at: string;
    readonly reason: string;
    readonly target_resources: readonly string[];
    readonly expected_effects: readonly string[];
    readonly reversibility_hint: string;
    readonly params: readonly string[];
    /** The attempt's latest state (`attempt.<state>`). */
    readonly status: string;
    readonly result_code: string | null;
    readonly result_summary: string | null;
    readonly downgraded_to: { readonly action_request_id: string; readonly action_class: string } | null;
    readonly supersedes: string | null;
  };
  readonly why: {
    readonly policy: PolicyView | null;
    readonly decisions: readonly DecisionView[];
    /**
     * The context pack the action was proposed under (`context.pack_compiled`, Hermit 15.6): compiled from
     * the task's log through the attempt's submission; `writ context <attempt_id>` shows it, `--verify` recompiles it.
     */
    readonly context_pack: ContextPackView | null;
  };
  readonly evidence: {
    readonly state_witness: { readonly ref: string; readonly observed_at: string | null; readonly fingerprints: Readonly<Record<string, string>> } | null;
    readonly approval_packet_ref: string | null;
    readonly execution: ExecutionView | null;
    readonly outcome_resolution: { readonly outcome: string; readonly resolved_by: string; readonly resolved_at: string; readonly note: string | null } | null;
    readonly artifacts: readonly { readonly artifact_id: string; readonly kind: string; readonly alias: string | null; readonly content_hash: string; readonly byte_size: number }[];
    /** The cell as the executor read it back (`execution.completed.environment`). */
    readonly cell: CellEnvironment | null;
  };
  readonly authority: {
    readonly proposer: string;
    readonly approval: ApprovalView | null;
    readonly grant: GrantView | null;
  };
  readonly changed: readonly ChangedFile[];
  readonly verification: { readonly receipts: readonly ReceiptView[] };
  readonly replay_class: string | null;
  readonly rollback: (ReceiptRollback & { readonly supported: boolean }) | { readonly supported: boolean; readonly method: null; readonly statement: string } | null;
  /** Rollbacks of the task that name one of this action's receipts (`writ rollback`), in log order, whatever became of them. */
  readonly rolled_back_by: readonly RollbackOfAction[];
}

/** A rollback action naming a receipt of another action (Hermit 18.6). */
export interface RollbackOfAction {
  readonly action_request_id: string;
  readonly rolled_back_receipt_id: string;
  readonly status: string;
  /** The rollback's own closing receipt, once issued. */
  readonly receipt_id: string | null;
  readonly result_code: string | null;
}

/** Which context pack an attempt was proposed under, as its task's log records it (or why none could be compiled). */
export type ContextPackView =
  | {
      readonly status: 'compiled';
      readonly sha256: string;
      readonly uri: string;
      readonly byte_size: number;
      readonly as_of: string;
      readonly through_task_seq: number;
      readonly items: number;
      readonly omitted: number;
      readonly secrets: string;
    }
  | { readonly status: 'refused'; readonly code: string; readonly message: string; readonly through_task_seq: number };

export interface TaskExplanation {
  readonly format: typeof EXPLANATION_FORMAT;
  readonly task: {
    readonly task_id: string;
    readonly title: string | null;
    readonly goal: string | null;
    readonly owner: string | null;
    readonly policy_profile_ref: string | null;
    readonly files_owned: readonly string[];
    readonly status: string;
    readonly created_at: string | null;
    readonly events: number;
    /** The task stream was read through the event store, which verifies its hash chain first. */
    readonly head: { readonly task_seq: number; readonly hash: string } | null;
  };
  /** Only the attempts of this action request, when one was asked for. */
  readonly action_request_id: string | null;
  readonly actions: readonly ActionExplanation[];
}

const TaskCreated = z.object({
  title: z.string().optional(),
  goal: z.string().optional(),
  owner_principal_id: z.string().optional(),
  policy_profile_ref: z.string().optional(),
  files_owned: z.array(z.string()).optional(),
});
const WithRequest = z.object({ action_request: ActionRequest });
const ApprovalRequested = z.object({
  approval_id: z.string(),
  attempt_id: z.string(),
  approval_packet_ref: z.string().optional(),
  requested_by: z.string().optional(),
  expires_at: z.string().optional(),
  at: z.string().optional(),
  state_witness: z.object({ ref: z.string(), fingerprints: z.record(z.string(), z.string()).optional(), observed_at: z.string().optional() }).optional(),
});
const Resolution = z.object({
  resolved_by: z.string().optional(),
  note: z.string().optional(),
  reason: z.string().optional(),
  witness_validated: z.boolean().optional(),
  cause: z.string().optional(),
  at: z.string().optional(),
});
const GrantIssued = z.object({ claims: CapabilityGrantClaims, jws: z.string().optional() });
const GrantRefused = z.object({ code: z.string(), message: z.string() });
const GrantRevoked = z.object({ revoked_by: z.string(), reason: z.string() });
const GrantRenewed = z.object({ grant_id: z.string(), renews_grant_id: z.string(), renews_expired_at: z.string(), not_run_uses: z.array(z.number()) });

const APPROVAL_RESOLUTIONS: Readonly<Record<string, string>> = {
  'approval.granted': 'granted',
  'approval.denied': 'denied',
  'approval.expired': 'expired',
  'approval.cancelled': 'cancelled',
  'approval.invalidated': 'invalidated',
};

const TASK_ENDS: Readonly<Record<string, string>> = { 'task.completed': 'completed', 'task.failed': 'failed', 'task.cancelled': 'cancelled' };

interface Working {
  request: ActionRequest;
  attemptId: string;
  stepId: string | null;
  status: string;
  downgraded: ActionRequest | null;
  policy: { result: PolicyEvaluated['policy_result']; decision: Decision } | null;
  decisions: DecisionView[];
  approval: (ApprovalView & { witness: ActionExplanation['evidence']['state_witness'] }) | null;
  grant: GrantView | null;
  execution: { view: ExecutionView; completed: ExecutionCompleted } | null;
  resolution: ActionExplanation['evidence']['outcome_resolution'];
  receipts: { receipt: Receipt; cause: string | null }[];
  contextPack: ContextPackView | null;
}

function decisionView(decision: Decision, subject: string, recordedWith: string): DecisionView {
  return {
    decision_id: decision.decision_id,
    decision_type: decision.decision_type,
    summary: decision.summary,
    rationale: decision.rationale,
    risk_level: decision.risk_level,
    decided_by: decision.decided_by,
    reversible: decision.reversible,
    created_at: decision.created_at,
    subject,
    recorded_with: recordedWith,
  };
}

function policyView(result: PolicyEvaluated['policy_result']): PolicyView {
  return {
    policy_result_id: result.policy_result_id,
    outcome: result.outcome,
    action_class: result.action_class,
    risk_band: result.risk_band,
    risk_factors: result.risk_summary.split('; ').filter((factor) => factor !== ''),
    matched_rules: [...result.matched_rules],
    reasoning: result.reasoning_summary,
    profile: result.policy_profile_ref,
    policy_version: result.policy_version,
    affected_resources: [...result.affected_resources],
    witness_required: result.witness_required,
    revalidation_conditions: [...result.revalidation_conditions],
    approver_roles: [...(result.approver_roles ?? [])],
    evaluated_at: result.evaluated_at,
    evaluated_by: result.evaluated_by,
    downgrade: result.downgrade?.summary ?? null,
  };
}

function contextPackView(type: string, payload: unknown): ContextPackView | null {
  if (type === 'context.pack_compiled') {
    const parsed = ContextPackCompiled.safeParse(payload);
    if (!parsed.success) return null;
    const { sha256, uri, byte_size, as_of, through_task_seq, items, omitted, secrets } = parsed.data;
    return { status: 'compiled', sha256, uri, byte_size, as_of, through_task_seq, items, omitted, secrets };
  }
  const parsed = ContextPackRefused.safeParse(payload);
  return parsed.success ? { status: 'refused', code: parsed.data.code, message: parsed.data.message, through_task_seq: parsed.data.through_task_seq } : null;
}

function receiptHashRecomputes(receipt: Receipt): boolean {
  const { receipt_hash: hash, signature: _signature, ...body } = receipt;
  return hash !== undefined && sha256Hex(canonicalJson(body)) === hash;
}

/** The attempt an event is about: its envelope, else its payload, else the approval or grant it concerns. */
function attemptOf(event: EventEnvelope, approvals: ReadonlyMap<string, string>, grants: ReadonlyMap<string, string>): string | undefined {
  if (event.attempt_id !== undefined) return event.attempt_id;
  if (event.entity_type === 'attempt') return event.entity_id;
  if (event.entity_type === 'approval') return approvals.get(event.entity_id);
  if (event.entity_type === 'grant') return grants.get(event.entity_id);
  const payload = event.payload as { attempt_id?: unknown; grant_id?: unknown };
  if (typeof payload.attempt_id === 'string') return payload.attempt_id;
  return typeof payload.grant_id === 'string' ? grants.get(payload.grant_id) : undefined;
}

/**
 * Folds a task's events (in `task_seq` order, as `EventStore.read` returns
 * them) into its explanation: one entry per attempt that carried an
 * ActionRequest, in the order they were proposed.
 */
export function explainTask(taskId: string, events: readonly EventEnvelope[], inputs: ExplainInputs = {}): TaskExplanation {
  const attempts = new Map<string, Working>();
  const approvals = new Map<string, string>();
  const grants = new Map<string, string>();
  let task: z.infer<typeof TaskCreated> | null = null;
  let createdAt: string | null = null;
  let taskStatus = 'open';

  for (const event of events) {
    const type = event.event_type;
    if (type === 'task.created') {
      const parsed = TaskCreated.safeParse(event.payload);
      task = parsed.success ? parsed.data : {};
      createdAt = event.occurred_at;
      continue;
    }
    if (type in TASK_ENDS) {
      taskStatus = TASK_ENDS[type] as string;
      continue;
    }
    if (type === 'approval.requested') {
      const parsed = ApprovalRequested.safeParse(event.payload);
      if (parsed.success) approvals.set(parsed.data.approval_id, parsed.data.attempt_id);
    }
    if (type === 'grant.issued') {
      const parsed = GrantIssued.safeParse(event.payload);
      if (parsed.success) grants.set(parsed.data.claims.jti, parsed.data.claims.attempt_id);
    }
    const attemptId = attemptOf(event, approvals, grants);
    if (type === 'attempt.awaiting_policy') {
      const parsed = WithRequest.safeParse(event.payload);
      if (parsed.success && attemptId !== undefined && !attempts.has(attemptId)) {
        attempts.set(attemptId, {
          request: parsed.data.action_request,
          attemptId,
          stepId: event.step_id ?? null,
          status: 'awaiting_policy',
          downgraded: null,
          policy: null,
          decisions: [],
          approval: null,
          grant: null,
          execution: null,
          resolution: null,
          receipts: [],
          contextPack: null,
        });
      }
      continue;
    }
    const work = attemptId === undefined ? undefined : attempts.get(attemptId);
    if (work === undefined) continue;
    if (type.startsWith('attempt.') && event.entity_type === 'attempt') work.status = type.slice('attempt.'.length);
    if (type === 'attempt.downgraded') {
      const parsed = WithRequest.safeParse(event.payload);
      if (parsed.success) work.downgraded = parsed.data.action_request;
    } else if (type === 'policy.evaluated') {
      const parsed = PolicyEvaluated.safeParse(event.payload);
      if (parsed.success) {
        work.policy = { result: parsed.data.policy_result, decision: parsed.data.decision };
        work.decisions.push(decisionView(parsed.data.decision, `policy_result:${parsed.data.policy_result.policy_result_id}`, type));
      }
    } else if (type === 'context.pack_compiled' || type === 'context.pack_refused') {
      // The first record stands (the kernel decides one per attempt); a second, forged or raced, is not the pack.
      if (work.contextPack === null) work.contextPack = contextPackView(type, event.payload);
    } else if (type === 'decision.recorded') {
      const parsed = DecisionRecorded.safeParse(event.payload);
      if (parsed.success) work.decisions.push(decisionView(parsed.data.decision, parsed.data.subject_ref, parsed.data.outcome_event));
    } else if (type === 'approval.requested') {
      const parsed = ApprovalRequested.safeParse(event.payload);
      if (parsed.success) {
        const witness = parsed.data.state_witness;
        work.approval = {
          approval_id: parsed.data.approval_id,
          status: 'pending',
          requested_at: parsed.data.at ?? event.occurred_at,
          expires_at: parsed.data.expires_at ?? null,
          requested_by: parsed.data.requested_by ?? null,
          packet_ref: parsed.data.approval_packet_ref ?? null,
          resolved_by: null,
          resolved_at: null,
          note: null,
          witness_validated: null,
          invalidation_cause: null,
          witness: witness === undefined ? null : { ref: witness.ref, observed_at: witness.observed_at ?? null, fingerprints: witness.fingerprints ?? {} },
        };
      }
    } else if (type in APPROVAL_RESOLUTIONS && work.approval !== null && work.approval.approval_id === event.entity_id) {
      const parsed = Resolution.safeParse(event.payload);
      const data = parsed.success ? parsed.data : {};
      work.approval = {
        ...work.approval,
        status: APPROVAL_RESOLUTIONS[type] as string,
        resolved_by: data.resolved_by ?? null,
        resolved_at: data.at ?? event.occurred_at,
        note: data.note ?? data.reason ?? null,
        witness_validated: data.witness_validated ?? null,
        invalidation_cause: type === 'approval.invalidated' ? (data.cause ?? null) : null,
      };
    } else if (type === 'grant.issued') {
      const parsed = GrantIssued.safeParse(event.payload);
      if (parsed.success) {
        const { claims } = parsed.data;
        work.grant = {
          grant_id: claims.jti,
          issuer: claims.iss,
          issued_by: claims.issued_by_principal_id,
          action_class: claims.action_class,
          paths: [...(claims.resource_scope.paths ?? [])],
          hosts: [...(claims.resource_scope.hosts ?? [])],
          secret_handles: [...(claims.constraints?.secret_handles ?? [])],
          max_uses: claims.max_uses,
          uses_claimed: 0,
          issued_at: new Date(claims.iat * 1000).toISOString(),
          expires_at: new Date(claims.exp * 1000).toISOString(),
          jws_sha256: parsed.data.jws === undefined ? null : sha256Hex(parsed.data.jws),
          revoked: null,
          refusals: [],
          renews: null,
        };
      }
    } else if (type === 'attempt.grant_renewed') {
      const parsed = GrantRenewed.safeParse(event.payload);
      if (parsed.success && work.grant?.grant_id === parsed.data.grant_id) {
        work.grant = { ...work.grant, renews: { grant_id: parsed.data.renews_grant_id, not_run_uses: parsed.data.not_run_uses, expired_at: parsed.data.renews_expired_at } };
      }
    } else if (type === 'grant.use_claimed' && work.grant?.grant_id === event.entity_id) {
      work.grant = { ...work.grant, uses_claimed: work.grant.uses_claimed + 1 };
    } else if (type === 'grant.refused' && work.grant?.grant_id === event.entity_id) {
      const parsed = GrantRefused.safeParse(event.payload);
      if (parsed.success) work.grant = { ...work.grant, refusals: [...work.grant.refusals, { code: parsed.data.code, message: parsed.data.message }] };
    } else if (type === 'grant.revoked' && work.grant?.grant_id === event.entity_id) {
      const parsed = GrantRevoked.safeParse(event.payload);
      if (parsed.success) work.grant = { ...work.grant, revoked: { by: parsed.data.revoked_by, reason: parsed.data.reason } };
    } else if (type === 'execution.completed') {
      const parsed = ExecutionCompleted.safeParse(event.payload);
      if (parsed.success) {
        const completed = parsed.data;
        work.execution = {
          completed,
          view: {
            event_id: event.event_id,
            executor_id: completed.executor_id,
            outcome: completed.outcome,
            exit_code: completed.exit_code,
            timed_out: completed.timed_out,
            duration_ms: completed.duration_ms,
            stdout_sha256: completed.stdout_sha256,
            stderr_sha256: completed.stderr_sha256,
            error: completed.error ?? null,
            at: completed.at,
          },
        };
      }
    } else if (type === 'execution.outcome_resolved') {
      const parsed = ExecutionOutcomeResolved.safeParse(event.payload);
      if (parsed.success) {
        work.resolution = { outcome: parsed.data.outcome, resolved_by: parsed.data.resolved_by, resolved_at: parsed.data.resolved_at, note: parsed.data.note ?? null };
      }
    } else if (type === 'receipt.issued') {
      const parsed = ReceiptIssued.safeParse(event.payload);
      if (parsed.success) work.receipts.push({ receipt: parsed.data.receipt, cause: parsed.data.cause ?? null });
    }
  }

  // The task's receipts in log order: each names the previous one's hash.
  const chainOrder: Receipt[] = [];
  for (const event of events) {
    if (event.event_type !== 'receipt.issued') continue;
    const parsed = ReceiptIssued.safeParse(event.payload);
    if (parsed.success) chainOrder.push(parsed.data.receipt);
  }
  const previousHash = new Map<string, string | null>();
  chainOrder.forEach((receipt, index) => previousHash.set(receipt.receipt_id, index === 0 ? null : (chainOrder[index - 1]?.receipt_hash ?? null)));

  const selected = [...attempts.values()].filter((work) => inputs.actionRequestId === undefined || work.request.action_request_id === inputs.actionRequestId);
  // Every rollback of the task, even when one action is asked about: it says whether that action was rolled back.
  const rollbacks = rollbacksByReceipt([...attempts.values()]);
  const last = events.at(-1);
  return {
    format: EXPLANATION_FORMAT,
    task: {
      task_id: taskId,
      title: task?.title ?? null,
      goal: task?.goal ?? null,
      owner: task?.owner_principal_id ?? null,
      policy_profile_ref: task?.policy_profile_ref ?? null,
      files_owned: [...(task?.files_owned ?? [])],
      status: taskStatus,
      created_at: createdAt,
      events: events.length,
      head: last === undefined ? null : { task_seq: last.task_seq, hash: last.hash },
    },
    action_request_id: inputs.actionRequestId ?? null,
    actions: selected.map((work) => actionOf(work, previousHash, inputs, rollbacks)),
  };
}

/** The receipt that ends an attempt: the last one not about an approval on its own. */
function closingReceipt(work: Working): { receipt: Receipt; cause: string | null } | null {
  return [...work.receipts].reverse().find((entry) => entry.cause !== 'approval_resolved') ?? null;
}

/** The task's rollback actions by the receipt their params name. */
function rollbacksByReceipt(works: readonly Working[]): Map<string, RollbackOfAction[]> {
  const out = new Map<string, RollbackOfAction[]>();
  for (const work of works) {
    const ran = work.downgraded ?? work.request;
    const receiptId = ran.params['receipt_id'];
    if (ran.action_class !== 'rollback' || typeof receiptId !== 'string') continue;
    const closing = closingReceipt(work);
    const entry: RollbackOfAction = {
      action_request_id: work.request.action_request_id,
      rolled_back_receipt_id: receiptId,
      status: work.status,
      receipt_id: closing?.receipt.receipt_id ?? null,
      result_code: closing?.receipt.result_code ?? null,
    };
    out.set(receiptId, [...(out.get(receiptId) ?? []), entry]);
  }
  return out;
}

function receiptView(entry: { receipt: Receipt; cause: string | null }, previousHash: ReadonlyMap<string, string | null>, inputs: ExplainInputs): ReceiptView {
  const { receipt } = entry;
  const previous = previousHash.get(receipt.receipt_id);
  const tlog = inputs.transparencyLog;
  return {
    receipt_id: receipt.receipt_id,
    cause: entry.cause,
    receipt_class: receipt.receipt_class,
    result_code: receipt.result_code,
    result_summary: receipt.result_summary,
    created_at: receipt.created_at,
    signer_ref: receipt.signer_ref ?? null,
    verifiability: receipt.verifiability ?? null,
    hash_recomputes: receiptHashRecomputes(receipt),
    chained: previous !== undefined && (receipt.prev_receipt_hash ?? null) === previous,
    signature: inputs.signatures?.get(receipt.receipt_id) ?? null,
    transparency_log: tlog === undefined || tlog === null ? 'not_read' : (tlog.get(receipt.receipt_id) ?? null),
    binds: {
      request_hash: receipt.request_hash ?? null,
      policy_result_hash: receipt.policy_result_hash ?? null,
      grant_hash: receipt.grant_hash ?? null,
      state_witness_ref: receipt.state_witness_ref ?? null,
      environment_ref: receipt.environment_ref,
      approval_resolution_ref: receipt.approval_resolution?.resolution_ref ?? null,
    },
    not_asserted: [...(receipt.not_asserted ?? [])],
  };
}

function actionOf(work: Working, previousHash: ReadonlyMap<string, string | null>, inputs: ExplainInputs, rollbacks: ReadonlyMap<string, readonly RollbackOfAction[]>): ActionExplanation {
  const ran = work.downgraded ?? work.request;
  const closing = closingReceipt(work);
  const execution = work.execution;
  const rollback = closing === null ? null : closing.receipt.rollback;
  const { witness, ...approval } = work.approval ?? { witness: null };
  return {
    action_request_id: work.request.action_request_id,
    attempt_id: work.attemptId,
    step_id: work.stepId,
    what: {
      action_class: ran.action_class,
      proposed_by: work.request.proposed_by,
      proposed_at: work.request.proposed_at,
      reason: work.request.reason,
      target_resources: [...ran.target_resources],
      expected_effects: [...ran.expected_effects],
      reversibility_hint: ran.reversibility_hint,
      params: summarizeParams(ran.params),
      status: work.status,
      result_code: closing?.receipt.result_code ?? null,
      result_summary: closing?.receipt.result_summary ?? null,
      downgraded_to: work.downgraded === null ? null : { action_request_id: work.downgraded.action_request_id, action_class: work.downgraded.action_class },
      supersedes: work.request.supersedes ?? null,
    },
    why: { policy: work.policy === null ? null : policyView(work.policy.result), decisions: work.decisions, context_pack: work.contextPack },
    evidence: {
      state_witness: witness,
      approval_packet_ref: work.approval?.packet_ref ?? null,
      execution: execution?.view ?? null,
      outcome_resolution: work.resolution,
      artifacts: (execution?.completed.artifacts ?? []).map((artifact) => ({
        artifact_id: artifact.artifact_id,
        kind: artifact.kind,
        alias: artifact.task_local_alias ?? null,
        content_hash: artifact.content_hash,
        byte_size: artifact.byte_size,
      })),
      cell: execution?.completed.environment ?? null,
    },
    authority: { proposer: work.request.proposed_by, approval: work.approval === null ? null : (approval as ApprovalView), grant: work.grant },
    changed: execution?.completed.changed_files ?? [],
    verification: { receipts: work.receipts.map((entry) => receiptView(entry, previousHash, inputs)) },
    replay_class: closing?.receipt.replay_class ?? null,
    rollback:
      closing === null
        ? null
        : rollback === undefined
          ? { supported: closing.receipt.rollback_supported === true, method: null, statement: 'the receipt predates rollback metadata: it records only whether rollback is supported' }
          : { supported: closing.receipt.rollback_supported === true, ...(rollback as ReceiptRollback) },
    rolled_back_by: work.receipts.flatMap((entry) => rollbacks.get(entry.receipt.receipt_id) ?? []),
  };
}
