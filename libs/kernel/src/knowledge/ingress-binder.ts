import { LIMITS, TASK_TERMINAL_STATES, type ContinuationAnchor, type IngressMessageKind, type IngressResolution, type TaskStatus } from '@writ/contracts';
import { emptyFocusView, evolveFocus, focusKey, type FocusLogEntry } from './conversation-focus.projection.js';
import { TARGETED_RESOLUTIONS } from './ingress-binding.decider.js';
import type { BindingCandidate } from './ingress-binding.events.js';

/** A task as the binder weighs it: its id and its status as the task's own log says now (never a projection). */
export interface BindingTask {
  readonly task_id: string;
  readonly status: TaskStatus;
  /** The task's approvals still pending, by id, as its log says now: an answer may be about one of them. */
  readonly pending_approvals?: readonly string[] | undefined;
  /** An ended task's outcome as its log says it (a follow-up's continuation anchor carries it). */
  readonly outcome?: { readonly summary: string; readonly artifact_refs: readonly string[] } | undefined;
}

/**
 * What the binder knows about one recorded message. The caller reads every
 * task here from the log and has already refused a message naming a task the
 * sender may not act on (explicit_task_ref, or the task of the message it
 * replies to): the binder chooses, it does not authorize.
 */
export interface BindingInput {
  readonly kind: IngressMessageKind;
  /** The task `explicit_task_ref` names. */
  readonly explicit?: BindingTask | undefined;
  /** The earlier message `reply_to_ref` names, and the task it was bound to (if any). */
  readonly replyTo?: { readonly ingress_id: string; readonly task?: BindingTask | undefined } | undefined;
  /** The conversation's focus task (`conversationTasks`), as its log says now. */
  readonly focus?: BindingTask | undefined;
  /** Every other task this conversation's earlier messages were bound to, as their logs say now. */
  readonly others: readonly BindingTask[];
  /** The id of the task this message starts if it is a follow-up on an ended outcome or a fork (derived from the ingress id, so a redelivery starts the same one). */
  readonly newTaskId: string;
  /** The sender asked for a child task of the task it is about (fork_child) instead of a note on it. */
  readonly fork?: boolean | undefined;
}

/** The outcome the binder chose: the `bind-ingress` command's data but for who binds. */
export interface BindingChoice {
  readonly resolution: IngressResolution;
  readonly task_id?: string;
  readonly continued_task_status?: TaskStatus;
  /** start_new_root: the ended outcome the new task continues. */
  readonly continuation_anchor?: ContinuationAnchor;
  /** fork_child: the live task the new one is a child of. */
  readonly parent_task_id?: string;
  readonly candidates: readonly BindingCandidate[];
  readonly rationale: string;
  readonly confidence: number;
}

const isTerminal = (status: TaskStatus) => TASK_TERMINAL_STATES.includes(status);

/**
 * Binds one free-form message (Hermit 8.1.3's priority, within what v1 can
 * do): chat is chat_only; otherwise the target is the explicit task, else the
 * task of the message replied to, else (for an answer) the one task of the
 * conversation with a pending approval, else the conversation's focus task; a
 * live target gets `approval` (an answer while the target has a pending
 * approval), `control` (kind control) or `append_note`. Without a target,
 * the conversation's one open task is chosen; two or more open tasks, or two
 * or more with a pending approval for an answer, are `pending_disambiguation`
 * (Hermit 8.1.2: the kernel never pretends a unique binding exists), none is
 * chat_only. An `approval` binding records what the message answers; it
 * resolves nothing (only a director's signed resolution does).
 *
 * A terminal target is never reopened (Hermit 8.1.1): a note, correction
 * or answer naming one (explicit ref or reply) is a follow-up on its outcome
 * and starts a new task, `start_new_root` with a continuation anchor on the
 * ended one (`newTaskId`, which the caller then creates); a control word on
 * it starts nothing and is chat_only, saying why. A note, correction or
 * answer that asks for a fork (`fork`) and lands on a live task is
 * `fork_child`: a new task (`newTaskId`) whose parent is that task.
 * Pure and deterministic: the same input gives the same choice.
 */
export function chooseBinding(input: BindingInput): BindingChoice {
  const choice = choose(input);
  // A fork asks for a child of the live task the message lands on, in place of a note, control or approval there.
  if (input.fork !== true || !FOLLOW_UP_KINDS.includes(input.kind) || choice.task_id === undefined || !TARGETED_RESOLUTIONS.includes(choice.resolution)) return choice;
  return {
    resolution: 'fork_child',
    task_id: input.newTaskId,
    parent_task_id: choice.task_id,
    candidates: [{ resolution: 'fork_child', task_id: input.newTaskId, score: choice.confidence }],
    rationale: `a fork of task ${choice.task_id} (${choice.rationale}): the sender asked for a child task of it, which starts as task ${input.newTaskId}`,
    confidence: choice.confidence,
  };
}

