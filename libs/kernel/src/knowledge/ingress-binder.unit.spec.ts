import { describe, expect, it } from 'vitest';
import { at } from '../../test/decider-spec.js';
import { foldConversationFocus, focusKey, type FocusLogEntry } from './conversation-focus.projection.js';
import { chooseBinding, conversationTasks, disambiguation, type BindingInput } from './ingress-binder.js';
import { bindingProblem } from './ingress-binding.decider.js';

const HASH = 'd'.repeat(64);
const live = (task_id: string) => ({ task_id, status: 'running' as const });
const ended = (task_id: string) => ({ task_id, status: 'completed' as const });
const awaiting = (task_id: string, ...pending_approvals: string[]) => ({ ...live(task_id), pending_approvals });
const input = (over: Partial<BindingInput>): BindingInput => ({ kind: 'note', others: [], newTaskId: 't-new', ...over });

describe('ingress binder (Hermit 8.1.3 priority, 8.1.2 ambiguity, 8.1.1 no reopening)', () => {
  it.each([
    // note, input, want
    ['chat is chat_only whatever it names', input({ kind: 'chat', explicit: live('t-1') }), { resolution: 'chat_only', task_id: undefined }],
    ['an explicit task ref wins over reply and focus', input({ explicit: live('t-1'), replyTo: { ingress_id: 'in-0', task: live('t-2') }, focus: live('t-3') }), { resolution: 'append_note', task_id: 't-1' }],
    ['a reply binds to the replied message\'s task before the focus', input({ replyTo: { ingress_id: 'in-0', task: live('t-2') }, focus: live('t-3') }), { resolution: 'append_note', task_id: 't-2' }],
    ['without ref or reply, the focus task', input({ focus: live('t-3'), others: [live('t-4')] }), { resolution: 'append_note', task_id: 't-3' }],
    ['a control word on the focus binds as control', input({ kind: 'control', focus: live('t-3') }), { resolution: 'control', task_id: 't-3' }],
    ['a note on an explicit terminal task starts a new root task, never a reopening', input({ explicit: ended('t-1'), focus: live('t-3') }), { resolution: 'start_new_root', task_id: 't-new' }],
    ['a reply to a message of an ended task starts a new root task', input({ kind: 'correction', replyTo: { ingress_id: 'in-0', task: ended('t-2') }, focus: live('t-3') }), { resolution: 'start_new_root', task_id: 't-new' }],
    ['a control word on an ended task starts nothing', input({ kind: 'control', explicit: ended('t-1') }), { resolution: 'chat_only', task_id: undefined }],
    ['an ended focus is not a follow-up: the one other open task', input({ focus: ended('t-3'), others: [live('t-4')] }), { resolution: 'append_note', task_id: 't-4' }],
    ['an ended focus with one other open task binds to it', input({ focus: ended('t-3'), others: [live('t-4'), ended('t-5')] }), { resolution: 'append_note', task_id: 't-4' }],
    ['an ended focus with two open tasks is pending_disambiguation', input({ focus: ended('t-3'), others: [live('t-5'), live('t-4')] }), { resolution: 'pending_disambiguation', task_id: undefined }],
    ['nothing to bind to is chat_only', input({}), { resolution: 'chat_only', task_id: undefined }],
    ['an answer on an explicit task awaiting approval binds as approval', input({ kind: 'answer', explicit: awaiting('t-1', 'apv-1') }), { resolution: 'approval', task_id: 't-1' }],
    ['a note on a task awaiting approval is a note', input({ kind: 'note', explicit: awaiting('t-1', 'apv-1') }), { resolution: 'append_note', task_id: 't-1' }],
    ['an answer on an explicit task with no pending approval is a note on it', input({ kind: 'answer', explicit: live('t-1'), others: [awaiting('t-2', 'apv-2')] }), { resolution: 'append_note', task_id: 't-1' }],
    ['an answer without ref or reply correlates to the one pending approval before the focus', input({ kind: 'answer', focus: live('t-3'), others: [awaiting('t-4', 'apv-4')] }), { resolution: 'approval', task_id: 't-4' }],
    ['an answer with two tasks awaiting approval is pending_disambiguation', input({ kind: 'answer', focus: awaiting('t-3', 'apv-3'), others: [awaiting('t-4', 'apv-4')] }), { resolution: 'pending_disambiguation', task_id: undefined }],
    ['a fork on an explicit live task is fork_child of it', input({ fork: true, explicit: live('t-1'), focus: live('t-3') }), { resolution: 'fork_child', task_id: 't-new' }],
    ['a fork on the focus is fork_child of it', input({ kind: 'correction', fork: true, focus: live('t-3') }), { resolution: 'fork_child', task_id: 't-new' }],
    ['a fork on an ended task is a follow-up (start_new_root), never a child of an ended task', input({ fork: true, explicit: ended('t-1') }), { resolution: 'start_new_root', task_id: 't-new' }],
    ['a control word asking for a fork is control', input({ kind: 'control', fork: true, explicit: live('t-1') }), { resolution: 'control', task_id: 't-1' }],
    ['a fork with nothing to land on is chat_only', input({ fork: true }), { resolution: 'chat_only', task_id: undefined }],
    ['an answer on an ended task that still lists an approval is a follow-up, not an approval', input({ kind: 'answer', explicit: { ...ended('t-1'), pending_approvals: ['apv-1'] } }), { resolution: 'start_new_root', task_id: 't-new' }],
  ] as const)('given %s', (_note, given, want) => {
    const choice = chooseBinding(given);
    expect({ resolution: choice.resolution, task_id: choice.task_id }).toEqual(want);
    // Every choice is one the decider accepts (its shape rules are the same function).
    expect(bindingProblem({ ...choice, candidates: [...choice.candidates] })).toBeUndefined();
  });

  it('given an answer bound as approval, then the rationale names the approval it answers and says it resolves nothing', () => {
    const choice = chooseBinding(input({ kind: 'answer', replyTo: { ingress_id: 'in-0', task: awaiting('t-2', 'apv-9', 'apv-1') } }));
    expect(choice).toMatchObject({ resolution: 'approval', task_id: 't-2', continued_task_status: 'running', candidates: [{ resolution: 'approval', task_id: 't-2' }] });
    expect(choice.rationale).toContain('apv-1, apv-9');
    expect(choice.rationale).toContain("a director's signed resolution decides it");
  });

  it('given a follow-up on an ended task, then the new task carries a continuation anchor on its outcome, the decider accepts it, and it is the same on a redelivery', () => {
    const given = input({ explicit: { ...ended('t-1'), outcome: { summary: 'task t-1 completed: 2 actions, 2 receipts', artifact_refs: ['receipt:rct-1', 'receipt:rct-2'] } } });
    const choice = chooseBinding(given);
    expect(choice.continuation_anchor).toEqual({
      anchor_task_id: 't-1',
      anchor_kind: 'completed_outcome',
      selection_reason: 'explicit task ref t-1',
      outcome_status: 'completed',
      outcome_summary: 'task t-1 completed: 2 actions, 2 receipts',
      source_artifact_refs: ['receipt:rct-1', 'receipt:rct-2'],
    });
    expect(choice.rationale).toContain('never reopened');
    expect(bindingProblem({ ...choice, candidates: [...choice.candidates] })).toBeUndefined();
    expect(chooseBinding(given)).toEqual(choice);
  });

  it('given a fork, then the child names its parent, and the decider accepts it', () => {
    const choice = chooseBinding(input({ fork: true, replyTo: { ingress_id: 'in-0', task: live('t-2') } }));
    expect(choice).toMatchObject({ resolution: 'fork_child', task_id: 't-new', parent_task_id: 't-2', candidates: [{ resolution: 'fork_child', task_id: 't-new' }] });
    expect(choice.rationale).toContain('reply to in-0');
    expect(bindingProblem({ ...choice, candidates: [...choice.candidates] })).toBeUndefined();
  });

  it('given ambiguity, then the candidates are listed in id order so the binding is explainable and deterministic', () => {
    const choice = chooseBinding(input({ others: [live('t-9'), live('t-4'), live('t-9')] }));
    expect(choice.candidates.map((c) => c.task_id)).toEqual(['t-4', 't-9']);
    expect(choice).toEqual(chooseBinding(input({ others: [live('t-4'), live('t-9')] })));
  });
});

