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
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { z } from 'zod';
import type { RecordedSnapshot } from './rollback-method.js';

/** SHA-256 of a recorded JSON value's RFC 8785 form: what a receipt binds it by. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** What the log says about one attempt: the inputs of its receipt. */
export interface AttemptFacts {
  /** The request as proposed (`attempt.awaiting_policy`). */
  readonly request: ActionRequest | null;
  readonly requestEventId: string | null;
  /** The lower-risk request policy rewrote it to (`attempt.downgraded`), if any. */
  readonly downgradedRequest: ActionRequest | null;
  /** The latest policy verdict on the attempt. */
  readonly policy: PolicyEvaluated | null;
  /** SHA-256 of the RFC 8785 form of the request as recorded (the raw `action_request` of `attempt.awaiting_policy`). */
  readonly requestHash: string | null;
  /** SHA-256 of the RFC 8785 form of the latest `policy.evaluated` policy result as recorded. */
  readonly policyResultHash: string | null;
  /** The latest approval of the attempt and how it stands. */
  readonly approval: AttemptApproval | null;
  /** The latest grant minted for the attempt. */
  readonly grant: CapabilityGrantClaims | null;
  /** SHA-256 of that grant's compact JWS as `grant.issued` recorded it; null when the event carries no JWS. */
  readonly grantJwsHash: string | null;
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
  /**
   * `attempt.grant_renewed`, in log order: each renewal attached in place of the grant the
   * attempt was executing on, every use of which was proven never started (issue 13), with the
   * executor's refusal of that grant (its expiry) as the log holds it.
   */
  readonly renewals: readonly GrantRenewal[];
  /** How many grants were issued for the attempt (the first and every renewal). */
  readonly grantsIssued: number;
}

/** One renewal of the grant of an executing attempt (`attempt.grant_renewed`). */
export interface GrantRenewal {
  readonly eventId: string;
  readonly grant_id: string;
  readonly renews_grant_id: string;
  readonly renews_expired_at: string;
  readonly not_run_uses: readonly number[];
  /** The executor's last refusal of the renewed grant before the renewal, if any. */
  readonly refusal: { readonly code: string; readonly message: string } | null;
}

/** An approval of the attempt: the packet and witness it was requested on, and its resolution. */
export interface AttemptApproval {
  readonly approval_id: string;
  readonly status: ApprovalStatus;
  readonly resolved_by: string | null;
  readonly approval_packet_ref: string | null;
  /** The state witness captured when approval was requested (`approval.requested` `state_witness.ref`). */
  readonly state_witness_ref: string | null;
  /** The event that resolved it, and the content hash of its payload; null while pending. */
  readonly resolution: { readonly eventId: string; readonly payloadHash: string; readonly witness_validated: boolean | null } | null;
}

