import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APPROVAL_TERMINAL_STATES,
  ATTEMPT_TERMINAL_STATES,
  ApprovalStatus,
  AttemptStatus,
  STEP_TERMINAL_STATES,
  StepStatus,
  TASK_TERMINAL_STATES,
  TASK_TRANSITIONS,
  TaskStatus,
  isTaskTransitionAllowed,
} from './index.js';

/** Hermit 12.1 "Allowed transitions", spelled out edge by edge. */
const SPEC_TASK_EDGES = [
  ['created', 'ready'],
  ['ready', 'running'],
  ['running', 'blocked'],
  ['blocked', 'running'],
  ['running', 'paused'],
  ['paused', 'ready'],
  ['running', 'completed'],
  ['running', 'failed'],
  ['ready', 'cancelled'],
  ['running', 'cancelled'],
  ['blocked', 'cancelled'],
  ['paused', 'cancelled'],
  ['completed', 'rolled_back'],
  ['failed', 'rolled_back'],
] as const;

const edgesOf = (table: typeof TASK_TRANSITIONS) =>
  Object.entries(table)
    .flatMap(([from, tos]) => tos.map((to) => `${from}->${to}`))
    .sort();

describe('state enums (Hermit 12.1-12.3, 8.9)', () => {
  it('given the spec, then the state lists are exactly its lists, in its order', () => {
    expect(TaskStatus.options).toEqual(['created', 'ready', 'running', 'blocked', 'paused', 'completed', 'failed', 'cancelled', 'rolled_back']);
    expect(StepStatus.options).toEqual(['planned', 'ready', 'running', 'blocked', 'succeeded', 'failed', 'cancelled', 'superseded']);
    expect(AttemptStatus.options).toEqual([
      'created', 'leased', 'compiling_context', 'reasoning', 'awaiting_policy', 'awaiting_approval', 'authorized',
      'executing', 'observing', 'receipt_pending', 'succeeded', 'failed', 'cancelled', 'superseded',
    ]);
    expect(ApprovalStatus.options).toEqual(['pending', 'granted', 'denied', 'expired', 'cancelled', 'invalidated']);
  });

  it('given the terminal lists, then each names states of its own machine', () => {
    for (const s of TASK_TERMINAL_STATES) expect(TaskStatus.options).toContain(s);
    for (const s of STEP_TERMINAL_STATES) expect(StepStatus.options).toContain(s);
    for (const s of ATTEMPT_TERMINAL_STATES) expect(AttemptStatus.options).toContain(s);
    for (const s of APPROVAL_TERMINAL_STATES) expect(ApprovalStatus.options).toContain(s);
    expect(APPROVAL_TERMINAL_STATES).not.toContain('pending');
  });
});

describe('TASK_TRANSITIONS', () => {
  it('given the table, then its edges are exactly the edges of Hermit 12.1', () => {
    expect(edgesOf(TASK_TRANSITIONS)).toEqual(SPEC_TASK_EDGES.map(([from, to]) => `${from}->${to}`).sort());
  });

  it('given the table, then it has a row for every task state', () => {
    expect(Object.keys(TASK_TRANSITIONS).sort()).toEqual([...TaskStatus.options].sort());
  });

  it('given the table, then it cannot be mutated', () => {
    expect(Object.isFrozen(TASK_TRANSITIONS)).toBe(true);
    for (const row of Object.values(TASK_TRANSITIONS)) expect(Object.isFrozen(row)).toBe(true);
  });

  it('given a terminal state, then the only way out is the rollback edge', () => {
    for (const state of TASK_TERMINAL_STATES) {
      for (const next of TASK_TRANSITIONS[state]) expect(next).toBe('rolled_back');
    }
    expect(TASK_TRANSITIONS.rolled_back).toEqual([]);
    expect(TASK_TRANSITIONS.cancelled).toEqual([]);
  });

  it('given any pair of states, then isTaskTransitionAllowed agrees with the spec edges', () => {
    const allowed = new Set(SPEC_TASK_EDGES.map(([from, to]) => `${from}->${to}`));
    fc.assert(
      fc.property(fc.constantFrom(...TaskStatus.options), fc.constantFrom(...TaskStatus.options), (from, to) => {
        expect(isTaskTransitionAllowed(from, to)).toBe(allowed.has(`${from}->${to}`));
      }),
    );
  });

  it('given any walk along allowed transitions from created, then once terminal it never leaves the terminal set', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (choices) => {
        let state: TaskStatus = 'created';
        let terminal = false;
        for (const choice of choices) {
          const next = TASK_TRANSITIONS[state];
          if (next.length === 0) break;
          state = next[choice % next.length] as TaskStatus;
          if (terminal) expect(TASK_TERMINAL_STATES).toContain(state);
          terminal ||= TASK_TERMINAL_STATES.includes(state);
        }
      }),
    );
  });
});
