import { describe, expect, it } from 'vitest';
import { at, deciderSpec, meta } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { beliefDecider, findBelief, isBeliefActive, type Asserter, type BeliefCommand, type BeliefDraft, type BeliefSetState } from './belief.decider.js';
import type { BeliefEvent } from './belief.events.js';

const spec = deciderSpec(beliefDecider);
const agent: Asserter = { principal_id: 'agent-1', principal_type: 'agent' };
const draft = (over: Partial<BeliefDraft> = {}): BeliefDraft => ({
  belief_id: 'b-1',
  task_id: 'task-1',
  claim: 'the tests pass on main',
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'observation', id: 'obs-1' }],
  confidence: 0.7,
  trust_tier: 'observed',
  ...over,
});
const assert = (over: Partial<BeliefDraft> = {}, by: Asserter = agent, s = 0): BeliefCommand => ({ type: 'assert-belief', data: { belief: draft(over), asserted_by: by }, metadata: meta(s) });
const run = (commands: BeliefCommand[]): BeliefEvent[] =>
  commands.reduce<BeliefEvent[]>((events, command) => [...events, ...beliefDecider.decide(command, fold(beliefDecider, events))], []);
const stateOf = (events: readonly unknown[]) => fold(beliefDecider, events) as BeliefSetState;

