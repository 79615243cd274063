import type { Belief } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { at, deciderSpec, meta } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { judgeMemoryPromotion, type MemoryPromotionFacts, type MemoryPromotionRequest } from './memory-promotion.js';
import { memoryDecider, type MemoryCommand, type MemoryState } from './memory.decider.js';
import type { MemoryEvent } from './memory.events.js';

const spec = deciderSpec(memoryDecider);
const belief: Belief = {
  belief_id: 'b-1',
  task_id: 'task-1',
  claim: 'the API listens on 8080',
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'observation', id: 'obs-1' }],
  confidence: 0.8,
  trust_tier: 'observed',
  status: 'active',
  created_at: at(0),
  asserted_by: 'agent-1',
  version: 1,
};
const request = (over: Partial<MemoryPromotionRequest> = {}): MemoryPromotionRequest => ({
  memory_id: 'mem-1',
  task_id: 'task-1',
  claim: belief.claim,
  scope: belief.scope,
  evidence_refs: belief.evidence_refs,
  trust_tier: 'observed',
  promotion_reason: 'every later task on this repository needs the port',
  source: { kind: 'belief', id: 'b-1' },
  invalidation_policy: { mode: 'on_evidence_revoked' },
  retention_class: 'project',
  ...over,
});
const facts: MemoryPromotionFacts = { promoted_by: { principal_id: 'agent-1', principal_type: 'agent' }, source_belief: belief, policy_result_ref: 'policy_result:pr-1' };
const promote = (req: MemoryPromotionRequest = request(), f: MemoryPromotionFacts = facts, s = 10): MemoryCommand => ({ type: 'promote-memory', data: { request: req, facts: f }, metadata: meta(s) });
const promoted = (): MemoryEvent[] => memoryDecider.decide(promote(), memoryDecider.initialState());
const stateOf = (events: readonly unknown[]) => fold(memoryDecider, events);

