import { STEP_TERMINAL_STATES, type StepStatus } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, unknownCommand } from '../shared/instant.js';
import { StepError } from './step.errors.js';
import { STEP_EVENT_EDGES, StepEvent, type ClosedAttemptOutcome, type StepEventType } from './step.events.js';

type NoData = Readonly<Record<string, never>>;

/**
 * Commands of the Step aggregate (Hermit 8.2, 12.2). A step owns the
 * numbering of its attempts and the rule "one mutable attempt at a time";
 * a retry is `open-attempt` again, with the next `attempt_no`.
 */
export type StepCommand =
  | Command<
      'plan-step',
      {
        readonly step_id: string;
        readonly task_id: string;
        readonly kind: string;
        readonly title: string;
        readonly contract_ref: string;
        readonly depends_on?: readonly string[];
        readonly max_attempts: number;
      }
    >
  | Command<'mark-step-ready', NoData>
  | Command<'open-attempt', { readonly attempt_id: string }>
  | Command<'block-step', { readonly reason: string }>
  | Command<'unblock-step', NoData>
  | Command<'close-attempt', { readonly attempt_id: string; readonly outcome: 'succeeded' | ClosedAttemptOutcome }>
  | Command<'fail-step', { readonly reason: string }>
  | Command<'cancel-step', { readonly reason: string }>
  | Command<'supersede-step', { readonly reason: string; readonly superseded_by_step_id?: string }>;

export interface StepAttemptEntry {
  readonly attempt_id: string;
  readonly attempt_no: number;
  /** null while the attempt is active. */
  readonly outcome: 'succeeded' | ClosedAttemptOutcome | null;
}

