import { ActionRequest, ExecutionMode, Id, IdempotencyKey, LIMITS, Name, PolicyOutcome, Ref, RiskBand, Text, Timestamp, AttemptStatus } from '@writ/contracts';
import { z } from 'zod';

const at = Timestamp;

/** What the attempt keeps of a policy result: enough to resume, revalidate and explain. */
export const PolicyDecision = z.strictObject({
  policy_result_id: Id,
  outcome: PolicyOutcome,
  risk_band: RiskBand,
  profile_id: Name,
  policy_version: z.string().min(1).max(128),
  witness_required: z.boolean(),
});
export type PolicyDecision = z.infer<typeof PolicyDecision>;

/** A coded reason (policy reasons, failure reasons). */
export const CodedReason = z.strictObject({ code: Name, message: Text });
export type CodedReason = z.infer<typeof CodedReason>;

/**
 * Why an attempt's checkpointed assumptions no longer hold (Hermit 11.5, 16.7,
 * 16.8). All causes share one recovery shape: re-enter policy or supersede.
 */
export const DriftCause = z.enum(['witness_drift', 'policy_drift', 'input_drift', 'approval_packet_drift', 'approval_invalidated']);
export type DriftCause = z.infer<typeof DriftCause>;

/** How the executor saw the run end; `unknown` means the effect may or may not have happened. */
export const ExecutionOutcome = z.enum(['completed', 'errored', 'unknown']);
export type ExecutionOutcome = z.infer<typeof ExecutionOutcome>;

/** How an observation settles: the known result the receipt will carry. */
export const SettledResult = z.enum(['succeeded', 'failed']);
export type SettledResult = z.infer<typeof SettledResult>;

/** The events of the StepAttempt aggregate (Hermit 8.3, 12.3, 12.4, 19.3, 19.4). */
export const AttemptEvent = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('attempt.created'),
    data: z.strictObject({ attempt_id: Id, task_id: Id, step_id: Id, attempt_no: z.int().min(1).max(1_000), idempotency_key: IdempotencyKey, at }),
  }),
  z.strictObject({ type: z.literal('attempt.leased'), data: z.strictObject({ workspace_lease_ref: Ref, at }) }),
  z.strictObject({ type: z.literal('attempt.compiling_context'), data: z.strictObject({ at }) }),
  z.strictObject({ type: z.literal('attempt.reasoning'), data: z.strictObject({ context_pack_ref: Ref, at }) }),
  z.strictObject({ type: z.literal('attempt.awaiting_policy'), data: z.strictObject({ action_request: ActionRequest, at }) }),
  z.strictObject({
    type: z.literal('attempt.authorized'),
    data: z.discriminatedUnion('via', [
      z.strictObject({ via: z.literal('policy_allow'), policy: PolicyDecision, at }),
      z.strictObject({ via: z.literal('approval'), approval_id: Id, at }),
    ]),
  }),
  z.strictObject({
    type: z.literal('attempt.downgraded'),
    data: z.strictObject({ policy: PolicyDecision, action_request: ActionRequest, restricted_mode: ExecutionMode.optional(), summary: Text, at }),
  }),
  z.strictObject({ type: z.literal('attempt.awaiting_approval'), data: z.strictObject({ policy: PolicyDecision, approval_id: Id, at }) }),
  z.strictObject({
    type: z.literal('attempt.policy_denied'),
    data: z.strictObject({ policy: PolicyDecision, reasons: z.array(CodedReason).max(LIMITS.listItems), at }),
  }),
  z.strictObject({ type: z.literal('attempt.approval_denied'), data: z.strictObject({ approval_id: Id, at }) }),
  z.strictObject({ type: z.literal('attempt.approval_expired'), data: z.strictObject({ approval_id: Id, at }) }),
  z.strictObject({ type: z.literal('attempt.policy_reentered'), data: z.strictObject({ cause: DriftCause, note: Text.optional(), at }) }),
  z.strictObject({ type: z.literal('attempt.grant_attached'), data: z.strictObject({ grant_id: Id, expires_at: Timestamp, at }) }),
  z.strictObject({ type: z.literal('attempt.executing'), data: z.strictObject({ grant_id: Id, at }) }),
  /**
   * A renewal of the grant an executing attempt holds, attached in its place (issue 13): every
   * use of that grant was proven never started (`not_run_uses`, each released; none in flight,
   * none ran) and it expired (`renews_expired_at`) before the next use, so nothing of the action
   * ran and it goes on, once, under the renewal. Never after a use that may have run.
   */
  z.strictObject({
    type: z.literal('attempt.grant_renewed'),
    data: z.strictObject({
      grant_id: Id,
      expires_at: Timestamp,
      renews_grant_id: Id,
      renews_expired_at: Timestamp,
      not_run_uses: z.array(z.int().min(1).max(1_000)).max(LIMITS.listItems),
      at,
    }),
  }),
  z.strictObject({
    type: z.literal('attempt.observing'),
    data: z.strictObject({ execution_outcome: ExecutionOutcome, output_refs: z.array(Ref).max(LIMITS.listItems), at }),
  }),
  z.strictObject({ type: z.literal('attempt.unknown_outcome_receipted'), data: z.strictObject({ receipt_ref: Ref, at }) }),
  z.strictObject({
    type: z.literal('attempt.receipt_pending'),
    data: z.strictObject({ result_code: SettledResult, resolved_by: Id.optional(), evidence_refs: z.array(Ref).max(LIMITS.listItems), at }),
  }),
  z.strictObject({ type: z.literal('attempt.succeeded'), data: z.strictObject({ receipt_ref: Ref, at }) }),
  z.strictObject({ type: z.literal('attempt.failed'), data: z.strictObject({ reason_code: Name, reason: Text, receipt_ref: Ref.optional(), at }) }),
  z.strictObject({ type: z.literal('attempt.cancelled'), data: z.strictObject({ reason: Text, at }) }),
  z.strictObject({
    type: z.literal('attempt.superseded'),
    data: z.strictObject({ cause: z.union([DriftCause, z.literal('orchestrator')]), superseded_by_attempt_id: Id.optional(), note: Text.optional(), at }),
  }),
]);
export type AttemptEvent = z.infer<typeof AttemptEvent>;
export type AttemptEventType = AttemptEvent['type'];

