import type { IngressResolution } from '@writ/contracts';
import { bindingProblem } from './ingress-binding.decider.js';
import { IngressBindingEvent } from './ingress-binding.events.js';

/** One event of the log as the focus projection reads it: its stream and the event (`{ type, data }`). */
export interface FocusLogEntry {
  readonly entity_type: string;
  readonly entity_id: string;
  readonly event: unknown;
}

export interface PrincipalFocus {
  readonly principal_id: string;
  readonly conversation_id: string;
  /** At most one implicit focus task per principal and conversation (Hermit 13.6); null when none. */
  readonly focus_task_id: string | null;
  /** The focused task that last reached a terminal state: what a follow-up anchors on (Hermit 8.1.1). */
  readonly last_outcome_task_id: string | null;
  /** Ingress records still pending disambiguation, in log order. */
  readonly pending_ingress_ids: readonly string[];
  readonly last_ingress_id: string;
}

export interface ConversationFocusView {
  /** Keyed `<principal_id>/<conversation_id>`; a plain object so the view serializes as it is. */
  readonly focus: Readonly<Record<string, PrincipalFocus>>;
  /**
   * Who sent each recorded ingress (the binding event names only the ingress), the stream it was
   * recorded on (its binding must be on the same one), and whether it is bound for good.
   */
  readonly ingress: Readonly<Record<string, { readonly principal_id: string; readonly conversation_id: string; readonly stream: string; readonly bound: boolean }>>;
  /**
   * The principal and conversation each ingress stream belongs to, fixed by its first record: a
   * stream holds one ingress (`<id>`) or one principal's conversation (`cnv-…`, issue 17), never two senders.
   */
  readonly streams: Readonly<Record<string, { readonly principal_id: string; readonly conversation_id: string }>>;
  /** Entries the projection could not read (malformed, or a binding of an unrecorded ingress). */
  readonly skipped: number;
}

export function emptyFocusView(): ConversationFocusView {
  return { focus: {}, ingress: {}, streams: {}, skipped: 0 };
}

export const focusKey = (principalId: string, conversationId: string) => `${principalId}/${conversationId}`;

/** Bindings that move focus: the user turned to a task, or opened one. Approvals, chat and ambiguity leave it where it is. */
const MOVES_FOCUS: readonly IngressResolution[] = ['control', 'append_note', 'fork_child', 'start_new_root'];
const TERMINAL_TASK_EVENTS: readonly string[] = ['task.completed', 'task.failed', 'task.cancelled', 'task.rolled_back'];

/**
 * Folds one log entry into the conversation focus view (Hermit 13.6). Pure
 * and total: rebuilt from ingress records, bindings and task lifecycle
 * events alone. Background progress never steals focus: only a binding
 * moves it, and a focused task reaching a terminal state releases it.
 */
export function evolveFocus(view: ConversationFocusView, entry: FocusLogEntry): ConversationFocusView {
  if (entry.entity_type === 'task') {
    const type = (entry.event as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !TERMINAL_TASK_EVENTS.includes(type)) return view;
    let changed = false;
    const focus = Object.fromEntries(
      Object.entries(view.focus).map(([key, value]) => {
        if (value.focus_task_id !== entry.entity_id) return [key, value];
        changed = true;
        return [key, { ...value, focus_task_id: null, last_outcome_task_id: entry.entity_id }];
      }),
    );
    return changed ? { ...view, focus } : view;
  }
  if (entry.entity_type !== 'ingress') return view;
  const parsed = IngressBindingEvent.safeParse(entry.event);
  if (!parsed.success) return { ...view, skipped: view.skipped + 1 };
  const event = parsed.data;
  if (event.type === 'ingress.recorded') {
    const { ingress_id, principal_id, conversation_id } = event.data;
    const owner = view.streams[entry.entity_id];
    // One ingress is recorded once; a record naming another sender than its stream's is not theirs to fold.
    if (view.ingress[ingress_id] !== undefined) return { ...view, skipped: view.skipped + 1 };
    if (owner !== undefined && (owner.principal_id !== principal_id || owner.conversation_id !== conversation_id)) return { ...view, skipped: view.skipped + 1 };
    return {
      ...view,
      ingress: { ...view.ingress, [ingress_id]: { principal_id, conversation_id, stream: entry.entity_id, bound: false } },
      streams: owner === undefined ? { ...view.streams, [entry.entity_id]: { principal_id, conversation_id } } : view.streams,
    };
  }
  const sender = view.ingress[event.data.ingress_id];
  // The decider's rules hold here too: a binding of an unrecorded or already bound ingress, one on another stream than
  // its record, or a malformed one, moves nothing.
  if (sender === undefined || sender.bound || sender.stream !== entry.entity_id || bindingProblem(event.data) !== undefined) return { ...view, skipped: view.skipped + 1 };
  const key = focusKey(sender.principal_id, sender.conversation_id);
  const current: PrincipalFocus = view.focus[key] ?? {
    principal_id: sender.principal_id,
    conversation_id: sender.conversation_id,
    focus_task_id: null,
    last_outcome_task_id: null,
    pending_ingress_ids: [],
    last_ingress_id: event.data.ingress_id,
  };
  const { resolution, task_id, ingress_id } = event.data;
  const pending = current.pending_ingress_ids.filter((id) => id !== ingress_id);
  const next: PrincipalFocus = {
    ...current,
    focus_task_id: MOVES_FOCUS.includes(resolution) && task_id !== undefined ? task_id : current.focus_task_id,
    pending_ingress_ids: resolution === 'pending_disambiguation' ? [...pending, ingress_id] : pending,
    last_ingress_id: ingress_id,
  };
  const ingress = { ...view.ingress, [ingress_id]: { ...sender, bound: resolution !== 'pending_disambiguation' } };
  return { ...view, ingress, focus: { ...view.focus, [key]: next } };
}

/** The focus view rebuilt from the log: folding the same entries always gives an equal view. */
export function foldConversationFocus(entries: readonly FocusLogEntry[]): ConversationFocusView {
  return entries.reduce(evolveFocus, emptyFocusView());
}