describe('disambiguation: a reply naming one of a pending message\'s candidates binds it', () => {
  const pending = { ingress_id: 'in-p', candidates: [{ resolution: 'control' as const, task_id: 't-4', score: 0.5 }, { resolution: 'control' as const, task_id: 't-5', score: 0.5 }] };

  it('given a reply with an explicit ref to a candidate, then the pending message binds to it with its candidate resolution, and the decider accepts it', () => {
    const reply = chooseBinding(input({ explicit: live('t-5'), replyTo: { ingress_id: 'in-p' } }));
    const bound = disambiguation(pending, { ingress_id: 'in-r', explicit: true, choice: reply });
    expect(bound).toMatchObject({ resolution: 'control', task_id: 't-5', continued_task_status: 'running', candidates: [{ resolution: 'control', task_id: 't-5' }] });
    expect(bound!.rationale).toContain('in-r');
    expect(bindingProblem({ ...bound!, candidates: [...bound!.candidates] })).toBeUndefined();
  });

  it.each([
    ['a task that is not a candidate', input({ explicit: live('t-9'), replyTo: { ingress_id: 'in-p' } }), true],
    ['no explicit ref (the focus chose)', input({ focus: live('t-4'), replyTo: { ingress_id: 'in-p' } }), false],
    ['chat', input({ kind: 'chat', explicit: live('t-4'), replyTo: { ingress_id: 'in-p' } }), true],
    ['an ended candidate (a new task started instead)', input({ explicit: ended('t-4'), replyTo: { ingress_id: 'in-p' } }), true],
  ] as const)('given a reply naming %s, then the pending message stays pending', (_note, given, explicit) => {
    expect(disambiguation(pending, { ingress_id: 'in-r', explicit, choice: chooseBinding(given) })).toBeUndefined();
  });
});