const WithRequest = z.object({ action_request: ActionRequest });
const ApprovalRequested = z.object({
  approval_id: z.string(),
  attempt_id: z.string(),
  approval_packet_ref: z.string().optional(),
  state_witness: z.object({ ref: z.string() }).loose().optional(),
});
const Resolved = z.object({ resolved_by: z.string().optional(), witness_validated: z.boolean().optional() });
const GrantIssued = z.object({ claims: CapabilityGrantClaims, jws: z.string().optional() });
const GrantRefused = z.object({ code: z.string(), message: z.string() });
const Observing = z.object({ execution_outcome: z.enum(['completed', 'errored', 'unknown']) });
const ReceiptPending = z.object({ result_code: z.enum(['succeeded', 'failed']) });
const GrantRenewed = z.object({ grant_id: z.string(), renews_grant_id: z.string(), renews_expired_at: z.string(), not_run_uses: z.array(z.int()) });

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
  /** Each grant's latest refusal, kept past a later grant.issued: a renewal names why its grant was renewed. */
  const refusals = new Map<string, { code: string; message: string }>();
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
    requestHash: null,
    policyResultHash: null,
    approval: null,
    grant: null,
    grantJwsHash: null,
    refusal: null,
    execution: null,
    observedOutcome: null,
    settledResult: null,
    resolution: null,
    renewals: [],
    grantsIssued: 0,
  };
  for (const event of events) {
    if (!belongs(event)) continue;
    const type = event.event_type;
    const payload = event.payload;
    if (type === 'attempt.awaiting_policy' && facts.request === null) {
      const parsed = WithRequest.safeParse(payload);
      if (parsed.success) facts = { ...facts, request: parsed.data.action_request, requestEventId: event.event_id, requestHash: contentHash((payload as { action_request: unknown }).action_request) };
    } else if (type === 'attempt.downgraded') {
      const parsed = WithRequest.safeParse(payload);
      if (parsed.success) facts = { ...facts, downgradedRequest: parsed.data.action_request };
    } else if (type === 'policy.evaluated') {
      const parsed = PolicyEvaluated.safeParse(payload);
      if (parsed.success) facts = { ...facts, policy: parsed.data, policyResultHash: contentHash((payload as { policy_result: unknown }).policy_result) };
    } else if (type === 'approval.requested') {
      const parsed = ApprovalRequested.safeParse(payload);
      if (parsed.success) {
        approvals.add(parsed.data.approval_id);
        facts = {
          ...facts,
          approval: {
            approval_id: parsed.data.approval_id,
            status: 'pending',
            resolved_by: null,
            approval_packet_ref: parsed.data.approval_packet_ref ?? null,
            state_witness_ref: parsed.data.state_witness?.ref ?? null,
            resolution: null,
          },
        };
      }
    } else if (type in APPROVAL_OUTCOMES && facts.approval?.approval_id === event.entity_id) {
      // The latest word on the approval: a granted one may still be invalidated by drift before it is used.
      const resolved = Resolved.safeParse(payload);
      facts = {
        ...facts,
        approval: {
          ...facts.approval,
          status: APPROVAL_OUTCOMES[type] as ApprovalStatus,
          resolved_by: resolved.success ? (resolved.data.resolved_by ?? null) : null,
          resolution: { eventId: event.event_id, payloadHash: contentHash(payload), witness_validated: resolved.success ? (resolved.data.witness_validated ?? null) : null },
        },
      };
    } else if (type === 'grant.issued') {
      const parsed = GrantIssued.safeParse(payload);
      if (parsed.success) {
        grants.add(parsed.data.claims.jti);
        facts = { ...facts, grant: parsed.data.claims, grantJwsHash: parsed.data.jws === undefined ? null : sha256Hex(parsed.data.jws), refusal: null, grantsIssued: grants.size };
      }
    } else if (type === 'grant.refused') {
      const parsed = GrantRefused.safeParse(payload);
      if (parsed.success) refusals.set(event.entity_id, parsed.data);
      if (parsed.success && facts.grant?.jti === event.entity_id) facts = { ...facts, refusal: parsed.data };
    } else if (type === 'attempt.grant_renewed') {
      const parsed = GrantRenewed.safeParse(payload);
      if (parsed.success) {
        const renewal: GrantRenewal = { eventId: event.event_id, ...parsed.data, refusal: refusals.get(parsed.data.renews_grant_id) ?? null };
        facts = { ...facts, renewals: [...facts.renewals, renewal] };
      }
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

/** Artifacts holding a file's exact bytes: pre-images the executor kept before a change, after-images it kept after one. */
const RESTORABLE_KINDS: ReadonlySet<string> = new Set(['file.preimage', 'file.snapshot']);

/**
 * The file contents the task's executions kept as `file.preimage` or
 * `file.snapshot` artifacts, by content hash: where a rollback can find a
 * pre-image. The store is content-addressed, so any such artifact with the
 * hash holds exactly those bytes.
 */
export function recordedSnapshots(events: readonly EventEnvelope[]): ReadonlyMap<string, RecordedSnapshot> {
  const snapshots = new Map<string, RecordedSnapshot>();
  for (const event of events) {
    if (event.event_type !== 'execution.completed') continue;
    const parsed = ExecutionCompleted.safeParse(event.payload);
    if (!parsed.success) continue;
    for (const artifact of parsed.data.artifacts) {
      if (RESTORABLE_KINDS.has(artifact.kind) && !snapshots.has(artifact.content_hash)) snapshots.set(artifact.content_hash, { artifact_id: artifact.artifact_id, byte_size: artifact.byte_size });
    }
  }
  return snapshots;
}
