import { ApprovalPacket, DecisionRecorded, LIMITS, parseContract, type EventDraft, type EventEnvelope, type EvidenceRef, type RiskBand } from '@writ/contracts';
import type { ApprovalEvent, ApprovalRecord } from '@writ/kernel';
import { packetArtifactSha256 } from './approval-packet.js';
import { derivedId, serviceDraft } from './event-drafts.js';
import { findPolicyEvaluation, foldApproval } from './task-history.js';

/** The approval events that resolve an approval: each is recorded with a Decision. */
export type ResolutionEvent = Exclude<ApprovalEvent, { type: 'approval.requested' | 'approval.resolution_refused' }>;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The packet shown on `approval.requested`, if the event carries a valid one. */
export function requestedPacket(events: readonly EventEnvelope[], approvalId: string): ApprovalPacket | undefined {
  const requested = events.find((event) => event.event_type === 'approval.requested' && event.entity_type === 'approval' && event.entity_id === approvalId);
  const parsed = ApprovalPacket.safeParse(requested?.payload['packet']);
  return parsed.success ? parsed.data : undefined;
}

/** The risk the approver weighed: the packet's, else the policy result's, else `high` (unknown risk is not low). */
function riskOf(events: readonly EventEnvelope[], state: ApprovalRecord): RiskBand {
  const packet = requestedPacket(events, state.approval_id);
  if (packet !== undefined) return packet.risk_band;
  const resultId = state.policy_result_ref?.replace(/^policy_result:/, '');
  return (resultId === undefined ? undefined : findPolicyEvaluation(events, resultId)?.policy_result.risk_band) ?? 'high';
}

/**
 * What the decision rests on: the packet artifact, and the state witness inside it (a JSON path
 * into the same artifact). An approval whose packet is not a stored artifact (older releases)
 * cites nothing it could not show.
 */
function evidenceOf(state: ApprovalRecord): EvidenceRef[] {
  const sha256 = packetArtifactSha256(state.approval_packet_ref);
  if (sha256 === undefined) return [];
  const artifactId = `sha256-${sha256}`;
  const refs: EvidenceRef[] = [{ artifact_id: artifactId, capture_method: 'approval_packet', trust_tier: 'policy_asserted' }];
  if (state.state_witness !== null) {
    refs.push({ artifact_id: artifactId, selector: { kind: 'json_path', path: '$.state_witness' }, capture_method: 'workspace_observation', trust_tier: 'observed' });
  }
  return refs;
}

const VERB: Readonly<Record<ResolutionEvent['type'], string>> = {
  'approval.granted': 'granted',
  'approval.denied': 'denied',
  'approval.expired': 'expired',
  'approval.cancelled': 'cancelled',
  'approval.invalidated': 'invalidated',
};

/** Why, in the resolver's words where there are any: the note, the cancel reason, the drift and its cause. */
function rationaleOf(event: ResolutionEvent, state: ApprovalRecord): string {
  switch (event.type) {
    case 'approval.granted':
      return event.data.note ?? `granted by ${event.data.resolved_by}${event.data.witness_validated ? '; the state witness was revalidated unchanged' : ''}`;
    case 'approval.denied':
      return event.data.note ?? `denied by ${event.data.resolved_by}`;
    case 'approval.expired':
      return `nobody resolved the approval before it expired at ${state.expires_at}`;
    case 'approval.cancelled':
      return event.data.reason;
    case 'approval.invalidated': {
      const drifted = event.data.drifted_resources === undefined || event.data.drifted_resources.length === 0 ? '' : ` (drifted: ${event.data.drifted_resources.join(', ')})`;
      return `${event.data.cause}${drifted}${event.data.note === undefined ? '' : `: ${event.data.note}`}`;
    }
  }
}

export interface ResolutionDecisionInput {
  /** The approval as it was before the resolution. */
  readonly state: ApprovalRecord;
  readonly event: ResolutionEvent;
  /** The task's events as read (for the packet's risk band). */
  readonly events: readonly EventEnvelope[];
  /** Idempotency key of the resolution event; the decision's derives from it. */
  readonly resolutionKey: string;
  readonly actorId: string;
  readonly causationId: string | null;
}

