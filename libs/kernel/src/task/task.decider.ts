import { TASK_TERMINAL_STATES, type Brief, type ContinuationAnchor, type TaskPriority, type TaskStatus } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, unknownCommand } from '../shared/instant.js';
import { TaskError } from './task.errors.js';
import { TASK_EVENT_EDGES, TaskEvent, type TaskTransitionEventType } from './task.events.js';

type NoData = Readonly<Record<string, never>>;

/** Commands of the Task aggregate (Hermit 12.1). Each non-creating command walks one edge of `TASK_TRANSITIONS`. */
export type TaskCommand =
  | Command<
      'create-task',
      {
        readonly task_id: string;
        readonly title: string;
        readonly goal: string;
        readonly owner_principal_id: string;
        readonly policy_profile_ref: string;
        readonly task_contract_ref: string;
        readonly files_owned?: readonly string[];
        readonly sacred_exceptions?: readonly string[];
        readonly priority?: TaskPriority;
        readonly source_channel?: string;
        /** brief.json the task is created from (seed 003). */
        readonly brief?: Brief;
        /** The ended outcome a follow-up continues (Hermit 8.1.1). */
        readonly continuation_anchor?: ContinuationAnchor;
        /** The live task a fork_child was started from (Hermit 8.1.3). */
        readonly parent_task_id?: string;
      }
    >
  | Command<'mark-task-ready', NoData>
  | Command<'start-task', NoData>
  | Command<'block-task', { readonly reason: string; readonly blocked_on?: string }>
  | Command<'unblock-task', NoData>
  | Command<'pause-task', { readonly reason: string }>
  | Command<'resume-task', NoData>
  | Command<'complete-task', { readonly summary?: string }>
  | Command<'fail-task', { readonly reason: string }>
  | Command<'cancel-task', { readonly reason: string }>
  | Command<'roll-back-task', { readonly rollback_ref: string }>;

export type TaskCommandType = TaskCommand['type'];

/** Before `task.created`. */
export interface NoTask {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

export interface TaskRecord {
  readonly status: TaskStatus;
  readonly task_id: string;
  readonly title: string;
  readonly goal: string;
  readonly owner_principal_id: string;
  readonly policy_profile_ref: string;
  readonly task_contract_ref: string;
  readonly files_owned: readonly string[];
  /** Sacred Scope exceptions the task asked for (empty when none). */
  readonly sacred_exceptions: readonly string[];
  /** brief.json the task was created from, or null: a briefed task closes only on an accepted done claim. */
  readonly brief: Brief | null;
  /** The ended outcome this task continues, or null (Hermit 8.1.1). */
  readonly continuation_anchor: ContinuationAnchor | null;
  /** The task this one was forked from, or null (Hermit 8.1.3 fork_child). */
  readonly parent_task_id: string | null;
  readonly priority: TaskPriority;
  readonly created_at: string;
  readonly updated_at: string;
  /** Why the task is blocked, paused, failed or cancelled; null otherwise. */
  readonly reason: string | null;
  readonly rollback_ref: string | null;
  readonly anomalies: readonly Anomaly[];
}

export type TaskState = NoTask | TaskRecord;

/** The event each transition command produces. */
export const TASK_COMMAND_EVENTS: Readonly<Record<Exclude<TaskCommandType, 'create-task'>, TaskTransitionEventType>> = Object.freeze({
  'mark-task-ready': 'task.marked_ready',
  'start-task': 'task.started',
  'block-task': 'task.blocked',
  'unblock-task': 'task.unblocked',
  'pause-task': 'task.paused',
  'resume-task': 'task.resumed',
  'complete-task': 'task.completed',
  'fail-task': 'task.failed',
  'cancel-task': 'task.cancelled',
  'roll-back-task': 'task.rolled_back',
});

export function initialState(): TaskState {
  return { status: 'initial', anomalies: [] };
}

export function isTaskTerminal(state: TaskState): boolean {
  return state.status !== 'initial' && TASK_TERMINAL_STATES.includes(state.status);
}

export function decide(command: TaskCommand, state: TaskState): TaskEvent[] {
  commandNowMs(command);
  const at = command.metadata.now;
  if (command.type === 'create-task') {
    if (state.status !== 'initial') {
      throw new TaskError('TASK_ALREADY_EXISTS', `task ${state.task_id} already exists`, { details: { task_id: state.task_id } });
    }
    const { sacred_exceptions: sacred, brief, continuation_anchor: anchor, parent_task_id: parent, ...data } = command.data;
    // Only a task that asks for exceptions (or has a brief, or continues an outcome) carries the field, so every other task.created stays as it was.
    const exceptions = sacred === undefined || sacred.length === 0 ? {} : { sacred_exceptions: [...sacred] };
    const briefed = brief === undefined ? {} : { brief };
    const anchored = { ...(parent === undefined ? {} : { parent_task_id: parent }), ...(anchor === undefined ? {} : { continuation_anchor: anchor }) };
    return emit(TaskEvent, [
      { type: 'task.created', data: { ...data, files_owned: [...(data.files_owned ?? [])], ...exceptions, ...briefed, ...anchored, priority: data.priority ?? 'normal', at } },
    ]);
  }
  const eventType = Object.hasOwn(TASK_COMMAND_EVENTS, command.type) ? TASK_COMMAND_EVENTS[command.type] : undefined;
  if (eventType === undefined) return unknownCommand((command as { type?: unknown }).type, 'the task decider');
  if (state.status === 'initial') throw new TaskError('TASK_NOT_FOUND', `${command.type} needs an existing task`);
  const edge = TASK_EVENT_EDGES[eventType];
  if (!edge.from.includes(state.status)) {
    const details = { task_id: state.task_id, status: state.status, command: command.type, to: edge.to };
    if (TASK_TERMINAL_STATES.includes(state.status)) {
      throw new TaskError('TASK_TERMINAL', `task ${state.task_id} is ${state.status}; ${command.type} is not allowed`, { details });
    }
    throw new TaskError('TASK_TRANSITION_NOT_ALLOWED', `task ${state.task_id} cannot go from ${state.status} to ${edge.to}`, { details });
  }
  return emit(TaskEvent, [{ type: eventType, data: { ...command.data, at } } as TaskEvent]);
}

export const evolve = totalEvolve<TaskState, TaskEvent>(TaskEvent, (state, event) => {
  if (event.type === 'task.created') {
    if (state.status !== 'initial') return undefined;
    const { at, source_channel: _channel, sacred_exceptions: sacred, brief, continuation_anchor: anchor, parent_task_id: parent, ...task } = event.data;
    return { ...task, sacred_exceptions: sacred ?? [], brief: brief ?? null, continuation_anchor: anchor ?? null, parent_task_id: parent ?? null, status: 'created', created_at: at, updated_at: at, reason: null, rollback_ref: null, anomalies: state.anomalies };
  }
  if (state.status === 'initial') return undefined;
  const edge = TASK_EVENT_EDGES[event.type];
  if (!edge.from.includes(state.status)) return undefined;
  const data = event.data as { at: string; reason?: string; rollback_ref?: string };
  return {
    ...state,
    status: edge.to,
    updated_at: data.at,
    reason: data.reason ?? null,
    rollback_ref: data.rollback_ref ?? state.rollback_ref,
  };
});

export const taskDecider: Decider<TaskCommand, TaskEvent, TaskState> = Object.freeze({ initialState, decide, evolve });
