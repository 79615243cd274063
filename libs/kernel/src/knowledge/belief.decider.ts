import type { Belief, BeliefStatus, KnowledgeEvidenceRef, PrincipalType } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, tryInstantMs } from '../shared/instant.js';
import { deletionForbidden, knowledgeUnknownCommand } from './deletion.js';
import { KnowledgeError } from './knowledge.errors.js';
import { assertionHoldsSecretByValue, secretByValue } from './secret-by-reference.js';
import { BeliefEvent } from './belief.events.js';
import { contradictionNeedsReview, trustTierRefusal } from './trust-tier.gates.js';

/** What an asserter supplies; the kernel sets status, version, created_at and asserted_by. */
export type BeliefDraft = Omit<Belief, 'status' | 'version' | 'created_at' | 'asserted_by' | 'superseded_by' | 'contradicts'> & {
  readonly contradicts?: readonly string[];
};

/** The authenticated asserter (the service checked the signature; the kernel checks what its type may claim). */
export interface Asserter {
  readonly principal_id: string;
  readonly principal_type: PrincipalType;
}

export type BeliefCommand =
  /** A new belief; `supersedes` retires an earlier one, `contradicts` marks contradictions with existing ones. */
  | Command<'assert-belief', { readonly belief: BeliefDraft; readonly asserted_by: Asserter }>
  | Command<'update-belief-confidence', { readonly belief_id: string; readonly confidence: number; readonly added_evidence?: readonly KnowledgeEvidenceRef[]; readonly updated_by: string }>
  | Command<'mark-contradiction', { readonly belief_id: string; readonly contradicts: string; readonly marked_by: string }>
  | Command<'revoke-belief', { readonly belief_id: string; readonly revoked_by: string; readonly reason: string }>
  /** Marks every belief whose `expires_at` has passed at `metadata.now`. */
  | Command<'expire-beliefs', Record<string, never>>;

export interface BeliefSetState {
  /** `initial` until the first belief; the set belongs to the task of its first belief. */
  readonly status: 'initial' | 'holding';
  readonly task_id: string | null;
  /** In assertion order; never shortened. */
  readonly beliefs: readonly Belief[];
  readonly anomalies: readonly Anomaly[];
}

export function initialState(): BeliefSetState {
  return { status: 'initial', task_id: null, beliefs: [], anomalies: [] };
}

/** Statuses a belief can still change from (contradicted ones can be superseded or revoked to resolve them). */
const LIVE: readonly BeliefStatus[] = ['active', 'contradicted'];

export function findBelief(state: BeliefSetState, beliefId: string): Belief | undefined {
  return state.beliefs.find((belief) => belief.belief_id === beliefId);
}

/** True when the belief is active and not past its `expires_at` at `nowMs` (expiry holds before its event is written). */
export function isBeliefActive(belief: Belief, nowMs: number): boolean {
  if (belief.status !== 'active') return false;
  const expires = belief.expires_at === undefined ? undefined : tryInstantMs(belief.expires_at);
  return expires === undefined || nowMs < expires;
}

function liveBelief(state: BeliefSetState, beliefId: string): Belief {
  const belief = findBelief(state, beliefId);
  if (belief === undefined) throw new KnowledgeError('KNOWLEDGE_BELIEF_NOT_FOUND', `this task holds no belief ${beliefId}`, { details: { belief_id: beliefId } });
  if (!LIVE.includes(belief.status)) {
    throw new KnowledgeError('KNOWLEDGE_BELIEF_NOT_ACTIVE', `belief ${beliefId} is ${belief.status}: assert a new belief instead`, { details: { belief_id: beliefId, status: belief.status } });
  }
  return belief;
}

function contradictionEvent(a: Belief, b: Belief, markedBy: string, at: string) {
  return {
    type: 'belief.contradiction_marked' as const,
    data: { belief_id: a.belief_id, contradicts: b.belief_id, same_scope: a.scope === b.scope, needs_review: contradictionNeedsReview(a.trust_tier, b.trust_tier), marked_by: markedBy, at },
  };
}