function choose(input: BindingInput): BindingChoice {
  if (input.kind === 'chat') return { resolution: 'chat_only', candidates: [], rationale: 'the sender marked it chat: it belongs to no task', confidence: 1 };
  const named =
    input.explicit !== undefined
      ? { task: input.explicit, why: `explicit task ref ${input.explicit.task_id}`, confidence: 1 }
      : input.replyTo?.task !== undefined
        ? { task: input.replyTo.task, why: `reply to ${input.replyTo.ingress_id}, bound to task ${input.replyTo.task.task_id}`, confidence: 0.9 }
        : undefined;
  if (named === undefined && input.kind === 'answer') {
    const awaiting = distinctOpen([...(input.focus === undefined ? [] : [input.focus]), ...input.others]).filter(hasPendingApproval);
    if (awaiting.length === 1) return approvalBinding(awaiting[0]!, `the conversation's only task with a pending approval`, 0.85);
    if (awaiting.length >= 2) return pending(awaiting, 'approval', `an answer, no explicit task or reply, and ${awaiting.length} tasks of the conversation with a pending approval: name one (explicit task ref or a reply)`);
  }
  const target =
    named ??
    (input.focus !== undefined && !isTerminal(input.focus.status) ? { task: input.focus, why: `the conversation's focus task ${input.focus.task_id}`, confidence: 0.8 } : undefined);
  if (target !== undefined) {
    if (isTerminal(target.task.status)) {
      if (FOLLOW_UP_KINDS.includes(input.kind) && named !== undefined) return startNewRoot(target.task, target.why, input.newTaskId);
      return {
        resolution: 'chat_only',
        candidates: [],
        rationale: `${target.why} is ${target.task.status}: a terminal task is never reopened; the message is kept in the conversation and a new request opens a new task`,
        confidence: target.confidence,
      };
    }
    if (input.kind === 'answer' && hasPendingApproval(target.task)) return approvalBinding(target.task, target.why, target.confidence);
    const resolution: IngressResolution = input.kind === 'control' ? 'control' : 'append_note';
    return {
      resolution,
      task_id: target.task.task_id,
      continued_task_status: target.task.status,
      candidates: [{ resolution, task_id: target.task.task_id, score: target.confidence }],
      rationale: `${resolution} on ${target.why}`,
      confidence: target.confidence,
    };
  }
  const open = distinctOpen(input.others);
  const resolution: IngressResolution = input.kind === 'control' ? 'control' : 'append_note';
  if (open.length === 1) {
    const only = open[0]!;
    return {
      resolution,
      task_id: only.task_id,
      continued_task_status: only.status,
      candidates: [{ resolution, task_id: only.task_id, score: 0.6 }],
      rationale: `no explicit task, reply or focus: ${only.task_id} is the conversation's only open task`,
      confidence: 0.6,
    };
  }
  if (open.length >= 2) return pending(open, resolution, `no explicit task, reply or focus, and ${open.length} open tasks in the conversation: name one (explicit task ref or a reply)`);
  return { resolution: 'chat_only', candidates: [], rationale: 'no explicit task, reply, focus or open task in the conversation: it belongs to no task', confidence: 1 };
}

/** Kinds that ask for more work: on an ended outcome they start a new task; a control word or chat does not. */
const FOLLOW_UP_KINDS: readonly IngressMessageKind[] = ['note', 'correction', 'answer'];

/** Hermit 8.1.1: a follow-up on a terminal outcome starts a new task anchored on it, never a reopening. */
function startNewRoot(ended: BindingTask, why: string, newTaskId: string): BindingChoice {
  return {
    resolution: 'start_new_root',
    task_id: newTaskId,
    continuation_anchor: {
      anchor_task_id: ended.task_id,
      anchor_kind: 'completed_outcome',
      selection_reason: why,
      outcome_status: ended.status,
      outcome_summary: ended.outcome?.summary ?? `task ${ended.task_id} ${ended.status}`,
      source_artifact_refs: [...(ended.outcome?.artifact_refs ?? [])].slice(0, LIMITS.listItems),
    },
    candidates: [{ resolution: 'start_new_root', task_id: newTaskId, score: 1 }],
    rationale: `${why} is ${ended.status}: a terminal task is never reopened; the follow-up starts task ${newTaskId}, anchored on that outcome`,
    confidence: 1,
  };
}

const hasPendingApproval = (task: BindingTask) => !isTerminal(task.status) && (task.pending_approvals?.length ?? 0) > 0;

/** The live tasks among `tasks`, each once, in id order (a deterministic candidate list). */
function distinctOpen(tasks: readonly BindingTask[]): BindingTask[] {
  const seen = new Set<string>();
  return tasks.filter((task) => !isTerminal(task.status) && !seen.has(task.task_id) && seen.add(task.task_id) !== undefined).sort((a, b) => a.task_id.localeCompare(b.task_id));
}