/** States before any side effect: the only ones an attempt may be cancelled, failed or superseded from. */
export const ATTEMPT_PRE_EXECUTION_STATES: readonly AttemptStatus[] = Object.freeze([
  'created',
  'leased',
  'compiling_context',
  'reasoning',
  'awaiting_policy',
  'awaiting_approval',
  'authorized',
] as const);

type Edge = { readonly from: readonly AttemptStatus[]; readonly to: AttemptStatus };

/**
 * The attempt state machine as data (Hermit 12.3): each event's source states
 * and target. Once `executing` is entered the only way out is `observing` →
 * `receipt_pending` → `succeeded | failed`: an effect that may have run is
 * never cancelled, superseded or re-executed silently (Hermit 19.3, 19.4). The
 * one edge that stays in `executing` swaps its grant for a renewal, and only
 * when every use of the grant was proven never started (`attempt.grant_renewed`).
 */
export const ATTEMPT_EVENT_EDGES: Readonly<Record<Exclude<AttemptEventType, 'attempt.created'>, Edge>> = Object.freeze({
  'attempt.leased': { from: ['created'], to: 'leased' },
  'attempt.compiling_context': { from: ['leased'], to: 'compiling_context' },
  'attempt.reasoning': { from: ['compiling_context'], to: 'reasoning' },
  'attempt.awaiting_policy': { from: ['leased', 'compiling_context', 'reasoning'], to: 'awaiting_policy' },
  'attempt.authorized': { from: ['awaiting_policy', 'awaiting_approval'], to: 'authorized' },
  'attempt.downgraded': { from: ['awaiting_policy'], to: 'authorized' },
  'attempt.awaiting_approval': { from: ['awaiting_policy'], to: 'awaiting_approval' },
  'attempt.policy_denied': { from: ['awaiting_policy'], to: 'failed' },
  'attempt.approval_denied': { from: ['awaiting_approval'], to: 'failed' },
  'attempt.approval_expired': { from: ['awaiting_approval'], to: 'failed' },
  'attempt.policy_reentered': { from: ['awaiting_approval', 'authorized'], to: 'awaiting_policy' },
  'attempt.grant_attached': { from: ['authorized'], to: 'authorized' },
  'attempt.executing': { from: ['authorized'], to: 'executing' },
  // Stays executing: the attempt's effect has not started, but it is never re-entered (no second `attempt.executing`).
  'attempt.grant_renewed': { from: ['executing'], to: 'executing' },
  'attempt.observing': { from: ['executing'], to: 'observing' },
  'attempt.unknown_outcome_receipted': { from: ['observing'], to: 'observing' },
  'attempt.receipt_pending': { from: ['observing'], to: 'receipt_pending' },
  'attempt.succeeded': { from: ['receipt_pending'], to: 'succeeded' },
  'attempt.failed': { from: [...ATTEMPT_PRE_EXECUTION_STATES, 'receipt_pending'], to: 'failed' },
  'attempt.cancelled': { from: ATTEMPT_PRE_EXECUTION_STATES, to: 'cancelled' },
  'attempt.superseded': { from: ATTEMPT_PRE_EXECUTION_STATES, to: 'superseded' },
});

/** `ATTEMPT_EVENT_EDGES` folded into "state → states it may move to", for documentation and checks. */
export const ATTEMPT_TRANSITIONS: Readonly<Record<AttemptStatus, readonly AttemptStatus[]>> = (() => {
  const table: Record<string, AttemptStatus[]> = {};
  for (const status of AttemptStatus.options) table[status] = [];
  for (const edge of Object.values(ATTEMPT_EVENT_EDGES)) {
    for (const from of edge.from) {
      const targets = table[from] as AttemptStatus[];
      if (from !== edge.to && !targets.includes(edge.to)) targets.push(edge.to);
    }
  }
  return Object.freeze(Object.fromEntries(Object.entries(table).map(([k, v]) => [k, Object.freeze(v)]))) as Readonly<Record<AttemptStatus, readonly AttemptStatus[]>>;
})();