export function decide(command: BeliefCommand, state: BeliefSetState): BeliefEvent[] {
  const nowMs = commandNowMs(command);
  const at = command.metadata.now;
  switch (command.type) {
    case 'assert-belief': {
      const { belief: draft, asserted_by: asserter } = command.data;
      if (state.task_id !== null && draft.task_id !== state.task_id) {
        throw new KnowledgeError('KNOWLEDGE_WRONG_TASK', `these beliefs belong to task ${state.task_id}, not ${draft.task_id}`, { details: { task_id: state.task_id } });
      }
      if (findBelief(state, draft.belief_id) !== undefined) throw new KnowledgeError('KNOWLEDGE_BELIEF_EXISTS', `belief ${draft.belief_id} exists: assert a new id that supersedes it`);
      if (assertionHoldsSecretByValue(draft)) throw secretByValue(`belief ${draft.belief_id}`, 'structured_assertion', { belief_id: draft.belief_id });
      const refusal = trustTierRefusal(draft.trust_tier, asserter.principal_type, draft.evidence_refs ?? []);
      if (refusal !== undefined) {
        throw new KnowledgeError('KNOWLEDGE_TRUST_TIER_UNSUPPORTED', `belief ${draft.belief_id}: ${refusal}; assert it as untrusted or observed, or cite what supports the tier`, {
          details: { trust_tier: draft.trust_tier, asserter_type: asserter.principal_type },
        });
      }
      const superseded = draft.supersedes === undefined ? undefined : liveBelief(state, draft.supersedes);
      const contradicted = [...new Set(draft.contradicts ?? [])].map((id) => liveBelief(state, id));
      const { contradicts: _contradicts, ...rest } = draft;
      const belief: Belief = { ...rest, status: 'active', version: 1, created_at: at, asserted_by: asserter.principal_id };
      return emit(BeliefEvent, [
        { type: 'belief.asserted', data: { belief, asserter_type: asserter.principal_type, at } },
        ...(superseded === undefined ? [] : [{ type: 'belief.superseded' as const, data: { belief_id: superseded.belief_id, superseded_by: belief.belief_id, at } }]),
        ...contradicted.filter((other) => other.belief_id !== superseded?.belief_id).map((other) => contradictionEvent(belief, other, asserter.principal_id, at)),
      ]);
    }
    case 'update-belief-confidence': {
      const belief = liveBelief(state, command.data.belief_id);
      return emit(BeliefEvent, [
        {
          type: 'belief.confidence_updated',
          data: { belief_id: belief.belief_id, confidence: command.data.confidence, added_evidence: [...(command.data.added_evidence ?? [])], updated_by: command.data.updated_by, at },
        },
      ]);
    }
    case 'mark-contradiction': {
      const belief = liveBelief(state, command.data.belief_id);
      const other = liveBelief(state, command.data.contradicts);
      if (belief.belief_id === other.belief_id || (belief.contradicts ?? []).includes(other.belief_id)) {
        throw new KnowledgeError('KNOWLEDGE_CONTRADICTION_INVALID', `belief ${belief.belief_id} cannot be marked as contradicting ${other.belief_id} (itself, or already marked)`);
      }
      return emit(BeliefEvent, [contradictionEvent(belief, other, command.data.marked_by, at)]);
    }
    case 'revoke-belief': {
      const belief = liveBelief(state, command.data.belief_id);
      return emit(BeliefEvent, [{ type: 'belief.revoked', data: { belief_id: belief.belief_id, revoked_by: command.data.revoked_by, reason: command.data.reason, at } }]);
    }
    case 'expire-beliefs': {
      const due = state.beliefs.filter((belief) => {
        const expires = belief.expires_at === undefined ? undefined : tryInstantMs(belief.expires_at);
        return LIVE.includes(belief.status) && expires !== undefined && expires <= nowMs;
      });
      return emit(
        BeliefEvent,
        due.map((belief) => ({ type: 'belief.expired' as const, data: { belief_id: belief.belief_id, at } })),
      );
    }
    default: {
      const type = (command as { type?: unknown }).type;
      deletionForbidden(type, 'a belief', 'revoke it (revoke-belief) or supersede it with a new belief');
      return knowledgeUnknownCommand(type, 'the belief decider');
    }
  }
}

function bump(belief: Belief, change: Partial<Belief>): Belief {
  return { ...belief, ...change, version: belief.version + 1 };
}

function replace(state: BeliefSetState, beliefId: string, change: (belief: Belief) => Belief | undefined): BeliefSetState | undefined {
  const index = state.beliefs.findIndex((belief) => belief.belief_id === beliefId);
  const current = state.beliefs[index];
  if (current === undefined || !LIVE.includes(current.status)) return undefined;
  const next = change(current);
  if (next === undefined) return undefined;
  return { ...state, beliefs: state.beliefs.map((belief, i) => (i === index ? next : belief)) };
}

export const evolve = totalEvolve<BeliefSetState, BeliefEvent>(BeliefEvent, (state, event) => {
  switch (event.type) {
    case 'belief.asserted': {
      const { belief, asserter_type } = event.data;
      if ((state.task_id !== null && belief.task_id !== state.task_id) || findBelief(state, belief.belief_id) !== undefined) return undefined;
      if (belief.status !== 'active' || belief.version !== 1 || trustTierRefusal(belief.trust_tier, asserter_type, belief.evidence_refs) !== undefined) return undefined;
      if (assertionHoldsSecretByValue(belief)) return undefined;
      return { ...state, status: 'holding', task_id: belief.task_id, beliefs: [...state.beliefs, belief] };
    }
    case 'belief.confidence_updated':
      return replace(state, event.data.belief_id, (belief) =>
        bump(belief, { confidence: event.data.confidence, evidence_refs: [...belief.evidence_refs, ...event.data.added_evidence] }),
      );
    case 'belief.superseded':
      if (findBelief(state, event.data.superseded_by) === undefined) return undefined;
      return replace(state, event.data.belief_id, (belief) => bump(belief, { status: 'superseded', superseded_by: event.data.superseded_by }));
    case 'belief.contradiction_marked': {
      const { belief_id: a, contradicts: b, same_scope } = event.data;
      if (a === b) return undefined;
      const mark = (other: string) => (belief: Belief) => {
        if ((belief.contradicts ?? []).includes(other)) return undefined;
        return bump(belief, { contradicts: [...(belief.contradicts ?? []), other], ...(same_scope ? { status: 'contradicted' as const } : {}) });
      };
      const first = replace(state, a, mark(b));
      return first === undefined ? undefined : replace(first, b, mark(a));
    }
    case 'belief.revoked':
      return replace(state, event.data.belief_id, (belief) => bump(belief, { status: 'revoked' }));
    case 'belief.expired':
      return replace(state, event.data.belief_id, (belief) => bump(belief, { status: 'expired' }));
    default:
      return undefined;
  }
});

export const beliefDecider: Decider<BeliefCommand, BeliefEvent, BeliefSetState> = Object.freeze({ initialState, decide, evolve });
