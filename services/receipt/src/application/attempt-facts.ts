import {
  ActionRequest,
  CapabilityGrantClaims,
  ExecutionCompleted,
  ExecutionOutcomeResolved,
  PolicyEvaluated,
  ReceiptIssued,
  type EventEnvelope,
  type ApprovalStatus,
} from '@writ/contracts';
import { z } from 'zod';

/** What the log says about one attempt: the inputs of its receipt. */
export interface AttemptFacts {
  /** The request as proposed (`attempt.awaiting_policy`). */
  readonly request: ActionRequest | null;
  readonly requestEventId: string | null;
  /** The lower-risk request policy rewrote it to (`attempt.downgraded`), if any. */
  readonly downgradedRequest: ActionRequest | null;
  /** The latest policy verdict on the attempt. */
  readonly policy: PolicyEvaluated | null;
  /** The latest approval of the attempt and how it stands. */
  readonly approval: { readonly approval_id: string; readonly status: ApprovalStatus; readonly resolved_by: string | null } | null;
  /** The latest grant minted for the attempt. */
  readonly grant: CapabilityGrantClaims | null;
  /** The executor's refusal of that grant, if it refused. */
  readonly refusal: { readonly code: string; readonly message: string } | null;
  /** What the executor observed (`execution.completed` under one of the attempt's grants). */
  readonly execution: { readonly eventId: string; readonly completed: ExecutionCompleted } | null;
  /** `attempt.observing`: the orchestrator's view of the execution. */
  readonly observedOutcome: 'completed' | 'errored' | 'unknown' | null;
  /** `attempt.receipt_pending`: the settled result the receipt carries. */
  readonly settledResult: 'succeeded' | 'failed' | null;
  /**
   * `execution.outcome_resolved` of the recorded execution: a director settled its unknown
   * outcome on evidence outside the log (Hermit 19.4); the effect itself was not observed.
   */
  readonly resolution: { readonly eventId: string; readonly resolved: ExecutionOutcomeResolved } | null;
}

const WithRequest = z.object({ action_request: ActionRequest });
const ApprovalRequested = z.object({ approval_id: z.string(), attempt_id: z.string() });
const Resolved = z.object({ resolved_by: z.string().optional() });
const GrantIssued = z.object({ claims: CapabilityGrantClaims });
const GrantRefused = z.object({ code: z.string(), message: z.string() });
const Observing = z.object({ execution_outcome: z.enum(['completed', 'errored', 'unknown']) });
const ReceiptPending = z.object({ result_code: z.enum(['succeeded', 'failed']) });

const APPROVAL_OUTCOMES: Readonly<Record<string, ApprovalStatus>> = {
  'approval.granted': 'granted',
  'approval.denied': 'denied',
  'approval.expired': 'expired',
  'approval.cancelled': 'cancelled',
  'approval.invalidated': 'invalidated',
};

function payloadAttempt(event: EventEnvelope): string | undefined {
  const payload = event.payload as Record<string, unknown>;
  if (typeof payload['attempt_id'] === 'string') return payload['attempt_id'];
  const nested = (payload['policy_result'] ?? payload['claims'] ?? payload['receipt']) as Record<string, unknown> | undefined;
  return typeof nested?.['attempt_id'] === 'string' ? nested['attempt_id'] : undefined;
}

/**
 * Gathers the attempt's facts from its task's events. An event belongs to the
 * attempt by its envelope `attempt_id`; failing that, by the attempt named in
 * its payload, or through the approval or grant it is about (approval.* and
 * grant.* events carry their aggregate's id; execution.completed its grant id).
 */
export function attemptFacts(events: readonly EventEnvelope[], attemptId: string): AttemptFacts {
  const approvals = new Set<string>();
  const grants = new Set<string>();
  const belongs = (event: EventEnvelope): boolean => {
    if (event.attempt_id !== undefined) return event.attempt_id === attemptId;
    const named = payloadAttempt(event);
    if (named !== undefined) return named === attemptId;
    if (event.entity_type === 'attempt') return event.entity_id === attemptId;
    if (event.entity_type === 'approval') return approvals.has(event.entity_id);
    if (event.entity_type === 'grant') return grants.has(event.entity_id);
    const grantId = (event.payload as { grant_id?: unknown }).grant_id;
    return event.event_type === 'execution.completed' && typeof grantId === 'string' && grants.has(grantId);
  };

  let facts: { -readonly [K in keyof AttemptFacts]: AttemptFacts[K] } = {
    request: null,
    requestEventId: null,
    downgradedRequest: null,
    policy: null,
    approval: null,
    grant: null,
    refusal: null,
    execution: null,
    observedOutcome: null,
    settledResult: null,
    resolution: null,
  };
  for (const event of events) {
    if (!belongs(event)) continue;
    const type = event.event_type;
    const payload = event.payload;
    if (type === 'attempt.awaiting_policy' && facts.request === null) {
      const parsed = WithRequest.safeParse(payload);
      if (parsed.success) facts = { ...facts, request: parsed.data.action_request, requestEventId: event.event_id };
    } else if (type === 'attempt.downgraded') {
      const parsed = WithRequest.safeParse(payload);
      if (parsed.success) facts = { ...facts, downgradedRequest: parsed.data.action_request };
    } else if (type === 'policy.evaluated') {
      const parsed = PolicyEvaluated.safeParse(payload);
      if (parsed.success) facts = { ...facts, policy: parsed.data };
    } else if (type === 'approval.requested') {
      const parsed = ApprovalRequested.safeParse(payload);
      if (parsed.success) {
        approvals.add(parsed.data.approval_id);
        facts = { ...facts, approval: { approval_id: parsed.data.approval_id, status: 'pending', resolved_by: null } };
      }
    } else if (type in APPROVAL_OUTCOMES && facts.approval?.approval_id === event.entity_id) {
      const resolved = Resolved.safeParse(payload);
      facts = { ...facts, approval: { ...facts.approval, status: APPROVAL_OUTCOMES[type] as ApprovalStatus, resolved_by: resolved.success ? (resolved.data.resolved_by ?? null) : null } };
    } else if (type === 'grant.issued') {
      const parsed = GrantIssued.safeParse(payload);
      if (parsed.success) {
        grants.add(parsed.data.claims.jti);
        facts = { ...facts, grant: parsed.data.claims, refusal: null };
      }
    } else if (type === 'grant.refused' && facts.grant?.jti === event.entity_id) {
      const parsed = GrantRefused.safeParse(payload);
      if (parsed.success) facts = { ...facts, refusal: parsed.data };
    } else if (type === 'execution.completed') {
      const parsed = ExecutionCompleted.safeParse(payload);
      if (parsed.success) facts = { ...facts, execution: { eventId: event.event_id, completed: parsed.data } };
    } else if (type === 'execution.outcome_resolved') {
      const parsed = ExecutionOutcomeResolved.safeParse(payload);
      if (parsed.success) facts = { ...facts, resolution: { eventId: event.event_id, resolved: parsed.data } };
    } else if (type === 'attempt.observing') {
      const parsed = Observing.safeParse(payload);
      if (parsed.success) facts = { ...facts, observedOutcome: parsed.data.execution_outcome };
    } else if (type === 'attempt.receipt_pending') {
      const parsed = ReceiptPending.safeParse(payload);
      if (parsed.success) facts = { ...facts, settledResult: parsed.data.result_code };
    }
  }
  return facts;
}

