import type { ContinuationAnchor } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { at, deciderSpec, meta } from '../../test/decider-spec.js';
import { fold } from '../shared/decider.js';
import { foldConversationFocus, focusKey, type FocusLogEntry } from './conversation-focus.projection.js';
import { ingressBindingDecider, type IngressBindingCommand, type IngressRecordState } from './ingress-binding.decider.js';
import type { IngressBindingEvent } from './ingress-binding.events.js';

const spec = deciderSpec(ingressBindingDecider);
const HASH = 'c'.repeat(64);
const recordCommand = (ingress_id = 'in-1', principal_id = 'alice', s = 0): IngressBindingCommand => ({
  type: 'record-ingress',
  data: { ingress_id, conversation_id: 'conv-1', principal_id, source_channel: 'cli', text_sha256: HASH },
  metadata: meta(s),
});
const recorded = (ingress_id = 'in-1', principal_id = 'alice'): IngressBindingEvent => ingressBindingDecider.decide(recordCommand(ingress_id, principal_id), ingressBindingDecider.initialState())[0]!;
const bind = (data: Partial<Extract<IngressBindingCommand, { type: 'bind-ingress' }>['data']>, s = 1): IngressBindingCommand => ({
  type: 'bind-ingress',
  data: { resolution: 'append_note', task_id: 'task-1', continued_task_status: 'running', rationale: 'reply to the task thread', bound_by: 'writ-ingress', ...data },
  metadata: meta(s),
});
const anchor: ContinuationAnchor = {
  anchor_task_id: 'task-1',
  anchor_kind: 'completed_outcome',
  selection_reason: 'the follow-up quotes the finished report',
  outcome_status: 'completed',
  outcome_summary: 'report delivered',
  source_artifact_refs: ['artifact:report-1'],
};

describe('ingress binding decider (Hermit 8.1.2, 8.1.3, 8.1.1, 11.5)', () => {
  it('given nothing, when recorded, then ingress.recorded carries the text hash, never the text; recording again is ALREADY_RECORDED', () => {
    spec.given([]).when(recordCommand()).then([
      { type: 'ingress.recorded', data: { ingress_id: 'in-1', conversation_id: 'conv-1', principal_id: 'alice', source_channel: 'cli', text_sha256: HASH, at: at(0) } },
    ]);
    spec.given([recorded()]).when(recordCommand()).thenThrows('KNOWLEDGE_INGRESS_ALREADY_RECORDED');
  });

  it('given an ingress not recorded, when bound, then KNOWLEDGE_INGRESS_NOT_RECORDED (record first), and a forged binding folds to nothing', () => {
    spec.given([]).when(bind({})).thenThrows('KNOWLEDGE_INGRESS_NOT_RECORDED');
    const forged = { type: 'ingress.bound', data: { ingress_id: 'in-1', resolution: 'control', task_id: 'task-1', candidates: [], rationale: 'x', bound_by: 'y', at: at(1) } };
    expect(fold(ingressBindingDecider, [forged])).toEqual({ status: 'initial', anomalies: [{ event_type: 'ingress.bound', status: 'initial', reason: 'unexpected' }] });
  });

  it.each([
    ['control', { resolution: 'control' as const }],
    ['approval', { resolution: 'approval' as const }],
    ['append_note', {}],
    ['fork_child', { resolution: 'fork_child' as const, task_id: 'task-2', parent_task_id: 'task-1' }],
    ['start_new_root', { resolution: 'start_new_root' as const, task_id: 'task-3', continued_task_status: undefined }],
    ['chat_only', { resolution: 'chat_only' as const, task_id: undefined, continued_task_status: undefined }],
  ])('given a recorded ingress, when bound as %s, then ingress.bound with exactly one outcome', (resolution, data) => {
    const [event] = spec.given([recorded()]).when(bind(data)).thenEvents();
    expect(event).toMatchObject({ type: 'ingress.bound', data: { ingress_id: 'in-1', resolution } });
    expect((fold(ingressBindingDecider, [recorded(), event]) as IngressRecordState).status).toBe('bound');
  });

  it('given a bound ingress, when bound again, then ALREADY_BOUND; a pending disambiguation may be bound again once resolved', () => {
    const bound = [recorded(), ...ingressBindingDecider.decide(bind({}), fold(ingressBindingDecider, [recorded()]))];
    spec.given(bound).when(bind({ resolution: 'control' })).thenThrows('KNOWLEDGE_INGRESS_ALREADY_BOUND');
    const candidates = [{ resolution: 'append_note' as const, task_id: 'task-1', score: 0.5 }, { resolution: 'append_note' as const, task_id: 'task-2', score: 0.48 }];
    const pending = [recorded(), ...ingressBindingDecider.decide(bind({ resolution: 'pending_disambiguation', task_id: undefined, candidates }), fold(ingressBindingDecider, [recorded()]))];
    expect((fold(ingressBindingDecider, pending) as IngressRecordState).status).toBe('pending_disambiguation');
    expect(spec.given(pending).when(bind({ task_id: 'task-2' }, 5)).thenEvents()).toHaveLength(1);
  });

  it('given a terminal task, when a follow-up would append to it, then KNOWLEDGE_INGRESS_TERMINAL_TASK; a new root carrying a continuation anchor is accepted', () => {
    spec.given([recorded()]).when(bind({ continued_task_status: 'completed' })).thenThrows('KNOWLEDGE_INGRESS_TERMINAL_TASK');
    spec.given([recorded()]).when(bind({ resolution: 'fork_child', task_id: 'task-2', parent_task_id: 'task-1', continued_task_status: 'completed' })).thenThrows('KNOWLEDGE_INGRESS_TERMINAL_TASK');
    const [event] = spec.given([recorded()]).when(bind({ resolution: 'start_new_root', task_id: 'task-9', continued_task_status: 'completed', continuation_anchor: anchor })).thenEvents();
    expect(event).toMatchObject({ data: { resolution: 'start_new_root', task_id: 'task-9', continuation_anchor: anchor } });
  });

  it.each([
    ['control without a target', bind({ resolution: 'control', task_id: undefined })],
    ['chat_only naming a task', bind({ resolution: 'chat_only' })],
    ['fork_child without a parent', bind({ resolution: 'fork_child', task_id: 'task-2' })],
    ['pending_disambiguation pretending a unique candidate', bind({ resolution: 'pending_disambiguation', task_id: undefined, candidates: [{ resolution: 'append_note', task_id: 'task-1' }] })],
    ['an anchor on an active task', bind({ resolution: 'start_new_root', task_id: 'task-9', continuation_anchor: { ...anchor, outcome_status: 'running' } })],
    ['an anchor on append_note', bind({ continuation_anchor: anchor })],
  ])('given %s, then KNOWLEDGE_INGRESS_BINDING_INVALID', (_note, command) => {
    spec.given([recorded()]).when(command).thenThrows('KNOWLEDGE_INGRESS_BINDING_INVALID');
  });
});

