import { TASK_TERMINAL_STATES, type ContinuationAnchor, type IngressResolution, type TaskStatus } from '@writ/contracts';
import type { Anomaly, Command, Decider } from '../shared/decider.js';
import { totalEvolve } from '../shared/decider.js';
import { emit } from '../shared/events.js';
import { commandNowMs, unknownCommand } from '../shared/instant.js';
import { KnowledgeError } from './knowledge.errors.js';
import { IngressBindingEvent, type BindingCandidate } from './ingress-binding.events.js';

export type IngressBindingCommand =
  | Command<
      'record-ingress',
      {
        readonly ingress_id: string;
        readonly conversation_id: string;
        readonly principal_id: string;
        readonly source_channel: string;
        readonly text_sha256: string;
        readonly explicit_task_ref?: string;
        readonly reply_to_ref?: string;
        readonly fork?: true;
      }
    >
  | Command<
      'bind-ingress',
      {
        readonly resolution: IngressResolution;
        readonly task_id?: string;
        readonly parent_task_id?: string;
        /** The status of the task the binding continues (the target, or the parent of a fork), as the caller read it. */
        readonly continued_task_status?: TaskStatus;
        readonly continuation_anchor?: ContinuationAnchor;
        readonly candidates?: readonly BindingCandidate[];
        readonly rationale: string;
        readonly confidence?: number;
        readonly bound_by: string;
      }
    >;

export interface NoIngress {
  readonly status: 'initial';
  readonly anomalies: readonly Anomaly[];
}

export interface IngressBinding {
  readonly resolution: IngressResolution;
  readonly task_id: string | null;
  readonly parent_task_id: string | null;
  readonly continuation_anchor: ContinuationAnchor | null;
  readonly at: string;
}

export interface IngressRecordState {
  /** `recorded` until bound; `pending_disambiguation` is a legal state (Hermit 8.1.2), and may be bound again. */
  readonly status: 'recorded' | 'bound' | 'pending_disambiguation';
  readonly ingress_id: string;
  readonly conversation_id: string;
  readonly principal_id: string;
  readonly recorded_at: string;
  readonly binding: IngressBinding | null;
  readonly anomalies: readonly Anomaly[];
}

export type IngressState = NoIngress | IngressRecordState;

export function initialState(): IngressState {
  return { status: 'initial', anomalies: [] };
}

/** Resolutions that bind to a live target task (the others bind to none, or open one). */
export const TARGETED_RESOLUTIONS: readonly IngressResolution[] = ['control', 'approval', 'append_note'];
const TARGETED = TARGETED_RESOLUTIONS;
const NEW_TASK: readonly IngressResolution[] = ['fork_child', 'start_new_root'];

const isTerminal = (status: TaskStatus | undefined) => status !== undefined && TASK_TERMINAL_STATES.includes(status);

/** Why a binding is malformed for its outcome, or undefined. Shared by decide and evolve, so the log cannot hold a binding decide would refuse. */
export function bindingProblem(binding: {
  readonly resolution: IngressResolution;
  readonly task_id?: string | undefined;
  readonly parent_task_id?: string | undefined;
  readonly continuation_anchor?: ContinuationAnchor | undefined;
  readonly candidates?: readonly BindingCandidate[] | undefined;
}): string | undefined {
  const { resolution, task_id, parent_task_id, continuation_anchor, candidates = [] } = binding;
  if ((TARGETED.includes(resolution) || NEW_TASK.includes(resolution)) && task_id === undefined) return `${resolution} needs task_id (${TARGETED.includes(resolution) ? 'the target task' : 'the new task'})`;
  if (!TARGETED.includes(resolution) && !NEW_TASK.includes(resolution) && task_id !== undefined) return `${resolution} binds to no task`;
  if (resolution === 'fork_child' && parent_task_id === undefined) return 'fork_child needs parent_task_id';
  if (resolution !== 'fork_child' && parent_task_id !== undefined) return 'only fork_child names a parent task';
  if (resolution === 'pending_disambiguation' && candidates.length < 2) return 'pending_disambiguation lists the candidates it could not choose between (at least 2)';
  if (continuation_anchor !== undefined) {
    if (!NEW_TASK.includes(resolution)) return 'a continuation anchor opens a new task: only fork_child and start_new_root carry one';
    if (!isTerminal(continuation_anchor.outcome_status)) return 'a continuation anchor points at a terminal outcome (completed, failed, cancelled, rolled back)';
    if (continuation_anchor.anchor_task_id === task_id) return 'the anchor is the earlier task, not the new one';
  }
  return undefined;
}