describe('belief decider (Hermit 8.6, 15.3)', () => {
  it('given no beliefs, when an observed belief with evidence is asserted, then belief.asserted with status active, version 1', () => {
    const [event] = spec.given([]).when(assert()).thenEvents();
    expect(event).toEqual({
      type: 'belief.asserted',
      data: { belief: { ...draft(), status: 'active', version: 1, created_at: at(0), asserted_by: 'agent-1' }, asserter_type: 'agent', at: at(0) },
    });
  });

  it.each([
    ['an agent claims verified without a receipt', assert({ trust_tier: 'verified' })],
    ['an agent claims user_asserted', assert({ trust_tier: 'user_asserted' })],
    ['an agent claims policy_asserted', assert({ trust_tier: 'policy_asserted', evidence_refs: [{ kind: 'receipt', id: 'r-1' }] })],
    ['observed is claimed with no evidence', assert({ evidence_refs: [] })],
    ['a user claims policy_asserted', assert({ trust_tier: 'policy_asserted' }, { principal_id: 'alice', principal_type: 'user' })],
  ])('given a forged tier escalation (%s), then KNOWLEDGE_TRUST_TIER_UNSUPPORTED and no event', (_note, command) => {
    spec.given([]).when(command).thenThrows('KNOWLEDGE_TRUST_TIER_UNSUPPORTED');
  });

  it('given the tiers that are supported, then verified cites a receipt, a user asserts user_asserted, the policy engine policy_asserted', () => {
    expect(spec.given([]).when(assert({ trust_tier: 'verified', evidence_refs: [{ kind: 'receipt', id: 'r-1' }] })).thenEvents()).toHaveLength(1);
    expect(spec.given([]).when(assert({ trust_tier: 'user_asserted', evidence_refs: [] }, { principal_id: 'alice', principal_type: 'user' })).thenEvents()).toHaveLength(1);
    expect(spec.given([]).when(assert({ trust_tier: 'policy_asserted', evidence_refs: [] }, { principal_id: 'writ-policy', principal_type: 'policy_engine' })).thenEvents()).toHaveLength(1);
  });

  it('given a verified belief forged into the log by an agent without a receipt, when folded, then it is not applied', () => {
    const forged = { type: 'belief.asserted', data: { belief: { ...draft({ trust_tier: 'verified' }), status: 'active', version: 1, created_at: at(0), asserted_by: 'agent-1' }, asserter_type: 'agent', at: at(0) } };
    const state = stateOf([forged]);
    expect(state.beliefs).toEqual([]);
    expect(state.anomalies.map((a) => a.reason)).toEqual(['unexpected']);
  });

  it('given a belief, when a new one supersedes it, then both stay: the old superseded (version 2) pointing at the new', () => {
    const events = run([assert(), assert({ belief_id: 'b-2', supersedes: 'b-1', confidence: 0.9 }, agent, 5)]);
    expect(events.map((e) => e.type)).toEqual(['belief.asserted', 'belief.asserted', 'belief.superseded']);
    const state = stateOf(events);
    expect(findBelief(state, 'b-1')).toMatchObject({ status: 'superseded', superseded_by: 'b-2', version: 2 });
    expect(findBelief(state, 'b-2')).toMatchObject({ status: 'active', supersedes: 'b-1' });
    spec.given(events).when(assert({ belief_id: 'b-3', supersedes: 'b-1' })).thenThrows('KNOWLEDGE_BELIEF_NOT_ACTIVE');
  });

  it('given two beliefs of the same scope, when marked contradicting, then both are contradicted and neither is deleted', () => {
    const events = run([
      assert(),
      assert({ belief_id: 'b-2', claim: 'the tests fail on main' }),
      { type: 'mark-contradiction', data: { belief_id: 'b-2', contradicts: 'b-1', marked_by: 'agent-1' }, metadata: meta(3) },
    ]);
    expect(events[2]).toMatchObject({ type: 'belief.contradiction_marked', data: { same_scope: true, needs_review: false } });
    const state = stateOf(events);
    expect(state.beliefs.map((b) => [b.belief_id, b.status, b.contradicts])).toEqual([
      ['b-1', 'contradicted', ['b-2']],
      ['b-2', 'contradicted', ['b-1']],
    ]);
    spec.given(events).when({ type: 'mark-contradiction', data: { belief_id: 'b-1', contradicts: 'b-2', marked_by: 'x' }, metadata: meta(4) }).thenThrows('KNOWLEDGE_CONTRADICTION_INVALID');
  });

  it('given contradicting beliefs of different scopes, then both stay active (scoped coexistence); a verified one needs review', () => {
    const events = run([
      assert({ trust_tier: 'verified', evidence_refs: [{ kind: 'receipt', id: 'r-1' }] }),
      assert({ belief_id: 'b-2', scope: 'repo:writ/branch:dev', claim: 'the tests fail', contradicts: ['b-1'] }),
    ]);
    expect(events[2]).toMatchObject({ type: 'belief.contradiction_marked', data: { same_scope: false, needs_review: true } });
    expect(stateOf(events).beliefs.map((b) => b.status)).toEqual(['active', 'active']);
  });

  it('given a belief, when revoked, then revoked (still held); when its confidence is updated, then a new version', () => {
    const revoked = run([assert(), { type: 'revoke-belief', data: { belief_id: 'b-1', revoked_by: 'alice', reason: 'the observation was of another branch' }, metadata: meta(2) }]);
    expect(stateOf(revoked).beliefs).toMatchObject([{ belief_id: 'b-1', status: 'revoked', version: 2 }]);
    const updated = run([assert(), { type: 'update-belief-confidence', data: { belief_id: 'b-1', confidence: 0.95, added_evidence: [{ kind: 'artifact', id: 'a-9' }], updated_by: 'agent-1' }, metadata: meta(2) }]);
    expect(stateOf(updated).beliefs).toMatchObject([{ confidence: 0.95, version: 2, evidence_refs: [{ id: 'obs-1' }, { id: 'a-9' }] }]);
    spec.given(revoked).when({ type: 'update-belief-confidence', data: { belief_id: 'b-1', confidence: 1, updated_by: 'x' }, metadata: meta(3) }).thenThrows('KNOWLEDGE_BELIEF_NOT_ACTIVE');
  });

  it('given a belief with expires_at, then it is inactive from that instant and expire-beliefs records belief.expired', () => {
    const events = run([assert({ expires_at: at(60) })]);
    const belief = findBelief(stateOf(events), 'b-1')!;
    expect(isBeliefActive(belief, Date.parse(at(59)))).toBe(true);
    expect(isBeliefActive(belief, Date.parse(at(60)))).toBe(false);
    spec.given(events).when({ type: 'expire-beliefs', data: {}, metadata: meta(30) }).then([]);
    spec.given(events).when({ type: 'expire-beliefs', data: {}, metadata: meta(60) }).then([{ type: 'belief.expired', data: { belief_id: 'b-1', at: at(60) } }]);
  });

  it('given a deletion attempt, then KNOWLEDGE_DELETION_FORBIDDEN; a forged belief.deleted event folds to an anomaly and the belief stays', () => {
    const events = run([assert()]);
    spec.given(events).when({ type: 'delete-belief', data: { belief_id: 'b-1' }, metadata: meta(1) } as unknown as BeliefCommand).thenThrows('KNOWLEDGE_DELETION_FORBIDDEN');
    const state = stateOf([...events, { type: 'belief.deleted', data: { belief_id: 'b-1', at: at(1) } }]);
    expect(state.beliefs).toHaveLength(1);
    expect(state.anomalies).toEqual([{ event_type: 'belief.deleted', status: 'holding', reason: 'malformed' }]);
  });

  it('given beliefs of task-1, when one of task-2 is asserted, then KNOWLEDGE_WRONG_TASK; a known id is KNOWLEDGE_BELIEF_EXISTS', () => {
    const events = run([assert()]);
    spec.given(events).when(assert({ belief_id: 'b-9', task_id: 'task-2' })).thenThrows('KNOWLEDGE_WRONG_TASK');
    spec.given(events).when(assert()).thenThrows('KNOWLEDGE_BELIEF_EXISTS');
  });

  it('given the log, when folded twice, then equal beliefs (rebuild equality)', () => {
    const events = run([assert(), assert({ belief_id: 'b-2', supersedes: 'b-1' }), assert({ belief_id: 'b-3', scope: 'repo:other', contradicts: ['b-2'] })]);
    expect(stateOf(events)).toEqual(stateOf(JSON.parse(JSON.stringify(events)) as unknown[]));
  });

  describe('a secret belief names its secret by reference (invariant 6, Hermit 17.3)', () => {
    const CANARY = 'CANARY-belief-a41c07';

    it.each([
      ['a value', { token: CANARY }],
      ['a string', CANARY],
      ['a reference beside the value', { secret_ref: 'vault:deploy/token', value: CANARY }],
    ])('given a belief marked secret whose structured_assertion is %s, when asserted, then KNOWLEDGE_SECRET_BY_VALUE and no event', (_note, structured_assertion) => {
      spec.given([]).when(assert({ structured_assertion, sensitivity: 'secret' })).thenThrows('KNOWLEDGE_SECRET_BY_VALUE');
    });

    it('given a belief marked secret with a secret_ref, or with no structured_assertion, when asserted, then it is recorded as given', () => {
      const byReference = { claim: 'the deploy token is in the vault', structured_assertion: { secret_ref: 'vault:deploy/token' }, sensitivity: 'secret' as const };
      const [event] = spec.given([]).when(assert(byReference)).thenEvents();
      expect(event).toMatchObject({ type: 'belief.asserted', data: { belief: byReference } });
      spec.given([]).when(assert({ claim: 'the deploy token expires on Friday', sensitivity: 'secret' })).thenEvents();
    });

    it('given a belief not marked secret, when its structured_assertion holds any value, then it is recorded (the rule is for secret beliefs)', () => {
      spec.given([]).when(assert({ structured_assertion: { port: 8080 }, sensitivity: 'internal' })).thenEvents();
    });

    it('given a secret belief with its value forged into the log, when folded, then it is not applied', () => {
      const [event] = run([assert({ structured_assertion: { secret_ref: 'vault:deploy/token' }, sensitivity: 'secret' })]) as [Extract<BeliefEvent, { type: 'belief.asserted' }>];
      const forged = { ...event, data: { ...event.data, belief: { ...event.data.belief, structured_assertion: { token: CANARY } } } };
      expect(stateOf([forged]).beliefs).toEqual([]);
      expect(stateOf([event]).beliefs).toHaveLength(1);
    });
  });
});