describe('conversation streams (cnv-…): one principal and conversation per stream', () => {
  const recorded = (stream: string, ingress_id: string, principal_id = 'alice', conversation_id = 'conv-1'): FocusLogEntry => ({
    entity_type: 'ingress',
    entity_id: stream,
    event: { type: 'ingress.recorded', data: { ingress_id, conversation_id, principal_id, source_channel: 'nats', text_sha256: HASH, at: at(0) } },
  });
  const bound = (stream: string, ingress_id: string, task_id: string | undefined, resolution = 'append_note'): FocusLogEntry => ({
    entity_type: 'ingress',
    entity_id: stream,
    event: { type: 'ingress.bound', data: { ingress_id, resolution, ...(task_id === undefined ? {} : { task_id }), candidates: [], rationale: 'r', bound_by: 'writ-ingress', at: at(1) } },
  });
  const log = [recorded('cnv-a', 'in-1'), bound('cnv-a', 'in-1', 't-1'), recorded('cnv-a', 'in-2'), bound('cnv-a', 'in-2', 't-2')];

  it('given two bindings, then focus is the last bound task and the other one is listed', () => {
    expect(conversationTasks(log, 'alice', 'conv-1')).toEqual({ focus_task_id: 't-2', others: ['t-1'], boundTo: { 'in-1': 't-1', 'in-2': 't-2' } });
  });

  it('given a record naming another sender on the stream, a binding on another stream, or a second binding, then none moves focus or names a task', () => {
    const forged = [
      recorded('cnv-a', 'in-x', 'mallory'),
      bound('cnv-a', 'in-x', 't-evil'),
      recorded('cnv-b', 'in-3'),
      bound('cnv-a', 'in-3', 't-evil'),
      bound('cnv-a', 'in-2', 't-evil'),
    ];
    const tasks = conversationTasks([...log, ...forged], 'alice', 'conv-1');
    expect(tasks.focus_task_id).toBe('t-2');
    expect(tasks.others).toEqual(['t-1']);
    const view = foldConversationFocus([...log, ...forged]);
    expect(view.focus[focusKey('mallory', 'conv-1')]).toBeUndefined();
    expect(view.skipped).toBe(4);
  });

  it('given a pending_disambiguation binding, then it names no task and the message may be bound again', () => {
    const pending = [recorded('cnv-a', 'in-3'), { ...bound('cnv-a', 'in-3', undefined, 'pending_disambiguation'), event: { type: 'ingress.bound', data: { ingress_id: 'in-3', resolution: 'pending_disambiguation', candidates: [{ resolution: 'append_note', task_id: 't-1' }, { resolution: 'append_note', task_id: 't-2' }], rationale: 'r', bound_by: 'writ-ingress', at: at(2) } } }];
    const tasks = conversationTasks([...log, ...pending, bound('cnv-a', 'in-3', 't-1')], 'alice', 'conv-1');
    expect(tasks.boundTo['in-3']).toBe('t-1');
    expect(tasks.focus_task_id).toBe('t-1');
  });
});