/** What the log says about one approval: the inputs of its `approval_resolved` receipt. */
export interface ApprovalFacts {
  readonly approval_id: string;
  readonly attempt_id: string;
  /** `approval.requested`: the packet the resolver was shown, and what it was about. */
  readonly requested: {
    readonly eventId: string;
    readonly approval_packet_ref: string;
    readonly policy_result_ref: string | null;
    readonly requested_by: string;
    readonly state_witness_ref: string | null;
  } | null;
  /** The event that resolved it, if any (the first resolution; an approval resolves once). */
  readonly resolution: {
    readonly eventId: string;
    readonly status: Exclude<ApprovalStatus, 'pending'>;
    readonly resolved_by: string | null;
    readonly witness_validated: boolean | null;
    readonly invalidation_cause: string | null;
    readonly drifted_resources: readonly string[];
    readonly note: string | null;
    /** The resolution event's payload as recorded (the receipt binds its content hash). */
    readonly payload: Record<string, unknown>;
  } | null;
}

const ApprovalRequestedFacts = z.object({
  approval_id: z.string(),
  attempt_id: z.string(),
  approval_packet_ref: z.string(),
  policy_result_ref: z.string().optional(),
  requested_by: z.string(),
  state_witness: z.object({ ref: z.string() }).loose().optional(),
});
const ResolutionFacts = z.object({
  resolved_by: z.string().optional(),
  witness_validated: z.boolean().optional(),
  cause: z.string().optional(),
  drifted_resources: z.array(z.string()).optional(),
  note: z.string().optional(),
  reason: z.string().optional(),
});

/** Gathers one approval's request and resolution from its task's events (approval.* carry the approval as their entity). */
export function approvalFacts(events: readonly EventEnvelope[], approvalId: string): ApprovalFacts {
  let attemptId = '';
  let requested: ApprovalFacts['requested'] = null;
  let resolution: ApprovalFacts['resolution'] = null;
  for (const event of events) {
    if (!event.event_type.startsWith('approval.')) continue;
    const about = event.entity_type === 'approval' ? event.entity_id : (event.payload as { approval_id?: unknown }).approval_id;
    if (about !== approvalId) continue;
    if (event.event_type === 'approval.requested' && requested === null) {
      const parsed = ApprovalRequestedFacts.safeParse(event.payload);
      if (!parsed.success) continue;
      attemptId = parsed.data.attempt_id;
      requested = {
        eventId: event.event_id,
        approval_packet_ref: parsed.data.approval_packet_ref,
        policy_result_ref: parsed.data.policy_result_ref ?? null,
        requested_by: parsed.data.requested_by,
        state_witness_ref: parsed.data.state_witness?.ref ?? null,
      };
    } else if (event.event_type in APPROVAL_OUTCOMES && resolution === null) {
      const parsed = ResolutionFacts.safeParse(event.payload);
      const data = parsed.success ? parsed.data : {};
      resolution = {
        eventId: event.event_id,
        status: APPROVAL_OUTCOMES[event.event_type] as Exclude<ApprovalStatus, 'pending'>,
        resolved_by: data.resolved_by ?? null,
        witness_validated: data.witness_validated ?? null,
        invalidation_cause: event.event_type === 'approval.invalidated' ? (data.cause ?? null) : null,
        drifted_resources: data.drifted_resources ?? [],
        note: data.note ?? data.reason ?? null,
        payload: event.payload,
      };
    }
  }
  return { approval_id: approvalId, attempt_id: attemptId, requested, resolution };
}

/** The receipts already issued in the task, in log order. */
export function issuedReceipts(events: readonly EventEnvelope[]): ReceiptIssued[] {
  const receipts: ReceiptIssued[] = [];
  for (const event of events) {
    if (event.event_type !== 'receipt.issued') continue;
    const parsed = ReceiptIssued.safeParse(event.payload);
    if (parsed.success) receipts.push(parsed.data);
  }
  return receipts;
}