function approvalBinding(task: BindingTask, why: string, confidence: number): BindingChoice {
  const approvals = [...(task.pending_approvals ?? [])].sort().slice(0, LIMITS.shortListItems);
  return {
    resolution: 'approval',
    task_id: task.task_id,
    continued_task_status: task.status,
    candidates: [{ resolution: 'approval', task_id: task.task_id, score: confidence }],
    rationale: `an answer on ${why}, which awaits approval ${approvals.join(', ')}: recorded as what the sender says about it (a director's signed resolution decides it)`,
    confidence,
  };
}

/** Hermit 8.1.2: two or more candidates are listed, never one picked for the sender. */
function pending(tasks: readonly BindingTask[], resolution: IngressResolution, rationale: string): BindingChoice {
  const listed = tasks.slice(0, LIMITS.shortListItems);
  const score = Math.round((1 / listed.length) * 1000) / 1000;
  return { resolution: 'pending_disambiguation', candidates: listed.map((task) => ({ resolution, task_id: task.task_id, score })), rationale, confidence: score };
}

/** A message left `pending_disambiguation`, as its binding listed the candidates. */
export interface PendingMessage {
  readonly ingress_id: string;
  readonly candidates: readonly BindingCandidate[];
}

/**
 * The binding a pending message gets when a reply to it names one of its
 * candidates (Hermit 8.1.2: ambiguity is a legal state until the sender
 * resolves it): the reply bound to a live task by its explicit ref, and that
 * task among the pending message's candidates, binds the pending message to
 * it with the resolution its candidate had. Anything else leaves it pending
 * (a reply naming no task, or a task it was not about). Pure.
 */
export function disambiguation(
  pending: PendingMessage,
  reply: { readonly ingress_id: string; readonly explicit: boolean; readonly choice: Pick<BindingChoice, 'resolution' | 'task_id' | 'continued_task_status'> },
): BindingChoice | undefined {
  const { choice } = reply;
  if (!reply.explicit || choice.task_id === undefined || !TARGETED_RESOLUTIONS.includes(choice.resolution)) return undefined;
  const candidate = pending.candidates.find((c) => c.task_id === choice.task_id);
  if (candidate === undefined || !TARGETED_RESOLUTIONS.includes(candidate.resolution)) return undefined;
  return {
    resolution: candidate.resolution,
    task_id: choice.task_id,
    ...(choice.continued_task_status === undefined ? {} : { continued_task_status: choice.continued_task_status }),
    candidates: [{ resolution: candidate.resolution, task_id: choice.task_id, score: 1 }],
    rationale: `disambiguated by ${reply.ingress_id}, a reply naming task ${choice.task_id}, one of its candidates`,
    confidence: 1,
  };
}

/** The tasks one principal's conversation points at, from its ingress records and bindings alone. */
export interface ConversationTasks {
  /** The focus task as the bindings set it (its status is for the caller to read). */
  readonly focus_task_id: string | null;
  /** Every other task a binding of this conversation named, first-bound first. */
  readonly others: readonly string[];
  /** Ingress id → the task it was bound to (null: bound to none, or still pending). */
  readonly boundTo: Readonly<Record<string, string | null>>;
}

/**
 * Folds a conversation's ingress stream (its `ingress.recorded` and
 * `ingress.bound` events, as FocusLogEntry) with the focus projection's own
 * rules, so the binder and the focus view cannot disagree on what the
 * bindings say. Task lifecycle events are not in this stream: the caller
 * reads each task's status from its log.
 */
export function conversationTasks(entries: readonly FocusLogEntry[], principalId: string, conversationId: string): ConversationTasks {
  let view = emptyFocusView();
  const boundTo: Record<string, string | null> = {};
  const named: string[] = [];
  for (const entry of entries) {
    const before = view.skipped;
    view = evolveFocus(view, entry);
    const event = entry.event as { type?: unknown; data?: { ingress_id?: unknown; task_id?: unknown; resolution?: unknown } } | null;
    // Only what the fold accepted: a forged, malformed or second binding names no task here either.
    if (view.skipped !== before || event?.type !== 'ingress.bound' || typeof event.data?.ingress_id !== 'string') continue;
    const sender = view.ingress[event.data.ingress_id];
    if (sender?.principal_id !== principalId || sender.conversation_id !== conversationId) continue;
    const taskId = typeof event.data.task_id === 'string' ? event.data.task_id : null;
    boundTo[event.data.ingress_id] = taskId;
    if (taskId !== null && !named.includes(taskId)) named.push(taskId);
  }
  const focus = view.focus[focusKey(principalId, conversationId)]?.focus_task_id ?? null;
  return { focus_task_id: focus, others: named.filter((id) => id !== focus), boundTo };
}
