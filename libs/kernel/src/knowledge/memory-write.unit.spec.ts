import type { Belief, MemoryPromotionParams } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { at, codeOf } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { memoryDecider } from './memory.decider.js';
import { decideMemoryWrite, memoryWriteAuthority, type MemoryWriteInput, type TaskLogEvent } from './memory-write.js';

const belief: Omit<Belief, 'task_id' | 'status' | 'version' | 'created_at' | 'asserted_by'> = {
  belief_id: 'b-1',
  claim: 'the API listens on 8080',
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'receipt', id: 'rcpt-1' }],
  confidence: 0.9,
  trust_tier: 'observed',
};
const asserted: TaskLogEvent = {
  event_type: 'belief.asserted',
  entity_type: 'task',
  entity_id: 'task-1',
  payload: { belief: { ...belief, task_id: 'task-1', status: 'active', version: 1, created_at: at(1), asserted_by: 'agent-1' }, asserter_type: 'agent', at: at(1) },
};
const policy = (attempt: string, outcome: string, id = `pr-${attempt}`): TaskLogEvent => ({
  event_type: 'policy.evaluated',
  entity_type: 'attempt',
  entity_id: attempt,
  attempt_id: attempt,
  payload: { policy_result: { policy_result_id: id, outcome } },
});
const approvalRequested: TaskLogEvent = { event_type: 'approval.requested', entity_type: 'approval', entity_id: 'apv-1', attempt_id: 'att-1', payload: { approval_id: 'apv-1', attempt_id: 'att-1' } };
const approvalGranted: TaskLogEvent = { event_type: 'approval.granted', entity_type: 'approval', entity_id: 'apv-1', attempt_id: 'att-1', payload: { resolved_by: 'director-1' } };

const input = (events: readonly TaskLogEvent[] = [asserted, policy('att-1', 'allow')]): MemoryWriteInput => ({
  task_id: 'task-1',
  attempt_id: 'att-1',
  proposer: { principal_id: 'agent-1', principal_type: 'agent' },
  task_events: events,
});
const promotion = (over: Partial<MemoryPromotionParams> = {}): MemoryPromotionParams => ({
  op: 'promote',
  memory_id: 'mem-1',
  claim: belief.claim,
  scope: belief.scope,
  evidence_refs: belief.evidence_refs,
  trust_tier: 'observed',
  promotion_reason: 'every later task on this repository needs the port',
  source: { kind: 'belief', id: 'b-1' },
  invalidation_policy: { mode: 'manual' },
  retention_class: 'project',
  ...over,
});

describe('a granted memory_write decided from the task log (issue 17, Hermit 15.5, 6.3.1)', () => {
  it('given a complete promotion whose source belief the task holds and an allowing policy result, then memory.promoted cites that policy result, never one the request names', () => {
    const [event] = decideMemoryWrite(promotion(), input(), memoryDecider.initialState(), at(10));
    expect(event).toMatchObject({ type: 'memory.promoted', data: { record: { memory_id: 'mem-1', task_id: 'task-1', promoted_by: 'agent-1', policy_result_ref: 'policy_result:pr-att-1', status: 'active' } } });
    expect(event?.type === 'memory.promoted' && event.data.record.approval_ref).toBeUndefined();
  });

  it('given the attempt waited for an approval that was granted, then the record cites it', () => {
    const events = [asserted, policy('att-1', 'require_approval'), approvalRequested, approvalGranted];
    const [event] = decideMemoryWrite(promotion(), input(events), memoryDecider.initialState(), at(10));
    expect(event).toMatchObject({ type: 'memory.promoted', data: { record: { policy_result_ref: 'policy_result:pr-att-1', approval_ref: 'approval:apv-1' } } });
  });

  it('given only another attempt was allowed (or this one denied), then a complete promotion has no authority: KNOWLEDGE_PROMOTION_AUTHORITY_MISSING', () => {
    expect(codeOf(() => decideMemoryWrite(promotion(), input([asserted, policy('att-2', 'allow')]), memoryDecider.initialState(), at(10)))).toBe('KNOWLEDGE_PROMOTION_AUTHORITY_MISSING');
    expect(codeOf(() => decideMemoryWrite(promotion(), input([asserted, policy('att-1', 'deny')]), memoryDecider.initialState(), at(10)))).toBe('KNOWLEDGE_PROMOTION_AUTHORITY_MISSING');
    expect(memoryWriteAuthority([approvalGranted], 'att-1')).toEqual({});
  });

  it('given a promotion without evidence and trust metadata, then it degrades to a working state candidate (no record)', () => {
    const [event] = decideMemoryWrite({ op: 'promote', memory_id: 'mem-1', claim: 'the port is 8080' }, input(), memoryDecider.initialState(), at(10));
    expect(event).toMatchObject({ type: 'memory.promotion_degraded', data: { memory_id: 'mem-1', task_id: 'task-1', entry: { key: 'memory_candidate.mem_1', kind: 'uncertainty' } } });
    expect(event?.type === 'memory.promotion_degraded' && event.data.reasons).toEqual(expect.arrayContaining(['EVIDENCE_MISSING', 'TRUST_TIER_MISSING']));
  });

  it('given a trust tier above the source belief as the log folds it, then it is refused (the tier claimed in the request is not trusted)', () => {
    expect(codeOf(() => decideMemoryWrite(promotion({ trust_tier: 'verified' }), input(), memoryDecider.initialState(), at(10)))).toBe('KNOWLEDGE_TRUST_TIER_ESCALATION');
  });

  it('given the source belief is not in this task, then it is refused KNOWLEDGE_BELIEF_NOT_FOUND', () => {
    expect(codeOf(() => decideMemoryWrite(promotion({ source: { kind: 'belief', id: 'b-other' } }), input(), memoryDecider.initialState(), at(10)))).toBe('KNOWLEDGE_BELIEF_NOT_FOUND');
  });

  it('given a promoted record, then a second promotion of its id is refused, and an invalidation keeps it, marked invalidated by the proposer', () => {
    const state = fold(memoryDecider, decideMemoryWrite(promotion(), input(), memoryDecider.initialState(), at(10)));
    expect(codeOf(() => decideMemoryWrite(promotion(), input(), state, at(11)))).toBe('KNOWLEDGE_MEMORY_EXISTS');
    const invalidated = decideMemoryWrite({ op: 'invalidate', memory_id: 'mem-1', reason: 'the port moved' }, input(), state, at(12));
    expect(invalidated).toEqual([{ type: 'memory.invalidated', data: { memory_id: 'mem-1', invalidated_by: 'agent-1', reason: 'the port moved', at: at(12) } }]);
    const after = fold(memoryDecider, invalidated, state);
    expect(after.status === 'invalidated' && after.record).toMatchObject({ memory_id: 'mem-1', claim: belief.claim, status: 'invalidated', invalidation_reason: 'the port moved' });
  });

  it('given no record on the stream, then an invalidation is refused KNOWLEDGE_MEMORY_NOT_FOUND', () => {
    expect(codeOf(() => decideMemoryWrite({ op: 'invalidate', memory_id: 'mem-1', reason: 'x' }, input(), memoryDecider.initialState(), at(10)))).toBe('KNOWLEDGE_MEMORY_NOT_FOUND');
  });
});