describe('memory decider (Hermit 8.7, 15.5, 6.3.1)', () => {
  it('given a supported promotion with a policy allow, then memory.promoted carries claim, scope, evidence, tier, reason, source, invalidation policy and retention class', () => {
    const [event] = spec.given([]).when(promote()).thenEvents();
    expect(event).toEqual({
      type: 'memory.promoted',
      data: {
        record: { ...request(), evidence_refs: [...belief.evidence_refs], status: 'active', created_at: at(10), promoted_by: 'agent-1', policy_result_ref: 'policy_result:pr-1' },
        at: at(10),
      },
    });
  });

  it('given a promotion without evidence, then the decision is degrade_to_working_state, and the decider records memory.promotion_degraded with the entry to write', () => {
    const judgment = judgeMemoryPromotion(request({ evidence_refs: [] }), facts, at(10), Date.parse(at(10)));
    expect(judgment).toMatchObject({ outcome: 'degrade_to_working_state', reasons: ['EVIDENCE_MISSING'], entry: { key: 'memory_candidate.mem_1', kind: 'uncertainty' } });
    const [event] = spec.given([]).when(promote(request({ evidence_refs: [] }))).thenEvents();
    expect(event).toMatchObject({ type: 'memory.promotion_degraded', data: { memory_id: 'mem-1', reasons: ['EVIDENCE_MISSING'], entry: { key: 'memory_candidate.mem_1' } } });
    expect(stateOf([event]).status).toBe('degraded');
  });

  it('given a request missing every 15.5 requirement, then every reason is listed (a degraded write still needs no policy allow)', () => {
    const bare: MemoryPromotionRequest = { memory_id: 'mem-1', task_id: 'task-1' };
    const judgment = judgeMemoryPromotion(bare, { promoted_by: facts.promoted_by }, at(10), Date.parse(at(10)));
    expect(judgment.outcome === 'degrade_to_working_state' && judgment.reasons).toEqual([
      'CLAIM_MISSING', 'SCOPE_MISSING', 'EVIDENCE_MISSING', 'TRUST_TIER_MISSING', 'PROMOTION_REASON_MISSING', 'SOURCE_MISSING', 'INVALIDATION_POLICY_MISSING', 'RETENTION_CLASS_MISSING',
    ]);
  });

  it('given an untrusted claim with evidence, then it is not promotable by the gate table: degraded TRUST_TIER_NOT_PROMOTABLE', () => {
    const untrusted = { ...belief, trust_tier: 'untrusted' as const };
    const judgment = judgeMemoryPromotion(request({ trust_tier: 'untrusted' }), { ...facts, source_belief: untrusted }, at(10), Date.parse(at(10)));
    expect(judgment).toMatchObject({ outcome: 'degrade_to_working_state', reasons: ['TRUST_TIER_NOT_PROMOTABLE'] });
  });

  it.each([
    ['a tier above the source belief (observed → verified)', promote(request({ trust_tier: 'verified' })), 'KNOWLEDGE_TRUST_TIER_ESCALATION'],
    ['a revoked source belief', promote(request(), { ...facts, source_belief: { ...belief, status: 'revoked' } }), 'KNOWLEDGE_BELIEF_NOT_ACTIVE'],
    ['an expired source belief', promote(request(), { ...facts, source_belief: { ...belief, expires_at: at(5) } }), 'KNOWLEDGE_BELIEF_NOT_ACTIVE'],
    ['no source belief supplied', promote(request(), { promoted_by: facts.promoted_by, policy_result_ref: 'p' }), 'KNOWLEDGE_BELIEF_NOT_FOUND'],
    ['verified from an artifact without a receipt', promote(request({ trust_tier: 'verified', source: { kind: 'artifact', id: 'a-1' } })), 'KNOWLEDGE_TRUST_TIER_UNSUPPORTED'],
    ['a supported promotion without a policy allow', promote(request(), { promoted_by: facts.promoted_by, source_belief: belief }), 'KNOWLEDGE_PROMOTION_AUTHORITY_MISSING'],
  ])('given %s, then it is refused and nothing is written', (_note, command, code) => {
    spec.given([]).when(command).thenThrows(code);
  });

  it('given a memory.promoted forged without evidence or for an untrusted claim, when folded, then no record exists', () => {
    const [event] = promoted() as [Extract<MemoryEvent, { type: 'memory.promoted' }>];
    const noEvidence = { ...event, data: { ...event.data, record: { ...event.data.record, evidence_refs: [] } } };
    const untrusted = { ...event, data: { ...event.data, record: { ...event.data.record, trust_tier: 'untrusted' } } };
    expect(stateOf([noEvidence])).toEqual({ status: 'initial', anomalies: [{ event_type: 'memory.promoted', status: 'initial', reason: 'malformed' }] });
    expect(stateOf([untrusted])).toEqual({ status: 'initial', anomalies: [{ event_type: 'memory.promoted', status: 'initial', reason: 'unexpected' }] });
  });

  it('given a promoted record, when invalidated, then it is invalidated and still readable; it cannot be invalidated again or deleted', () => {
    const events = [...promoted(), ...memoryDecider.decide({ type: 'invalidate-memory', data: { invalidated_by: 'alice', reason: 'the port moved to 9090', superseded_by: 'mem-2' }, metadata: meta(20) }, stateOf(promoted()))];
    const state = stateOf(events) as MemoryState;
    expect(state.status).toBe('invalidated');
    expect(state.record).toMatchObject({ claim: belief.claim, status: 'invalidated', invalidated_at: at(20), invalidation_reason: 'the port moved to 9090' });
    spec.given(events).when({ type: 'invalidate-memory', data: { invalidated_by: 'x', reason: 'y' }, metadata: meta(21) }).thenThrows('KNOWLEDGE_MEMORY_NOT_ACTIVE');
    spec.given(promoted()).when({ type: 'delete-memory', data: {}, metadata: meta(21) } as unknown as MemoryCommand).thenThrows('KNOWLEDGE_DELETION_FORBIDDEN');
    const afterForgedDelete = stateOf([...promoted(), { type: 'memory.deleted', data: { memory_id: 'mem-1', at: at(22) } }]) as MemoryState;
    expect(afterForgedDelete.record.claim).toBe(belief.claim);
    expect(afterForgedDelete.anomalies.map((a) => a.reason)).toEqual(['malformed']);
  });

  it('given an at_expiry policy, then expire-memory records memory.expired only once the instant passed; revoke needs an active record', () => {
    const events = memoryDecider.decide(promote(request({ invalidation_policy: { mode: 'at_expiry', expires_at: at(100) } })), memoryDecider.initialState());
    spec.given(events).when({ type: 'expire-memory', data: {}, metadata: meta(99) }).then([]);
    spec.given(events).when({ type: 'expire-memory', data: {}, metadata: meta(100) }).then([{ type: 'memory.expired', data: { memory_id: 'mem-1', at: at(100) } }]);
    spec.given([]).when({ type: 'revoke-memory', data: { revoked_by: 'a', reason: 'b' }, metadata: meta(1) }).thenThrows('KNOWLEDGE_MEMORY_NOT_FOUND');
    spec.given(promoted()).when(promote()).thenThrows('KNOWLEDGE_MEMORY_EXISTS');
  });

  it('given a degraded promotion, when a supported one of the same id follows, then the record exists; folding twice gives equal states', () => {
    const degraded = memoryDecider.decide(promote(request({ evidence_refs: [] })), memoryDecider.initialState());
    const events = [...degraded, ...memoryDecider.decide(promote(request(), facts, 30), stateOf(degraded))];
    expect(stateOf(events).status).toBe('active');
    expect(stateOf(events)).toEqual(stateOf(JSON.parse(JSON.stringify(events)) as unknown[]));
  });

  describe('a secret memory names its secret by reference (invariant 6, Hermit 17.3)', () => {
    const CANARY = 'CANARY-memory-92b1e0';
    const secretRef = { secret_ref: 'vault:api/key' };

    it('given a promotion marked secret whose structured_assertion is a value, then KNOWLEDGE_SECRET_BY_VALUE and nothing is written', () => {
      spec.given([]).when(promote(request({ structured_assertion: { key: CANARY }, sensitivity: 'secret' }))).thenThrows('KNOWLEDGE_SECRET_BY_VALUE');
    });

    it('given a supported promotion marked secret with a secret_ref, then memory.promoted records the reference', () => {
      const [event] = spec.given([]).when(promote(request({ structured_assertion: secretRef, sensitivity: 'secret' }))).thenEvents();
      expect(event).toMatchObject({ type: 'memory.promoted', data: { record: { structured_assertion: secretRef, sensitivity: 'secret' } } });
      expect(stateOf([event]).status).toBe('active');
    });

    it('given an unsupported promotion marked secret, then its working state candidate holds the secret_ref as its value; without one it is KNOWLEDGE_SECRET_BY_VALUE', () => {
      const [event] = spec.given([]).when(promote(request({ evidence_refs: [], structured_assertion: secretRef, sensitivity: 'secret' }))).thenEvents();
      expect(event).toMatchObject({ type: 'memory.promotion_degraded', data: { entry: { key: 'memory_candidate.mem_1', value: secretRef, sensitivity: 'secret' } } });
      spec.given([]).when(promote(request({ evidence_refs: [], sensitivity: 'secret' }))).thenThrows('KNOWLEDGE_SECRET_BY_VALUE');
    });

    it('given a secret record or candidate with its value forged into the log, when folded, then it is not applied', () => {
      const [event] = memoryDecider.decide(promote(request({ structured_assertion: secretRef, sensitivity: 'secret' })), memoryDecider.initialState()) as [Extract<MemoryEvent, { type: 'memory.promoted' }>];
      const forged = { ...event, data: { ...event.data, record: { ...event.data.record, structured_assertion: { key: CANARY } } } };
      expect(stateOf([forged]).status).toBe('initial');
      const degraded: MemoryEvent = {
        type: 'memory.promotion_degraded',
        data: { memory_id: 'mem-1', task_id: 'task-1', reasons: ['EVIDENCE_MISSING'], entry: { key: 'memory_candidate.mem_1', kind: 'uncertainty', value: { claim: CANARY }, sensitivity: 'secret' }, at: at(10) },
      };
      expect(stateOf([degraded]).status).toBe('initial');
    });
  });
});
