import { KnowledgeScope, LIMITS, type EpistemicType, type LastWill, type TrustTier } from '@writ/contracts';
import type { Asserter, BeliefDraft } from './belief.decider.js';
import { KnowledgeError } from './knowledge.errors.js';

/**
 * The trust tier a Last Will delta lands with, by how the participant says it
 * knew it (seed 002's `epistemic_type`; Hermit 15.4's tiers). Kernel policy as
 * data, read by nothing else:
 *
 * - `retrieved`: the participant read it from a source it names (`provenance`,
 *   `support`); Writ holds the signed Last Will as evidence but checked nothing
 *   itself, so it is `observed`: it may steer planning, never an autonomous action.
 * - `forensic_insight`: what a read-only forensic seed found in a crashed
 *   participant's remains (its capabilities were checked read-only at spawn):
 *   an observation of recorded state, so `observed` too.
 * - `inferred`, `hypothesis`, `unknown`: reasoning, a guess, or a declared gap.
 *   Nobody observed them, so `untrusted`: kept on the task for the record and
 *   listed in a pack's `omitted` (TRUST_TIER_BARRED_FROM_PLANNING), never
 *   planned with; a successor that needs one re-derives it, or a director asserts it.
 *
 * None is ever `verified` (that needs a receipt of Writ's own), nor
 * `user_asserted` / `policy_asserted` (a participant is an agent).
 */
export const EPISTEMIC_TRUST_TIERS = Object.freeze({
  retrieved: 'observed',
  forensic_insight: 'observed',
  inferred: 'untrusted',
  hypothesis: 'untrusted',
  unknown: 'untrusted',
} as const satisfies Record<EpistemicType, TrustTier>);

/** The tier of a delta of this epistemic type; an unknown type lands `untrusted` (deny by default). */
export function epistemicTrustTier(type: string): TrustTier {
  return (EPISTEMIC_TRUST_TIERS as Record<string, TrustTier>)[type] ?? 'untrusted';
}

/**
 * The belief id of delta `index` of the Last Will whose payload hash is
 * `lastWillHash`: the same will lands as the same ids however often its event
 * is delivered, so a redelivery asserts nothing twice.
 */
export function lastWillBeliefId(lastWillHash: string, index: number): string {
  return `lw-${lastWillHash.slice(0, 32)}-${index}`;
}

/** The evidence id of a Last Will stored content-addressed: the artifact bucket's object name, `sha256-<hex>`. */
export const lastWillArtifactId = (sha256: string): string => `sha256-${sha256}`;

/** Where a verified Last Will is to land, and who acts in that task. */
export interface LastWillLanding {
  /** The participant that wrote the Last Will (its verified stream's seed_id). */
  readonly seed_id: string;
  /** The Last Will as `participant.retired` recorded it (verified by ingress), secret-looking text already redacted by the caller. */
  readonly last_will: LastWill;
  /** Its payload hash (`participant.retired.last_will_hash`). */
  readonly last_will_hash: string;
  /** The stored Last Will's artifact id (`lastWillArtifactId`): what every belief cites. */
  readonly evidence_artifact_id: string;
  /** The task, as its log folds. */
  readonly task: { readonly task_id: string; readonly owner_principal_id: string };
  /**
   * The participant whose action in the task brought it here: the writer
   * itself, or a participant reconstituted from it (its verified
   * `participant.spawn_verified.reconstituted_from`).
   */
  readonly actor: { readonly seed_id: string; readonly reconstituted_from: string | null };
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/**
 * The beliefs a verified Last Will lands as on a task (seed 002 "apply deltas
 * only after verification"; issue 17): one per delta, its tier by
 * `EPISTEMIC_TRUST_TIERS`, asserted by the participant (an agent), citing the
 * stored Last Will at the delta's JSON path. Only on a task of that
 * participant's line: the task's owner is the actor, and the actor is the
 * writer or a reconstitution of it; anything else is
 * KNOWLEDGE_LAST_WILL_NOT_OF_TASK and nothing lands.
 */
export function lastWillBeliefs(landing: LastWillLanding): { readonly asserter: Asserter; readonly beliefs: BeliefDraft[] } {
  const { seed_id: seedId, last_will: will, task, actor } = landing;
  const refuse = (why: string) =>
    new KnowledgeError('KNOWLEDGE_LAST_WILL_NOT_OF_TASK', `the Last Will of ${seedId} does not land on task ${task.task_id}: ${why}`, {
      details: { seed_id: seedId, task_id: task.task_id, actor: actor.seed_id },
    });
  if (will.seed_id !== seedId) throw refuse(`it is the Last Will of ${will.seed_id}`);
  if (task.owner_principal_id !== actor.seed_id) throw refuse(`the task belongs to ${task.owner_principal_id}, not to ${actor.seed_id}`);
  if (actor.seed_id !== seedId && actor.reconstituted_from !== seedId) throw refuse(`${actor.seed_id} is neither ${seedId} nor reconstituted from it`);
  const scope = KnowledgeScope.safeParse(will.anchor_id).success ? will.anchor_id : `participant:${seedId}`;
  const beliefs = will.deltas.map(
    (delta, index): BeliefDraft => ({
      belief_id: lastWillBeliefId(landing.last_will_hash, index),
      task_id: task.task_id,
      claim: clip(delta.content, LIMITS.text),
      scope,
      evidence_refs: [{ kind: 'artifact', id: landing.evidence_artifact_id, selector: { kind: 'json_path', path: `$.deltas[${index}]` } }],
      confidence: delta.confidence,
      trust_tier: epistemicTrustTier(delta.epistemic_type),
      epistemic_type: delta.epistemic_type,
      structured_assertion: { last_will: { seed_id: seedId, delta: index, provenance: delta.provenance, support: [...delta.support] } },
    }),
  );
  return { asserter: { principal_id: seedId, principal_type: 'agent' }, beliefs };
}
