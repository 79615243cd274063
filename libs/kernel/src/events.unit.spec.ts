import { EventType, authorsOf } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { ApprovalEvent, ATTEMPT_TRANSITIONS, AttemptEvent, BeliefEvent, ContextPackEvent, GrantEvent, IngressBindingEvent, MemoryEvent, StepEvent, TaskEvent, WorkingStateEvent } from './index.js';

const typesOf = (union: { options: readonly { shape: { type: { value: string } } }[] }) => union.options.map((option) => option.shape.type.value);

const CONTEXTS = [
  ['task', typesOf(TaskEvent as never)],
  ['step', typesOf(StepEvent as never)],
  ['attempt', typesOf(AttemptEvent as never)],
  ['approval', typesOf(ApprovalEvent as never)],
  ['grant', typesOf(GrantEvent as never)],
] as const;

describe('event types', () => {
  it.each(CONTEXTS)('given the %s events, then each type is a dotted envelope event_type of its context', (context, types) => {
    expect(types.length).toBeGreaterThan(2);
    for (const type of types) {
      expect(EventType.safeParse(type).success, type).toBe(true);
      expect(type.startsWith(`${context}.`), type).toBe(true);
    }
  });

  it('given every event type the kernel decides, then the authorship table names who appends it on a task (none is left to deny-by-default)', () => {
    // A type missing from EVENT_AUTHORSHIP would make its own writer's store refuse to append it under WRIT_AUTHORSHIP=enforce.
    for (const [, types] of CONTEXTS) for (const type of types) expect(authorsOf('task', type), type).not.toEqual([]);
  });

  it('given every context, then no event type is declared twice', () => {
    const all = CONTEXTS.flatMap(([, types]) => types);
    expect(new Set(all).size).toBe(all.length);
  });

  it('given the attempt transition table, then it has the shape of Hermit 12.3 with no way back once executing', () => {
    expect(ATTEMPT_TRANSITIONS.executing).toEqual(['observing']);
    expect(ATTEMPT_TRANSITIONS.observing).toEqual(['receipt_pending']);
    expect([...ATTEMPT_TRANSITIONS.receipt_pending].sort()).toEqual(['failed', 'succeeded']);
    for (const terminal of ['succeeded', 'failed', 'cancelled', 'superseded'] as const) expect(ATTEMPT_TRANSITIONS[terminal]).toEqual([]);
    expect(ATTEMPT_TRANSITIONS.awaiting_policy).toEqual(expect.arrayContaining(['awaiting_approval', 'authorized', 'failed']));
    expect(ATTEMPT_TRANSITIONS.awaiting_approval).toEqual(expect.arrayContaining(['authorized', 'awaiting_policy', 'superseded']));
    expect(ATTEMPT_TRANSITIONS.authorized).toEqual(expect.arrayContaining(['executing', 'awaiting_policy', 'superseded']));
    const intoExecuting = Object.entries(ATTEMPT_TRANSITIONS).filter(([, tos]) => tos.includes('executing')).map(([from]) => from);
    expect(intoExecuting).toEqual(['authorized']);
  });
});

// The knowledge layer's events (issue 17). Who appends them on a task subject is the services'
// part of the issue: EVENT_AUTHORSHIP gains their rows in the change that first appends them
// (the orchestrator appends working state and beliefs; memory and ingress binding are not appended yet).
const KNOWLEDGE_CONTEXTS = [
  ['working_state', typesOf(WorkingStateEvent as never)],
  ['belief', typesOf(BeliefEvent as never)],
  ['memory', typesOf(MemoryEvent as never)],
  ['ingress', typesOf(IngressBindingEvent as never)],
  ['context', typesOf(ContextPackEvent as never)],
] as const;

describe('knowledge event types', () => {
  it.each(KNOWLEDGE_CONTEXTS)('given the %s events, then each type is a dotted envelope event_type of its context, none of them a deletion', (context, types) => {
    expect(types.length).toBeGreaterThan(1);
    for (const type of types) {
      expect(EventType.safeParse(type).success, type).toBe(true);
      expect(type.startsWith(`${context}.`), type).toBe(true);
      expect(type, type).not.toMatch(/delete|erase|purge/);
    }
  });

  it('given the working state, belief and context pack events, then the orchestrator alone appends them on a task; memory and ingress binding have no author yet', () => {
    for (const type of [...typesOf(WorkingStateEvent as never), ...typesOf(BeliefEvent as never), ...typesOf(ContextPackEvent as never)]) expect(authorsOf('task', type), type).toEqual(['orchestrator']);
    for (const type of [...typesOf(MemoryEvent as never), ...typesOf(IngressBindingEvent as never)]) expect(authorsOf('task', type), type).toEqual([]);
  });

  it('given every context, knowledge included, then no event type is declared twice, and the ingress binding keeps clear of the ActionRequest path', () => {
    const all = [...CONTEXTS, ...KNOWLEDGE_CONTEXTS].flatMap(([, types]) => types);
    expect(new Set(all).size).toBe(all.length);
    expect(typesOf(IngressBindingEvent as never)).not.toEqual(expect.arrayContaining(['ingress.received']));
  });
});
