import { EventDraft, type BeliefAssertion, type WorkingStateEntry } from '@writ/contracts';
import { DEFAULT_WORKING_STATE_LIMITS, beliefDecider, memoryDecider, workingStateDecider, type BeliefCommand, type BeliefEvent, type MemoryEvent, type WorkingStateEvent } from '@writ/kernel';
import { at, type StoryEvent, type StoryIds } from './governed-path.fixture.js';

/**
 * A task's working state and beliefs as the orchestrator appends them: each
 * event decided by the kernel's own deciders from the state the earlier ones
 * fold to, so the projection is fed exactly what the log will hold.
 */

function knowledgeEvent(ids: StoryIds, event: WorkingStateEvent | BeliefEvent, key: string, seconds: number): StoryEvent {
  const draft = EventDraft.parse({
    event_id: `${ids.task}-${key}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 128),
    schema_version: 1,
    event_type: event.type,
    entity_type: 'task',
    entity_id: ids.task,
    occurred_at: at(seconds),
    actor_type: 'service',
    actor_id: 'writ-orchestrator',
    payload: event.data,
    causation_id: null,
    correlation_id: ids.task,
    idempotency_key: key,
  });
  return { aggregate: 'task', aggregateId: ids.task, draft };
}

/** Opened, then one revision per `revisions` item (each a set of entries and keys to remove), then a compaction when `compact`. */
export function workingStateStory(ids: StoryIds, revisions: readonly { set?: WorkingStateEntry[]; remove?: string[] }[], options: { compact?: boolean; seconds?: number } = {}): StoryEvent[] {
  let seconds = options.seconds ?? 100;
  let state = workingStateDecider.initialState();
  const out: StoryEvent[] = [];
  const push = (events: WorkingStateEvent[], key: string) => {
    for (const event of events) {
      state = workingStateDecider.evolve(state, event);
      out.push(knowledgeEvent(ids, event, `${key}:${event.type}`, seconds++));
    }
  };
  push(workingStateDecider.decide({ type: 'open-working-state', data: { task_id: ids.task, limits: DEFAULT_WORKING_STATE_LIMITS }, metadata: { now: at(seconds) } }, state), 'ws:opened');
  revisions.forEach((revision, n) => {
    const expected = state.status === 'open' ? state.revision : 0;
    const data = { task_id: ids.task, request_id: `req-${n + 1}`, revised_by: ids.principal, expected_revision: expected, set: revision.set ?? [], remove: revision.remove ?? [] };
    push(workingStateDecider.decide({ type: 'revise-working-state', data, metadata: { now: at(seconds) } }, state), `ws:req-${n + 1}`);
  });
  if (options.compact === true && state.status === 'open') {
    const data = { task_id: ids.task, compaction_id: 'cmp-1', compacted_by: 'writ-orchestrator', expected_revision: state.revision };
    push(workingStateDecider.decide({ type: 'compact-working-state', data, metadata: { now: at(seconds) } }, state), 'ws:cmp-1');
  }
  return out;
}

export type BeliefStep =
  | { readonly op: 'assert'; readonly belief: BeliefAssertion; readonly by?: { readonly id: string; readonly type: 'agent' | 'user' } }
  | { readonly op: 'revoke'; readonly belief_id: string; readonly reason: string };

/** One belief request per step, decided in order. */
export function beliefStory(ids: StoryIds, steps: readonly BeliefStep[], seconds = 200): StoryEvent[] {
  let state = beliefDecider.initialState();
  const out: StoryEvent[] = [];
  steps.forEach((step, n) => {
    const now = at(seconds + n);
    const command: BeliefCommand =
      step.op === 'assert'
        ? {
            type: 'assert-belief',
            data: { belief: { ...step.belief, task_id: ids.task }, asserted_by: { principal_id: step.by?.id ?? ids.principal, principal_type: step.by?.type ?? 'agent' } },
            metadata: { now },
          }
        : { type: 'revoke-belief', data: { belief_id: step.belief_id, revoked_by: ids.principal, reason: step.reason }, metadata: { now } };
    beliefDecider.decide(command, state).forEach((event, i) => {
      state = beliefDecider.evolve(state, event);
      out.push(knowledgeEvent(ids, event, `belief:req-${n + 1}:${i}`, seconds + n));
    });
  });
  return out;
}

export const observedBelief = (beliefId: string, claim: string, extra: Partial<BeliefAssertion> = {}): BeliefAssertion => ({
  belief_id: beliefId,
  claim,
  scope: 'repo:writ',
  evidence_refs: [{ kind: 'artifact', id: 'art-1' }],
  confidence: 0.6,
  trust_tier: 'observed',
  ...extra,
});

/**
 * A memory record's stream as the executor appends it (issue 17): promoted by
 * the story's attempt under its policy result (decided by the kernel's memory
 * decider), then, when `invalidate` names an attempt, invalidated by it. The
 * promotion's receipt is the story's own `receipt.issued` with class
 * `memory_promotion` (see `memoryReceipt`).
 */
export function memoryStory(ids: StoryIds, memoryId: string, options: { invalidateBy?: string; seconds?: number; trustTier?: 'observed' | 'verified' } = {}): StoryEvent[] {
  let seconds = options.seconds ?? 300;
  let state = memoryDecider.initialState();
  const out: StoryEvent[] = [];
  const push = (events: MemoryEvent[], attemptId: string, key: string) => {
    for (const event of events) {
      state = memoryDecider.evolve(state, event);
      const draft = EventDraft.parse({
        event_id: `${memoryId}-${key}`.slice(0, 128),
        schema_version: 1,
        event_type: event.type,
        entity_type: 'memory',
        entity_id: memoryId,
        step_id: ids.step,
        attempt_id: attemptId,
        occurred_at: at(seconds++),
        actor_type: 'service',
        actor_id: 'writ-executor',
        payload: event.data,
        causation_id: null,
        correlation_id: ids.task,
        idempotency_key: key,
      });
      out.push({ aggregate: 'memory', aggregateId: memoryId, draft });
    }
  };
  const request = {
    memory_id: memoryId,
    task_id: ids.task,
    claim: 'the API listens on 8080',
    scope: 'repo:writ',
    evidence_refs: [{ kind: 'receipt' as const, id: ids.receipt }],
    trust_tier: options.trustTier ?? 'observed',
    promotion_reason: 'every later task on this repository needs the port',
    source: { kind: 'artifact' as const, id: 'art-1' },
    invalidation_policy: { mode: 'manual' as const },
    retention_class: 'project',
  };
  const facts = { promoted_by: { principal_id: ids.principal, principal_type: 'agent' as const }, policy_result_ref: `policy_result:${ids.policyResult}` };
  push(memoryDecider.decide({ type: 'promote-memory', data: { request, facts }, metadata: { now: at(seconds) } }, state), ids.attempt, 'promoted');
  if (options.invalidateBy !== undefined) {
    push(memoryDecider.decide({ type: 'invalidate-memory', data: { invalidated_by: ids.principal, reason: 'the port moved' }, metadata: { now: at(seconds) } }, state), options.invalidateBy, 'invalidated');
  }
  return out;
}

/** A receipt of class `memory_promotion` for `attemptId` (the story's receipt, re-classed). */
export function memoryReceipt(receipt: StoryEvent, attemptId: string, receiptId: string): StoryEvent {
  const payload = receipt.draft.payload as { receipt: Record<string, unknown>; jws: string };
  return {
    ...receipt,
    draft: { ...receipt.draft, event_id: `${receipt.draft.event_id}-${receiptId}`.slice(0, 128), idempotency_key: `memrcpt:${receiptId}`, entity_id: receiptId, payload: { ...payload, receipt: { ...payload.receipt, receipt_id: receiptId, attempt_id: attemptId, receipt_class: 'memory_promotion' } } },
  };
}
