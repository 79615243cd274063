import { Belief, KnowledgeEvidenceRef, PrincipalType, type BeliefStatus } from '@writ/contracts';
import { assertionHoldsSecretByValue, trustTierRefusal } from '@writ/kernel';
import { redactSecrets } from '@writ/telemetry';
import { field, idField, occurredAt, text, type ProjectedEvent } from '../projected-event.js';
import { patch, type Folded, type Locator, type View } from './view.js';
import type { BeliefRow } from '@writ/contracts/projection-rows';

/**
 * The belief view (Hermit 13.6, 15.3): one row per belief of a task, never
 * removed. Folded as the kernel's belief `evolve` folds them: an assertion
 * is taken only as a new, active, version-1 belief of this task whose trust
 * tier its asserter and evidence support (`trustTierRefusal`, checked again
 * here: a forged tier in the log is not shown); every later change applies
 * only to a live (active or contradicted) belief and raises its version.
 * A secret-marked belief keeps its claim out of the row; free text passes the
 * secret redaction.
 */
export type { BeliefRow };

const LIVE: readonly BeliefStatus[] = ['active', 'contradicted'];

function locate(event: ProjectedEvent): Locator | readonly Locator[] | undefined {
  const { envelope } = event;
  if (event.aggregate.type !== 'task' || !envelope.event_type.startsWith('belief.')) return undefined;
  const task = event.aggregate.id;
  if (envelope.event_type === 'belief.asserted') {
    const id = idField(field(envelope.payload, 'belief'), 'belief_id');
    return id === null ? undefined : { task_id: task, belief_id: id };
  }
  const id = idField(envelope.payload, 'belief_id');
  if (id === null) return undefined;
  const other = envelope.event_type === 'belief.contradiction_marked' ? idField(envelope.payload, 'contradicts') : null;
  return other === null || other === id ? { task_id: task, belief_id: id } : [{ task_id: task, belief_id: id }, { task_id: task, belief_id: other }];
}

function asserted(event: ProjectedEvent): Folded<BeliefRow> | undefined {
  const data = event.envelope.payload;
  const parsed = Belief.safeParse(data['belief']);
  const asserter = PrincipalType.safeParse(data['asserter_type']);
  if (!parsed.success || !asserter.success) return undefined;
  const belief = parsed.data;
  if (belief.task_id !== event.aggregate.id || belief.status !== 'active' || belief.version !== 1) return undefined;
  if (trustTierRefusal(belief.trust_tier, asserter.data, belief.evidence_refs) !== undefined) return undefined;
  // As the kernel folds it: a secret belief holding its secret by value is not applied (a secret is recorded by reference).
  if (assertionHoldsSecretByValue(belief)) return undefined;
  const secret = belief.sensitivity === 'secret';
  const at = occurredAt(event);
  return {
    task_id: belief.task_id,
    belief_id: belief.belief_id,
    claim: secret ? null : (redactSecrets(belief.claim) as string),
    claim_withheld: secret,
    scope: belief.scope,
    trust_tier: belief.trust_tier,
    status: 'active',
    confidence: belief.confidence,
    version: 1,
    evidence_refs: belief.evidence_refs,
    asserted_by: belief.asserted_by,
    asserter_type: asserter.data,
    step_id: belief.step_id ?? null,
    attempt_id: belief.attempt_id ?? null,
    supersedes: belief.supersedes ?? null,
    superseded_by: null,
    contradicts: [],
    needs_review: false,
    expires_at: belief.expires_at === undefined ? null : new Date(Date.parse(belief.expires_at)).toISOString(),
    revoked_by: null,
    revoke_reason: null,
    epistemic_type: belief.epistemic_type ?? null,
    sensitivity: belief.sensitivity ?? null,
    created_at: at,
    updated_at: at,
  };
}

function fold(row: BeliefRow | undefined, event: ProjectedEvent, locator?: Locator): Folded<BeliefRow> | undefined {
  const { envelope } = event;
  const data = envelope.payload;
  if (envelope.event_type === 'belief.asserted') return row ?? asserted(event);
  if (row === undefined || !LIVE.includes(row.status)) return row;
  const at = occurredAt(event);
  const bump = (changes: Partial<BeliefRow>) => patch(row, { ...changes, version: row.version + 1 }, at);
  switch (envelope.event_type) {
    case 'belief.confidence_updated': {
      const confidence = data['confidence'];
      const added = KnowledgeEvidenceRef.array().safeParse(data['added_evidence']);
      if (typeof confidence !== 'number' || confidence < 0 || confidence > 1 || !added.success) return row;
      return bump({ confidence, evidence_refs: [...row.evidence_refs, ...added.data] });
    }
    case 'belief.superseded': {
      const by = idField(data, 'superseded_by');
      return by === null ? row : bump({ status: 'superseded', superseded_by: by });
    }
    case 'belief.contradiction_marked': {
      const a = idField(data, 'belief_id');
      const b = idField(data, 'contradicts');
      if (a === null || b === null || a === b) return row;
      const other = locator?.['belief_id'] === a ? b : a;
      if (row.contradicts.includes(other)) return row;
      const sameScope = data['same_scope'] === true;
      return bump({ contradicts: [...row.contradicts, other], needs_review: row.needs_review || data['needs_review'] === true, ...(sameScope ? { status: 'contradicted' as const } : {}) });
    }
    case 'belief.revoked':
      return bump({ status: 'revoked', revoked_by: idField(data, 'revoked_by'), revoke_reason: redactSecrets(text(data, 'reason')) });
    case 'belief.expired':
      return bump({ status: 'expired' });
    default:
      return row;
  }
}

export const beliefsView: View<BeliefRow> = {
  name: 'beliefs',
  primaryKey: ['task_id', 'belief_id'],
  published: true,
  topicId: (row) => row.belief_id,
  locate,
  fold,
};
