import { TASK_TRANSITIONS, type TaskStatus } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { deciderSpec, meta, T0 } from '../../test/decider-spec.js';
import { taskDecider, type TaskCommand } from './task.decider.js';
import { TASK_EVENT_EDGES, type TaskEvent } from './task.events.js';

const spec = deciderSpec(taskDecider);

const created: TaskEvent = {
  type: 'task.created',
  data: {
    task_id: 'task-1',
    title: 'Fix the flaky test',
    goal: 'Make retry.ts deterministic.',
    owner_principal_id: 'user-1',
    policy_profile_ref: 'local_edit_allowed@1',
    task_contract_ref: 'artifact:brief-1',
    files_owned: ['src/retry/**'],
    priority: 'normal',
    at: T0,
  },
};
const ready: TaskEvent = { type: 'task.marked_ready', data: { at: T0 } };
const started: TaskEvent = { type: 'task.started', data: { at: T0 } };
const completed: TaskEvent = { type: 'task.completed', data: { at: T0 } };
const cancelled: TaskEvent = { type: 'task.cancelled', data: { reason: 'user stop', at: T0 } };

const cmd = <T extends TaskCommand['type']>(type: T, data: Extract<TaskCommand, { type: T }>['data']) => ({ type, data, metadata: meta() }) as TaskCommand;

describe('task decider (Hermit 12.1)', () => {
  it('given no task, when create-task, then task.created with defaults', () => {
    spec
      .given([])
      .when(cmd('create-task', { ...created.data, files_owned: ['src/retry/**'], priority: undefined } as never))
      .then([created]);
  });

  it('given sacred exceptions, when create-task, then task.created carries them and the task keeps them; without any, neither does the event', () => {
    const events = spec.given([]).when(cmd('create-task', { ...created.data, sacred_exceptions: ['.env.example'] } as never)).thenEvents();
    expect(events[0]?.data).toMatchObject({ sacred_exceptions: ['.env.example'] });
    const state = spec.given(events).state;
    expect(state.status !== 'initial' && state.sacred_exceptions).toEqual(['.env.example']);
    const plain = spec.given([]).when(cmd('create-task', { ...created.data, sacred_exceptions: [] } as never)).thenEvents();
    expect(plain[0]?.data).not.toHaveProperty('sacred_exceptions');
    const before = spec.given([created]).state;
    expect(before.status !== 'initial' && before.sacred_exceptions).toEqual([]);
  });

  it('given a sacred exception reaching outside the workspace, when create-task, then KERNEL_COMMAND_INVALID', () => {
    spec.given([]).when(cmd('create-task', { ...created.data, sacred_exceptions: ['/etc/passwd'] } as never)).thenThrows('KERNEL_COMMAND_INVALID');
  });

  it('given a task, when create-task again, then TASK_ALREADY_EXISTS', () => {
    spec.given([created]).when(cmd('create-task', created.data as never)).thenThrows('TASK_ALREADY_EXISTS');
  });

  it('given no task, when start-task, then TASK_NOT_FOUND', () => {
    spec.given([]).when(cmd('start-task', {})).thenThrows('TASK_NOT_FOUND');
  });

  it('given a created task, when start-task, then TASK_TRANSITION_NOT_ALLOWED (created -> running is not an edge)', () => {
    spec.given([created]).when(cmd('start-task', {})).thenThrows('TASK_TRANSITION_NOT_ALLOWED');
  });

  it('given a running task, when block-task then unblock-task, then it walks blocked and back to running', () => {
    const blocked = spec.given([created, ready, started]).when(cmd('block-task', { reason: 'awaiting approval' })).then([
      { type: 'task.blocked', data: { reason: 'awaiting approval', at: T0 } },
    ]);
    const state = spec.given([created, ready, started, ...blocked]).state;
    expect(state.status).toBe('blocked');
    spec.given([created, ready, started, ...blocked]).when(cmd('unblock-task', {})).then([{ type: 'task.unblocked', data: { at: T0 } }]);
  });

  it('given a paused task, when resume-task, then it is ready again (paused -> ready)', () => {
    const paused: TaskEvent = { type: 'task.paused', data: { reason: 'night', at: T0 } };
    spec.given([created, ready, started, paused]).when(cmd('resume-task', {})).then([{ type: 'task.resumed', data: { at: T0 } }]);
  });

  it('given a cancelled task, when any command, then TASK_TERMINAL', () => {
    for (const command of [cmd('start-task', {}), cmd('cancel-task', { reason: 'again' }), cmd('roll-back-task', { rollback_ref: 'receipt:r-1' })]) {
      spec.given([created, ready, cancelled]).when(command).thenThrows('TASK_TERMINAL');
    }
  });

  it('given a completed task, when roll-back-task, then task.rolled_back (the one edge out of a terminal state)', () => {
    spec
      .given([created, ready, started, completed])
      .when(cmd('roll-back-task', { rollback_ref: 'receipt:r-9' }))
      .then([{ type: 'task.rolled_back', data: { rollback_ref: 'receipt:r-9', at: T0 } }]);
    spec.given([created, ready, started, completed]).when(cmd('fail-task', { reason: 'late' })).thenThrows('TASK_TERMINAL');
  });

  it('given a command with an invalid clock reading, then KERNEL_COMMAND_INVALID', () => {
    spec.given([created]).when({ type: 'mark-task-ready', data: {}, metadata: { now: 'yesterday' } }).thenThrows('KERNEL_COMMAND_INVALID');
  });

  it('given an unknown command type, then KERNEL_COMMAND_INVALID', () => {
    spec.given([created]).when({ type: 'delete-task', data: {}, metadata: meta() } as unknown as TaskCommand).thenThrows('KERNEL_COMMAND_INVALID');
  });

  it('given create-task with an empty title, then KERNEL_COMMAND_INVALID (the event would not validate)', () => {
    spec.given([]).when(cmd('create-task', { ...created.data, title: '' } as never)).thenThrows('KERNEL_COMMAND_INVALID');
  });

  it.each(['../**', '/etc/**', '~/x', 'src\\x'])('given files_owned %j reaching outside the workspace, then KERNEL_COMMAND_INVALID', (pattern) => {
    spec.given([]).when(cmd('create-task', { ...created.data, files_owned: [pattern] } as never)).thenThrows('KERNEL_COMMAND_INVALID');
  });

  it('given the event edge table, then it covers exactly TASK_TRANSITIONS of the contracts', () => {
    const edges = Object.values(TASK_EVENT_EDGES).flatMap((edge) => edge.from.map((from) => `${from}->${edge.to}`));
    const contract = (Object.entries(TASK_TRANSITIONS) as [TaskStatus, readonly TaskStatus[]][]).flatMap(([from, tos]) => tos.map((to) => `${from}->${to}`));
    expect(new Set(edges)).toEqual(new Set(contract));
    expect(edges.length).toBe(contract.length);
  });

  it('given a started event replayed onto a created task, then evolve keeps the state and records the anomaly', () => {
    const state = spec.given([created, started]).state;
    expect(state.status).toBe('created');
    expect(state.anomalies).toEqual([{ event_type: 'task.started', status: 'created', reason: 'unexpected' }]);
  });
});
