import { redactSecrets } from '@writ/telemetry';
import { field, idField, instant, isObject, occurredAt, text, type ProjectedEvent } from '../projected-event.js';
import type { Locator, View, Folded } from './view.js';
import type { DecisionRow } from '@writ/contracts/projection-rows';

/**
 * The decision timeline (Hermit 13.6, 16): every Decision of a task in log
 * order, from `policy.evaluated` (the policy's decision with its result:
 * outcome, risk band, profile and version) and `decision.recorded` (a
 * decision made outside policy, e.g. an approval resolution with its
 * resolver). Keyed by the event that carried it, so the order is `task_seq`.
 * Free text passes through the secret redaction like the timeline's payloads.
 */
export type { DecisionRow };

const DECISION_EVENTS = new Set(['policy.evaluated', 'decision.recorded']);

function locate(event: ProjectedEvent): Locator | undefined {
  if (event.aggregate.type !== 'task' || !DECISION_EVENTS.has(event.envelope.event_type)) return undefined;
  return idField(field(event.envelope.payload, 'decision'), 'decision_id') === null ? undefined : { task_id: event.aggregate.id, task_seq: event.envelope.task_seq };
}

function fold(row: DecisionRow | undefined, event: ProjectedEvent): Folded<DecisionRow> | undefined {
  // One row per event: a redelivery changes nothing.
  if (row !== undefined) return row;
  const { envelope } = event;
  const data = envelope.payload;
  const raw = field(data, 'decision');
  const decisionId = idField(raw, 'decision_id');
  if (!isObject(raw) || decisionId === null) return undefined;
  const decision = redactSecrets(raw);
  const policy = envelope.event_type === 'policy.evaluated' ? field(data, 'policy_result') : undefined;
  const evidence = decision['evidence_refs'];
  const reversible = decision['reversible'];
  return {
    task_id: event.aggregate.id,
    task_seq: envelope.task_seq,
    decision_id: decisionId,
    source: envelope.event_type,
    step_id: idField(decision, 'step_id') ?? envelope.step_id ?? null,
    attempt_id: idField(decision, 'attempt_id') ?? envelope.attempt_id ?? null,
    decision_type: text(decision, 'decision_type'),
    summary: text(decision, 'summary'),
    rationale: text(decision, 'rationale'),
    risk_level: text(decision, 'risk_level'),
    decided_by: idField(decision, 'decided_by'),
    reversible: typeof reversible === 'boolean' ? reversible : null,
    evidence_refs: Array.isArray(evidence) ? evidence : [],
    policy_result_id: idField(policy, 'policy_result_id'),
    policy_outcome: text(policy, 'outcome'),
    policy_profile: text(policy, 'policy_profile_ref'),
    policy_version: text(policy, 'policy_version'),
    subject_ref: envelope.event_type === 'decision.recorded' ? text(data, 'subject_ref') : null,
    outcome_event: envelope.event_type === 'decision.recorded' ? text(data, 'outcome_event') : null,
    stream_seq: event.streamSeq,
    created_at: instant(decision['created_at']) ?? occurredAt(event),
  };
}

export const decisionsView: View<DecisionRow> = {
  name: 'decisions',
  primaryKey: ['task_id', 'task_seq'],
  published: true,
  topicId: (row) => row.decision_id,
  locate,
  fold,
};