export function decide(command: IngressBindingCommand, state: IngressState): IngressBindingEvent[] {
  commandNowMs(command);
  const at = command.metadata.now;
  switch (command.type) {
    case 'record-ingress':
      if (state.status !== 'initial') throw new KnowledgeError('KNOWLEDGE_INGRESS_ALREADY_RECORDED', `ingress ${state.ingress_id} is already recorded`);
      return emit(IngressBindingEvent, [{ type: 'ingress.recorded', data: { ...command.data, at } }]);
    case 'bind-ingress': {
      if (state.status === 'initial') throw new KnowledgeError('KNOWLEDGE_INGRESS_NOT_RECORDED', 'an ingress is recorded (record-ingress) before it is bound');
      if (state.status === 'bound') throw new KnowledgeError('KNOWLEDGE_INGRESS_ALREADY_BOUND', `ingress ${state.ingress_id} is already bound to ${state.binding?.resolution}`);
      const { continued_task_status, candidates = [], ...data } = command.data;
      // Hermit 8.1.1: a terminal task is never reopened by a follow-up; the follow-up starts a new task anchored on the outcome.
      if (TARGETED.includes(data.resolution) && isTerminal(continued_task_status)) {
        throw new KnowledgeError('KNOWLEDGE_INGRESS_TERMINAL_TASK', `task ${data.task_id} is ${continued_task_status}: bind as start_new_root or fork_child with a continuation anchor on it`, {
          details: { task_id: data.task_id, status: continued_task_status },
        });
      }
      if (data.resolution === 'fork_child' && isTerminal(continued_task_status) && data.continuation_anchor?.anchor_task_id !== data.parent_task_id) {
        throw new KnowledgeError('KNOWLEDGE_INGRESS_TERMINAL_TASK', `parent task ${data.parent_task_id} is ${continued_task_status}: the child carries a continuation anchor on it`);
      }
      const problem = bindingProblem({ ...data, candidates });
      if (problem !== undefined) throw new KnowledgeError('KNOWLEDGE_INGRESS_BINDING_INVALID', problem, { details: { resolution: data.resolution } });
      return emit(IngressBindingEvent, [{ type: 'ingress.bound', data: { ingress_id: state.ingress_id, ...data, candidates: [...candidates], at } }]);
    }
    default:
      return unknownCommand((command as { type?: unknown }).type, 'the ingress binding decider');
  }
}

export const evolve = totalEvolve<IngressState, IngressBindingEvent>(IngressBindingEvent, (state, event) => {
  if (event.type === 'ingress.recorded') {
    if (state.status !== 'initial') return undefined;
    const { ingress_id, conversation_id, principal_id, at } = event.data;
    return { status: 'recorded', ingress_id, conversation_id, principal_id, recorded_at: at, binding: null, anomalies: state.anomalies };
  }
  // Recorded first: a binding of an unrecorded or already bound ingress is not folded.
  if (state.status === 'initial' || state.status === 'bound' || event.data.ingress_id !== state.ingress_id || bindingProblem(event.data) !== undefined) return undefined;
  const { resolution, task_id, parent_task_id, continuation_anchor, at } = event.data;
  const binding: IngressBinding = { resolution, task_id: task_id ?? null, parent_task_id: parent_task_id ?? null, continuation_anchor: continuation_anchor ?? null, at };
  return { ...state, status: resolution === 'pending_disambiguation' ? 'pending_disambiguation' : 'bound', binding };
});

export const ingressBindingDecider: Decider<IngressBindingCommand, IngressBindingEvent, IngressState> = Object.freeze({ initialState, decide, evolve });
