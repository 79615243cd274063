import { PolicyEvaluated, type EventEnvelope } from '@writ/contracts';
import { approvalDecider, fold, grantDecider, type ApprovalState, type GrantState } from '@writ/kernel';

/**
 * Fields the services add to kernel events that the kernel's strict event
 * schemas do not know yet (proposed kernel change): the approval packet on
 * `approval.requested`, the signed grant on `grant.issued`. They are removed
 * before a kernel fold, which would otherwise record the event as malformed.
 */
const EXTENSIONS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'approval.requested': ['packet'],
  'grant.issued': ['jws'],
});

/** The kernel's `{ type, data }` view of a stored event. */
export function toKernelEvent(event: Pick<EventEnvelope, 'event_type' | 'payload'>): { type: string; data: Record<string, unknown> } {
  const extra = EXTENSIONS[event.event_type] ?? [];
  const data = Object.fromEntries(Object.entries(event.payload).filter(([key]) => !extra.includes(key)));
  return { type: event.event_type, data };
}

function about(events: readonly EventEnvelope[], entityType: string, entityId: string): EventEnvelope[] {
  return events.filter((event) => event.entity_type === entityType && event.entity_id === entityId && event.event_type.startsWith(`${entityType}.`));
}

/** The approval `approvalId` folded from the task's events (`initial` when never requested). */
export function foldApproval(events: readonly EventEnvelope[], approvalId: string): ApprovalState {
  return fold(approvalDecider, about(events, 'approval', approvalId).map(toKernelEvent));
}

/** The grant `grantId` folded from the task's events (`initial` when never issued). */
export function foldGrant(events: readonly EventEnvelope[], grantId: string): GrantState {
  return fold(grantDecider, about(events, 'grant', grantId).map(toKernelEvent));
}

/** The last `policy.evaluated` recording `policyResultId`, if any. */
export function findPolicyEvaluation(events: readonly EventEnvelope[], policyResultId: string): PolicyEvaluated | undefined {
  let found: PolicyEvaluated | undefined;
  for (const event of events) {
    if (event.event_type !== 'policy.evaluated') continue;
    const parsed = PolicyEvaluated.safeParse(event.payload);
    if (parsed.success && parsed.data.policy_result.policy_result_id === policyResultId) found = parsed.data;
  }
  return found;
}
