import type { ConversationFocusRow } from '@writ/contracts';
import { IngressBindingEvent, emptyFocusView, evolveFocus, focusKey, type ConversationFocusView } from '@writ/kernel';
import { conversationStreamId } from '@writ/runtime';
import { occurredAt, type ProjectedEvent } from '../projected-event.js';
import type { Locator, View } from './view.js';

/**
 * Conversation focus (issue 17, Hermit 13.6): one row per principal and
 * conversation, folded by the kernel's own `evolveFocus` (the rules ingress's
 * binder reads the log with), from `ingress.recorded` and `ingress.bound`
 * alone: a stream keeps its first sender, a binding counts only for a
 * message recorded on its stream and not bound yet, a malformed one moves
 * nothing. Which focused task has ended is the tasks view's to say, at read
 * (`ReadService.focus`): a task's end is not an event of the conversation,
 * and one task may be the focus of several rows.
 *
 * The row keeps the messages that may still be bound (recorded and unbound,
 * or pending disambiguation), not every message: that is the history view's.
 */
export type { ConversationFocusRow };

function locate(event: ProjectedEvent): Locator | undefined {
  if (event.aggregate.type !== 'ingress') return undefined;
  const { event_type: type, payload } = event.envelope;
  if (type === 'ingress.recorded') {
    const { principal_id: principal, conversation_id: conversation } = payload;
    return typeof principal === 'string' && typeof conversation === 'string' ? { principal_id: principal, conversation_id: conversation } : undefined;
  }
  return type === 'ingress.bound' ? { stream_id: event.aggregate.id } : undefined;
}

/** The kernel's view of one stream, as this row holds it. */
function viewOf(row: ConversationFocusRow): ConversationFocusView {
  const { principal_id, conversation_id, stream_id } = row;
  const open = [...row.unbound_ingress_ids, ...row.pending_ingress_ids];
  const focus =
    row.last_ingress_id === null
      ? {}
      : {
          [focusKey(principal_id, conversation_id)]: {
            principal_id,
            conversation_id,
            focus_task_id: row.bound_focus_task_id,
            last_outcome_task_id: null,
            pending_ingress_ids: row.pending_ingress_ids,
            last_ingress_id: row.last_ingress_id,
          },
        };
  return {
    ...emptyFocusView(),
    focus,
    ingress: Object.fromEntries(open.map((id) => [id, { principal_id, conversation_id, stream: stream_id, bound: false }])),
    streams: { [stream_id]: { principal_id, conversation_id } },
  };
}

function fold(row: ConversationFocusRow | undefined, event: ProjectedEvent): ConversationFocusRow | undefined {
  const parsed = IngressBindingEvent.safeParse({ type: event.envelope.event_type, data: event.envelope.payload });
  if (!parsed.success) return row;
  const entry = { entity_type: 'ingress', entity_id: event.aggregate.id, event: parsed.data };
  if (parsed.data.type === 'ingress.recorded') {
    // A record counts only on its sender's own conversation stream (ingress derives it from the verified signer).
    if (event.aggregate.id !== conversationStreamId(parsed.data.data.principal_id, parsed.data.data.conversation_id)) return row;
    if (row?.unbound_ingress_ids.includes(parsed.data.data.ingress_id) === true || row?.pending_ingress_ids.includes(parsed.data.data.ingress_id) === true) return row;
  }
  if (parsed.data.type === 'ingress.bound' && row === undefined) return row;
  const before = row === undefined ? emptyFocusView() : viewOf(row);
  const after = evolveFocus(before, entry);
  if (after.skipped !== before.skipped) return row;
  const at = occurredAt(event);
  const { principal_id, conversation_id } = after.streams[event.aggregate.id]!;
  const focus = after.focus[focusKey(principal_id, conversation_id)];
  const unbound = Object.entries(after.ingress)
    .filter(([id, sender]) => !sender.bound && !(focus?.pending_ingress_ids ?? []).includes(id))
    .map(([id]) => id);
  return {
    principal_id,
    conversation_id,
    stream_id: event.aggregate.id,
    bound_focus_task_id: focus?.focus_task_id ?? null,
    pending_ingress_ids: [...(focus?.pending_ingress_ids ?? [])],
    unbound_ingress_ids: unbound,
    last_ingress_id: focus?.last_ingress_id ?? null,
    message_count: (row?.message_count ?? 0) + (parsed.data.type === 'ingress.recorded' ? 1 : 0),
    updated_at: at,
  };
}

export const conversationFocusView: View<ConversationFocusRow> = {
  name: 'conversation_focus',
  primaryKey: ['principal_id', 'conversation_id'],
  published: false,
  topicId: (row) => `${row.principal_id}.${row.conversation_id}`,
  locate,
  fold,
};
