import type { WorkingStateEntry } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { at, deciderSpec, meta } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { workingStateDecider, type WorkingStateCommand, type WorkingStateRecord } from './working-state.decider.js';
import type { WorkingStateEvent } from './working-state.events.js';

const spec = deciderSpec(workingStateDecider);
const limits = { max_entries: 4, max_entry_bytes: 256, max_total_bytes: 640 };
const opened: WorkingStateEvent = { type: 'working_state.opened', data: { task_id: 'task-1', limits, at: at(0) } };
const objective: WorkingStateEntry = { key: 'objective.main', kind: 'objective', value: 'fix the failing test' };
const plan: WorkingStateEntry = { key: 'plan.current', kind: 'plan_pointer', value: 'artifact:plan-1', refs: ['cache.logs'] };
const logs: WorkingStateEntry = { key: 'cache.logs', kind: 'cache', value: 'artifact:logs-1' };
const stale: WorkingStateEntry = { key: 'cache.stale', kind: 'cache', value: 'artifact:old-1' };

const revise = (data: Partial<Extract<WorkingStateCommand, { type: 'revise-working-state' }>['data']>, s = 10): WorkingStateCommand => ({
  type: 'revise-working-state',
  data: { task_id: 'task-1', request_id: 'req-1', revised_by: 'agent-1', expected_revision: 0, ...data },
  metadata: meta(s),
});
const revised = (set: WorkingStateEntry[], revision = 1, request_id = 'req-1'): WorkingStateEvent => ({
  type: 'working_state.revised',
  data: { revision, request_id, revised_by: 'agent-1', set, removed: [], at: at(10) },
});
const stateOf = (events: readonly unknown[]) => fold(workingStateDecider, events) as WorkingStateRecord;