export interface NoStep {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

export interface StepRecord {
  readonly status: StepStatus;
  readonly step_id: string;
  readonly task_id: string;
  readonly kind: string;
  readonly title: string;
  readonly contract_ref: string;
  readonly depends_on: readonly string[];
  readonly max_attempts: number;
  readonly attempts: readonly StepAttemptEntry[];
  readonly active_attempt_id: string | null;
  readonly reason: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly anomalies: readonly Anomaly[];
}

export type StepState = NoStep | StepRecord;

export function initialState(): StepState {
  return { status: 'initial', anomalies: [] };
}

function requireEdge(state: StepRecord, eventType: Exclude<StepEventType, 'step.planned'>, command: string): void {
  const edge = STEP_EVENT_EDGES[eventType];
  if (edge.from.includes(state.status)) return;
  const details = { step_id: state.step_id, status: state.status, command };
  if (STEP_TERMINAL_STATES.includes(state.status)) throw new StepError('STEP_TERMINAL', `step ${state.step_id} is ${state.status}`, { details });
  if (state.active_attempt_id !== null && ['step.failed', 'step.cancelled', 'step.superseded'].includes(eventType)) {
    throw new StepError('STEP_ATTEMPT_ACTIVE', `step ${state.step_id} has the active attempt ${state.active_attempt_id}; close it first`, {
      details: { ...details, attempt_id: state.active_attempt_id },
    });
  }
  throw new StepError('STEP_TRANSITION_NOT_ALLOWED', `step ${state.step_id} cannot go from ${state.status} to ${edge.to}`, { details });
}

export function decide(command: StepCommand, state: StepState): StepEvent[] {
  commandNowMs(command);
  const at = command.metadata.now;
  if (command.type === 'plan-step') {
    if (state.status !== 'initial') throw new StepError('STEP_ALREADY_EXISTS', `step ${state.step_id} already exists`);
    return emit(StepEvent, [{ type: 'step.planned', data: { ...command.data, depends_on: [...(command.data.depends_on ?? [])], at } }]);
  }
  if (state.status === 'initial') {
    if (!['mark-step-ready', 'open-attempt', 'block-step', 'unblock-step', 'close-attempt', 'fail-step', 'cancel-step', 'supersede-step'].includes(command.type)) {
      return unknownCommand((command as { type?: unknown }).type, 'the step decider');
    }
    throw new StepError('STEP_NOT_FOUND', `${command.type} needs an existing step`);
  }
  switch (command.type) {
    case 'mark-step-ready':
      requireEdge(state, 'step.marked_ready', command.type);
      return emit(StepEvent, [{ type: 'step.marked_ready', data: { at } }]);
    case 'open-attempt': {
      if (state.active_attempt_id !== null) {
        throw new StepError('STEP_ATTEMPT_ACTIVE', `step ${state.step_id} already has the active attempt ${state.active_attempt_id}`, {
          details: { attempt_id: state.active_attempt_id },
        });
      }
      requireEdge(state, 'step.attempt_opened', command.type);
      if (state.attempts.length >= state.max_attempts) {
        throw new StepError('STEP_ATTEMPTS_EXHAUSTED', `step ${state.step_id} already used its ${state.max_attempts} attempts`, {
          details: { max_attempts: state.max_attempts },
        });
      }
      return emit(StepEvent, [{ type: 'step.attempt_opened', data: { attempt_id: command.data.attempt_id, attempt_no: state.attempts.length + 1, at } }]);
    }
    case 'block-step':
      requireEdge(state, 'step.blocked', command.type);
      return emit(StepEvent, [{ type: 'step.blocked', data: { reason: command.data.reason, at } }]);
    case 'unblock-step':
      requireEdge(state, 'step.unblocked', command.type);
      return emit(StepEvent, [{ type: 'step.unblocked', data: { at } }]);
    case 'close-attempt': {
      if (STEP_TERMINAL_STATES.includes(state.status)) throw new StepError('STEP_TERMINAL', `step ${state.step_id} is ${state.status}`);
      if (state.active_attempt_id === null || state.active_attempt_id !== command.data.attempt_id) {
        throw new StepError('STEP_ATTEMPT_UNKNOWN', `attempt ${command.data.attempt_id} is not the active attempt of step ${state.step_id}`, {
          details: { attempt_id: command.data.attempt_id, active_attempt_id: state.active_attempt_id },
        });
      }
      const { attempt_id, outcome } = command.data;
      if (outcome === 'succeeded') {
        requireEdge(state, 'step.succeeded', command.type);
        return emit(StepEvent, [{ type: 'step.succeeded', data: { attempt_id, at } }]);
      }
      const closed = { type: 'step.attempt_closed', data: { attempt_id, outcome, at } } as const;
      // A superseded attempt did not fail: its step is superseded or carries on, never failed for the attempts it used.
      if (outcome === 'superseded' || state.attempts.length < state.max_attempts) return emit(StepEvent, [closed]);
      const reason = `attempt ${attempt_id} ${outcome} and all ${state.max_attempts} attempts are used`;
      return emit(StepEvent, [closed, { type: 'step.failed', data: { reason, at } }]);
    }
    case 'fail-step':
      requireEdge(state, 'step.failed', command.type);
      return emit(StepEvent, [{ type: 'step.failed', data: { reason: command.data.reason, at } }]);
    case 'cancel-step':
      requireEdge(state, 'step.cancelled', command.type);
      return emit(StepEvent, [{ type: 'step.cancelled', data: { reason: command.data.reason, at } }]);
    case 'supersede-step':
      requireEdge(state, 'step.superseded', command.type);
      return emit(StepEvent, [{ type: 'step.superseded', data: { ...command.data, at } }]);
    default:
      return unknownCommand((command as { type?: unknown }).type, 'the step decider');
  }
}

export const evolve = totalEvolve<StepState, StepEvent>(StepEvent, (state, event) => {
  if (event.type === 'step.planned') {
    if (state.status !== 'initial') return undefined;
    const { at, ...step } = event.data;
    return { ...step, status: 'planned', attempts: [], active_attempt_id: null, reason: null, created_at: at, updated_at: at, anomalies: state.anomalies };
  }
  if (state.status === 'initial') return undefined;
  const edge = STEP_EVENT_EDGES[event.type];
  if (!edge.from.includes(state.status)) return undefined;
  const base = { ...state, status: edge.to, updated_at: event.data.at };
  switch (event.type) {
    case 'step.attempt_opened':
      if (state.active_attempt_id !== null || event.data.attempt_no !== state.attempts.length + 1) return undefined;
      return {
        ...base,
        active_attempt_id: event.data.attempt_id,
        attempts: [...state.attempts, { attempt_id: event.data.attempt_id, attempt_no: event.data.attempt_no, outcome: null }],
      };
    case 'step.attempt_closed':
    case 'step.succeeded': {
      if (state.active_attempt_id !== event.data.attempt_id) return undefined;
      const outcome = event.type === 'step.succeeded' ? 'succeeded' : event.data.outcome;
      return {
        ...base,
        active_attempt_id: null,
        attempts: state.attempts.map((entry) => (entry.attempt_id === event.data.attempt_id ? { ...entry, outcome } : entry)),
      };
    }
    case 'step.failed':
    case 'step.cancelled':
    case 'step.superseded':
    case 'step.blocked':
      if (state.active_attempt_id !== null && event.type !== 'step.blocked') return undefined;
      return { ...base, reason: event.data.reason };
    default:
      return { ...base, reason: null };
  }
});

export const stepDecider: Decider<StepCommand, StepEvent, StepState> = Object.freeze({ initialState, decide, evolve });