describe('conversation focus projection (Hermit 13.6)', () => {
  const ingress = (event: IngressBindingEvent): FocusLogEntry => ({ entity_type: 'ingress', entity_id: event.data.ingress_id, event });
  const bound = (ingress_id: string, data: Partial<Extract<IngressBindingCommand, { type: 'bind-ingress' }>['data']>, principal = 'alice'): FocusLogEntry[] => {
    const first = recorded(ingress_id, principal);
    return [ingress(first), ...ingressBindingDecider.decide(bind(data), fold(ingressBindingDecider, [first])).map(ingress)];
  };
  const task = (task_id: string, type: string): FocusLogEntry => ({ entity_type: 'task', entity_id: task_id, event: { type, data: { at: at(9) } } });
  const log: FocusLogEntry[] = [
    ...bound('in-1', { resolution: 'start_new_root', task_id: 'task-1', continued_task_status: undefined }),
    ...bound('in-2', { resolution: 'start_new_root', task_id: 'task-2', continued_task_status: undefined }, 'bob'),
    ...bound('in-3', { resolution: 'chat_only', task_id: undefined, continued_task_status: undefined }),
    task('task-9', 'task.started'),
    ...bound('in-4', { resolution: 'approval', task_id: 'task-9' }),
  ];

  it('given bindings per principal, then each has one focus; chat, approvals and background progress do not steal it', () => {
    const view = foldConversationFocus(log);
    expect(view.focus[focusKey('alice', 'conv-1')]).toMatchObject({ focus_task_id: 'task-1', last_ingress_id: 'in-4' });
    expect(view.focus[focusKey('bob', 'conv-1')]).toMatchObject({ focus_task_id: 'task-2' });
  });

  it('given the focused task completes, then focus is released and the outcome kept for a continuation anchor', () => {
    const view = foldConversationFocus([...log, task('task-1', 'task.completed')]);
    expect(view.focus[focusKey('alice', 'conv-1')]).toMatchObject({ focus_task_id: null, last_outcome_task_id: 'task-1' });
    expect(view.focus[focusKey('bob', 'conv-1')]).toMatchObject({ focus_task_id: 'task-2' });
  });

  it('given a binding forged for an unrecorded or already bound ingress, then focus does not move and the entry is counted as skipped', () => {
    const forged = (ingress_id: string): FocusLogEntry => ({
      entity_type: 'ingress',
      entity_id: ingress_id,
      event: { type: 'ingress.bound', data: { ingress_id, resolution: 'control', task_id: 'task-evil', candidates: [], rationale: 'x', bound_by: 'y', at: at(3) } },
    });
    const view = foldConversationFocus([...log, forged('in-404'), forged('in-1')]);
    expect(view.focus[focusKey('alice', 'conv-1')]?.focus_task_id).toBe('task-1');
    expect(view.skipped).toBe(2);
  });

  it('given the same log, when folded twice (and through JSON), then equal focus views (rebuild equality)', () => {
    const once = foldConversationFocus(log);
    expect(foldConversationFocus(JSON.parse(JSON.stringify(log)) as FocusLogEntry[])).toEqual(once);
    expect(JSON.parse(JSON.stringify(once))).toEqual(once);
  });
});