describe('working state decider (Hermit 15.2, 6.3.2)', () => {
  it('given no working state, when opened without limits, then working_state.opened records the default limits as data', () => {
    const [event] = spec.given([]).when({ type: 'open-working-state', data: { task_id: 'task-1' }, metadata: meta(0) }).thenEvents();
    expect(event).toMatchObject({ type: 'working_state.opened', data: { task_id: 'task-1', limits: { max_entries: 64, max_entry_bytes: 4096, max_total_bytes: 65536 } } });
  });

  it('given an open working state, when revised at the current revision, then working_state.revised is revision 1 and the fold holds the entries by key', () => {
    spec.given([opened]).when(revise({ set: [plan, logs] })).then([revised([plan, logs])]);
    const state = stateOf([opened, revised([plan, logs])]);
    expect(state.revision).toBe(1);
    expect(state.entries.map((entry) => entry.key)).toEqual(['cache.logs', 'plan.current']);
  });

  it('given a revision already applied, when the same request is redelivered, then nothing; at a stale revision, then REVISION_CONFLICT', () => {
    spec.given([opened, revised([logs])]).when(revise({ set: [logs] })).then([]);
    spec.given([opened, revised([logs])]).when(revise({ request_id: 'req-2', set: [stale] })).thenThrows('KNOWLEDGE_WORKING_STATE_REVISION_CONFLICT');
  });

  it.each([
    ['more entries than max_entries', [1, 2, 3, 4, 5].map((n): WorkingStateEntry => ({ key: `cache.n${n}`, kind: 'cache', value: n }))],
    ['one entry over max_entry_bytes', [{ key: 'cache.big', kind: 'cache', value: 'x'.repeat(300) } as WorkingStateEntry]],
    ['entries together over max_total_bytes', [1, 2, 3].map((n): WorkingStateEntry => ({ key: `cache.n${n}`, kind: 'cache', value: 'y'.repeat(200) }))],
  ])('given the limits as data, when a revision holds %s, then KNOWLEDGE_WORKING_STATE_TOO_LARGE and no event', (_note, set) => {
    spec.given([opened]).when(revise({ set })).thenThrows('KNOWLEDGE_WORKING_STATE_TOO_LARGE');
  });

  it('given the same oversize revision forged into the log, when folded, then evolve does not apply it (the state cannot grow past its limits)', () => {
    const forged = revised([1, 2, 3, 4, 5].map((n): WorkingStateEntry => ({ key: `cache.n${n}`, kind: 'cache', value: n })));
    const state = stateOf([opened, forged]);
    expect(state.revision).toBe(0);
    expect(state.entries).toEqual([]);
    expect(state.anomalies).toEqual([{ event_type: 'working_state.revised', status: 'open', reason: 'unexpected' }]);
  });

  it('given an entry kind outside the schema (a transcript dump), when revised, then KERNEL_COMMAND_INVALID', () => {
    spec.given([opened]).when(revise({ set: [{ key: 'chat.log', kind: 'transcript', value: '...' } as unknown as WorkingStateEntry] })).thenThrows('KERNEL_COMMAND_INVALID');
  });

  it('given entries, when a revision would leave a dangling ref, sets a key twice, or removes an unknown key, then it is refused with its code', () => {
    spec.given([opened]).when(revise({ set: [plan] })).thenThrows('KNOWLEDGE_WORKING_STATE_DANGLING_REF');
    spec.given([opened]).when(revise({ set: [logs], remove: ['cache.logs'] })).thenThrows('KNOWLEDGE_WORKING_STATE_REVISION_INVALID');
    spec.given([opened]).when(revise({ remove: ['cache.none'] })).thenThrows('KNOWLEDGE_WORKING_STATE_ENTRY_UNKNOWN');
    spec.given([opened, revised([logs, plan])]).when(revise({ request_id: 'req-2', expected_revision: 1, remove: ['cache.logs'] })).thenThrows('KNOWLEDGE_WORKING_STATE_DANGLING_REF');
  });

  it('given another task or no working state, then KNOWLEDGE_WRONG_TASK / NOT_OPEN; opening twice is ALREADY_OPEN', () => {
    spec.given([opened]).when(revise({ task_id: 'task-2', set: [logs] })).thenThrows('KNOWLEDGE_WRONG_TASK');
    spec.given([]).when(revise({ set: [logs] })).thenThrows('KNOWLEDGE_WORKING_STATE_NOT_OPEN');
    spec.given([opened]).when({ type: 'open-working-state', data: { task_id: 'task-1' }, metadata: meta(1) }).thenThrows('KNOWLEDGE_WORKING_STATE_ALREADY_OPEN');
  });
});

describe('working state compaction keeps every referenced entry', () => {
  const full = [opened, revised([objective, plan, logs, stale])];
  const compact = (references: string[] = ['plan.current']): WorkingStateCommand => ({
    type: 'compact-working-state',
    data: { task_id: 'task-1', compaction_id: 'cmp-1', compacted_by: 'writ-orchestrator', expected_revision: 1, references },
    metadata: meta(20),
  });

  it('given an objective, a referenced plan, the cache it references and a stale cache, when compacted, then only the stale cache is removed', () => {
    spec.given(full).when(compact()).then([
      {
        type: 'working_state.compacted',
        data: { revision: 2, compaction_id: 'cmp-1', compacted_by: 'writ-orchestrator', references: ['plan.current'], kept: ['cache.logs', 'objective.main', 'plan.current'], removed: ['cache.stale'], at: at(20) },
      },
    ]);
  });

  it('given nothing unreferenced, when compacted, then nothing; given a reference to an unknown key, then ENTRY_UNKNOWN', () => {
    spec.given([opened, revised([objective])]).when(compact([])).then([]);
    spec.given(full).when(compact(['plan.gone'])).thenThrows('KNOWLEDGE_WORKING_STATE_ENTRY_UNKNOWN');
  });

  it('given a forged compaction that removes a referenced entry, when folded, then evolve refuses it and the entry stays', () => {
    const forged: WorkingStateEvent = {
      type: 'working_state.compacted',
      data: { revision: 2, compaction_id: 'cmp-x', compacted_by: 'agent-1', references: ['plan.current'], kept: ['objective.main', 'plan.current'], removed: ['cache.logs', 'cache.stale'], at: at(20) },
    };
    const state = stateOf([...full, forged]);
    expect(state.revision).toBe(1);
    expect(state.entries.map((entry) => entry.key)).toContain('cache.logs');
    expect(state.anomalies.map((a) => a.reason)).toEqual(['unexpected']);
  });

  it('given the log, when folded twice, then the same working state (rebuild equality)', () => {
    const events = [...full, ...workingStateDecider.decide(compact(), stateOf(full))];
    expect(stateOf(events)).toEqual(stateOf(JSON.parse(JSON.stringify(events)) as unknown[]));
    expect(stateOf(events).entries.map((entry) => entry.key)).toEqual(['cache.logs', 'objective.main', 'plan.current']);
  });
});

