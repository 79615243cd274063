import type { WorkingStateEntry } from '@writ/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { at } from '../../test/decider-spec.js';
import { evolveIsTotal, modelCheck } from '../../test/model.js';
import { beliefDecider, type BeliefCommand, type BeliefSetState } from './belief.decider.js';
import { ingressBindingDecider } from './ingress-binding.decider.js';
import { memoryDecider } from './memory.decider.js';
import { workingStateDecider, type WorkingStateCommand, type WorkingStateRecord, type WorkingStateState } from './working-state.decider.js';

const limits = { max_entries: 6, max_entry_bytes: 200, max_total_bytes: 600 };
const key = fc.constantFrom('objective.a', 'plan.b', 'cache.c', 'cache.d', 'question.e', 'cache.f', 'cache.g', 'cache.h');
const entry: fc.Arbitrary<WorkingStateEntry> = fc.record({
  key,
  kind: fc.constantFrom('objective', 'plan_pointer', 'cache', 'pending_question', 'resource_handle'),
  value: fc.string({ maxLength: 180 }),
  refs: fc.array(key, { maxLength: 2 }).map((refs) => [...new Set(refs)]),
  pinned: fc.boolean(),
}) as fc.Arbitrary<WorkingStateEntry>;

const revisionOf = (state: WorkingStateState) => (state.status === 'open' ? state.revision : -1);
const wsCommand: fc.Arbitrary<(state: WorkingStateState, n: number) => WorkingStateCommand> = fc.oneof(
  fc.record({ set: fc.array(entry, { maxLength: 3 }), remove: fc.array(key, { maxLength: 2 }) }).map(({ set, remove }) => (state: WorkingStateState, n: number) => ({
    type: 'revise-working-state' as const,
    data: { task_id: 'task-1', request_id: `req-${n}`, revised_by: 'agent-1', expected_revision: revisionOf(state), set, remove },
    metadata: { now: at(n) },
  })),
  fc.array(key, { maxLength: 2 }).map((references) => (state: WorkingStateState, n: number) => ({
    type: 'compact-working-state' as const,
    data: { task_id: 'task-1', compaction_id: `cmp-${n}`, compacted_by: 'writ-orchestrator', expected_revision: revisionOf(state), references },
    metadata: { now: at(n) },
  })),
);

describe('knowledge deciders: model tests', () => {
  it('given random revisions and compactions, then the working state never passes its limits, never dangles a ref, and every compaction keeps what is referenced', () => {
    // The command depends on the state (expected revision), so the sequence is built as the model runs.
    fc.assert(
      fc.property(fc.array(wsCommand, { maxLength: 25 }), (makers) => {
        let state = workingStateDecider.evolve(workingStateDecider.initialState(), { type: 'working_state.opened', data: { task_id: 'task-1', limits, at: at(0) } });
        makers.forEach((make, n) => {
          let events: unknown[] = [];
          try {
            events = workingStateDecider.decide(make(state, n + 1), state);
          } catch (error) {
            expect((error as { code?: string }).code).toMatch(/^(KNOWLEDGE_WORKING_STATE_|KERNEL_COMMAND_INVALID)/);
          }
          const after = events.reduce<WorkingStateState>((s, e) => workingStateDecider.evolve(s, e), state) as WorkingStateRecord;
          expect(after.anomalies).toEqual([]);
          expect(after.entries.length).toBeLessThanOrEqual(limits.max_entries);
          expect(after.total_bytes).toBeLessThanOrEqual(limits.max_total_bytes);
          const keys = new Set(after.entries.map((e) => e.key));
          for (const kept of after.entries) for (const ref of kept.refs ?? []) expect(keys.has(ref)).toBe(true);
          state = after;
        });
      }),
      { numRuns: 150 },
    );
  });

  it('given random belief commands, then no belief ever disappears and versions only grow', () => {
    const id = fc.constantFrom('b-1', 'b-2', 'b-3');
    const command: fc.Arbitrary<BeliefCommand> = fc.oneof(
      fc.record({ id, supersedes: fc.option(id, { nil: undefined }), tier: fc.constantFrom('untrusted', 'observed', 'verified') as fc.Arbitrary<'untrusted' | 'observed' | 'verified'>, scope: fc.constantFrom('repo:a', 'repo:b') }).map(
        ({ id: belief_id, supersedes, tier, scope }): BeliefCommand => ({
          type: 'assert-belief',
          data: {
            belief: { belief_id, task_id: 'task-1', claim: 'c', scope, evidence_refs: [{ kind: 'observation', id: 'o-1' }], confidence: 0.5, trust_tier: tier, ...(supersedes === undefined ? {} : { supersedes }) },
            asserted_by: { principal_id: 'agent-1', principal_type: 'agent' },
          },
          metadata: { now: at(1) },
        }),
      ),
      fc.tuple(id, id).map(([a, b]): BeliefCommand => ({ type: 'mark-contradiction', data: { belief_id: a, contradicts: b, marked_by: 'agent-1' }, metadata: { now: at(2) } })),
      id.map((belief_id): BeliefCommand => ({ type: 'revoke-belief', data: { belief_id, revoked_by: 'alice', reason: 'wrong' }, metadata: { now: at(3) } })),
    );
    const CODES = ['KNOWLEDGE_BELIEF_EXISTS', 'KNOWLEDGE_BELIEF_NOT_FOUND', 'KNOWLEDGE_BELIEF_NOT_ACTIVE', 'KNOWLEDGE_CONTRADICTION_INVALID', 'KNOWLEDGE_TRUST_TIER_UNSUPPORTED'];
    modelCheck(beliefDecider, fc.array(command, { maxLength: 12 }), CODES, ({ before, after }) => {
      const prior = (before as BeliefSetState).beliefs;
      const next = (after as BeliefSetState).beliefs;
      expect(next.length).toBeGreaterThanOrEqual(prior.length);
      for (const belief of prior) expect(next.find((b) => b.belief_id === belief.belief_id)!.version).toBeGreaterThanOrEqual(belief.version);
    }, 150);
  });

  it.each([
    ['working state', workingStateDecider],
    ['beliefs', beliefDecider],
    ['memory', memoryDecider],
    ['ingress binding', ingressBindingDecider],
  ] as const)('given any value, then the %s evolve is total (never throws, keeps the status)', (_name, decider) => {
    evolveIsTotal(decider as never, fc.constant([]));
  });
});