/**
 * `decision.recorded` for one resolution (Hermit 8.8): a `safety` decision (whether the action
 * may run) by the resolver (`decided_by` = the event's `resolved_by`: the director, the approval
 * service for an expiry, the orchestrator for a cancellation), its rationale, and the packet and
 * witness it rests on. Appended in the same append as the resolution event.
 */
export function resolutionDecisionDraft(input: ResolutionDecisionInput): EventDraft {
  const { state, event } = input;
  const key = `${input.resolutionKey}:decision.recorded`;
  const decisionId = derivedId('dec', key);
  const payload: DecisionRecorded = parseContract('DecisionRecorded', DecisionRecorded, {
    decision: {
      decision_id: decisionId,
      task_id: state.task_id,
      step_id: state.step_id,
      attempt_id: state.attempt_id,
      decision_type: 'safety',
      summary: clip(`approval ${state.approval_id} ${VERB[event.type]} by ${event.data.resolved_by}`, LIMITS.text),
      rationale: clip(rationaleOf(event, state), LIMITS.longText),
      evidence_refs: evidenceOf(state),
      risk_level: riskOf(input.events, state),
      decided_by: event.data.resolved_by,
      // A resolution is final: a later change needs a new approval, not a reversal of this one.
      reversible: false,
      created_at: event.data.at,
    },
    subject_ref: `approval:${state.approval_id}`,
    outcome_event: event.type,
  });
  return serviceDraft({
    key,
    eventType: 'decision.recorded',
    entityType: 'decision',
    entityId: decisionId,
    stepId: state.step_id,
    attemptId: state.attempt_id,
    occurredAt: event.data.at,
    actorId: input.actorId,
    payload: payload as unknown as Record<string, unknown>,
    causationId: input.causationId,
    correlationId: state.task_id,
  });
}

/** The resolution event's draft and its decision's, for one append. */
export function resolutionDrafts(input: ResolutionDecisionInput & { readonly occurredAt: string; readonly correlationId: string }): [EventDraft, EventDraft] {
  const { state, event } = input;
  const resolution = serviceDraft({
    key: input.resolutionKey,
    eventType: event.type,
    entityType: 'approval',
    entityId: state.approval_id,
    stepId: state.step_id,
    attemptId: state.attempt_id,
    occurredAt: input.occurredAt,
    actorId: input.actorId,
    payload: { ...event.data },
    causationId: input.causationId,
    correlationId: input.correlationId,
  });
  return [resolution, resolutionDecisionDraft(input)];
}

/** What a resolution left unfinished: the resolution event that landed, and its decision if that did not. */
export interface LandedResolution {
  readonly event: EventEnvelope;
  /** `decision.recorded` still to append (undefined: it landed too). */
  readonly decision: EventDraft | undefined;
}

/**
 * The resolution of `approvalId` this very cause (`causationId`) already
 * appended, if any, with the decision it still lacks. A resolution and its
 * decision are two publishes: a writer reacting to the first (the
 * orchestrator does within milliseconds) makes the second lose its guard, and
 * a redelivered command or a re-sent request would otherwise find the approval
 * resolved and leave the decision unrecorded (or refuse its own resolution).
 */
export function landedResolution(events: readonly EventEnvelope[], approvalId: string, causationId: string, actorId: string): LandedResolution | undefined {
  const index = events.findIndex(
    (event) => event.entity_type === 'approval' && event.entity_id === approvalId && event.causation_id === causationId && event.event_type !== 'approval.requested' && event.event_type.startsWith('approval.'),
  );
  const event = events[index];
  if (event === undefined) return undefined;
  const resolutionKey = event.idempotency_key ?? '';
  if (events.some((other) => other.idempotency_key === `${resolutionKey}:decision.recorded`)) return { event, decision: undefined };
  const before = events.slice(0, index);
  const state = foldApproval(before, approvalId);
  if (state.status === 'initial') return { event, decision: undefined };
  const decision = resolutionDecisionDraft({
    state,
    event: { type: event.event_type, data: event.payload } as unknown as ResolutionEvent,
    events: before,
    resolutionKey,
    actorId,
    causationId,
  });
  return { event, decision };
}