describe('working state: a secret is recorded by reference, never by value (invariant 6, Hermit 17.3)', () => {
  const CANARY = 'CANARY-ws-3f9e1d';
  const byReference: WorkingStateEntry = { key: 'handle.db', kind: 'resource_handle', value: { secret_ref: 'vault:db/password' }, sensitivity: 'secret' };

  it.each([
    ['a plain string that does not look like a secret', CANARY],
    ['an object holding the value', { token: CANARY }],
    ['a secret_ref beside the value', { secret_ref: 'vault:db/password', value: CANARY }],
    ['a secret_ref that is not a Ref (whitespace)', { secret_ref: `the password is ${CANARY}` }],
    ['null', null],
  ])('given an entry marked secret holding %s, when revised, then KNOWLEDGE_SECRET_BY_VALUE naming the key, no event, and the value is not in the refusal', (_note, value) => {
    const command = revise({ set: [objective, { key: 'handle.db', kind: 'resource_handle', value, sensitivity: 'secret' }] });
    spec.given([opened]).when(command).thenThrows('KNOWLEDGE_SECRET_BY_VALUE');
    let refusal: unknown;
    try {
      workingStateDecider.decide(command, stateOf([opened]));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ code: 'KNOWLEDGE_SECRET_BY_VALUE', details: { key: 'handle.db', field: 'value' } });
    expect((refusal as Error).message).toContain('handle.db');
    expect(JSON.stringify({ message: (refusal as Error).message, details: (refusal as { details?: unknown }).details })).not.toContain(CANARY);
  });

  it('given an entry marked secret holding exactly { secret_ref }, when revised, then working_state.revised records the reference', () => {
    spec.given([opened]).when(revise({ set: [byReference] })).then([revised([byReference])]);
    expect(stateOf([opened, revised([byReference])]).entries).toEqual([byReference]);
  });

  it.each([
    ['internal', 'internal' as const],
    ['public', 'public' as const],
    ['unmarked', undefined],
  ])('given an entry %s holding a plain value, when revised, then it is recorded unchanged (only secret entries are held to references)', (_note, sensitivity) => {
    const entry: WorkingStateEntry = { key: 'cache.note', kind: 'cache', value: CANARY, ...(sensitivity === undefined ? {} : { sensitivity }) };
    spec.given([opened]).when(revise({ set: [entry] })).then([revised([entry])]);
  });

  it('given a revision setting a secret by value forged into the log, when folded, then evolve does not apply it', () => {
    const forged = revised([objective, { key: 'handle.db', kind: 'resource_handle', value: CANARY, sensitivity: 'secret' }]);
    const state = stateOf([opened, forged]);
    expect(state.revision).toBe(0);
    expect(state.entries).toEqual([]);
    expect(state.anomalies).toEqual([{ event_type: 'working_state.revised', status: 'open', reason: 'unexpected' }]);
  });
});
