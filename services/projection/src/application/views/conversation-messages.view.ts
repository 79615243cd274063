import type { ConversationMessageRow } from '@writ/contracts';
import { IngressBindingEvent, bindingProblem } from '@writ/kernel';
import { conversationStreamId } from '@writ/runtime';
import { occurredAt, type ProjectedEvent } from '../projected-event.js';
import type { Locator, View } from './view.js';

/**
 * The session history (issue 17, Hermit 15.8, exit criterion 13): one row per
 * free-form message, from its `ingress.recorded` and `ingress.bound` alone,
 * in conversation order. It is a projection and a convenience: nothing in
 * Writ reads it to decide anything (ingress binds from the log, context packs
 * are compiled from the log). It holds the text's hash; the text is the
 * artifact bucket's, read at request time. A record counts only on its
 * sender's conversation stream (`conversationStreamId`), a binding only on
 * its record's.
 */
export type { ConversationMessageRow };

function locate(event: ProjectedEvent): Locator | undefined {
  if (event.aggregate.type !== 'ingress' || (event.envelope.event_type !== 'ingress.recorded' && event.envelope.event_type !== 'ingress.bound')) return undefined;
  const id = event.envelope.payload['ingress_id'];
  return typeof id === 'string' ? { ingress_id: id } : undefined;
}

function fold(row: ConversationMessageRow | undefined, event: ProjectedEvent): ConversationMessageRow | undefined {
  const parsed = IngressBindingEvent.safeParse({ type: event.envelope.event_type, data: event.envelope.payload });
  if (!parsed.success) return row;
  const at = occurredAt(event);
  if (parsed.data.type === 'ingress.recorded') {
    // Recorded once: the first record is the message; and only on its sender's own conversation stream.
    const data = parsed.data.data;
    if (row !== undefined || event.aggregate.id !== conversationStreamId(data.principal_id, data.conversation_id)) return row;
    return {
      ingress_id: data.ingress_id,
      stream_id: event.aggregate.id,
      principal_id: data.principal_id,
      conversation_id: data.conversation_id,
      conversation_seq: event.envelope.task_seq,
      source_channel: data.source_channel,
      text_sha256: data.text_sha256,
      explicit_task_ref: data.explicit_task_ref ?? null,
      reply_to_ref: data.reply_to_ref ?? null,
      recorded_at: at,
      resolution: null,
      task_id: null,
      candidates: [],
      rationale: null,
      confidence: null,
      bound_at: null,
    };
  }
  const data = parsed.data.data;
  // The decider's rules: bound after its record, on the record's stream, once (pending may be bound again), well-formed.
  if (row === undefined || row.stream_id !== event.aggregate.id || (row.resolution !== null && row.resolution !== 'pending_disambiguation') || bindingProblem(data) !== undefined) return row;
  return {
    ...row,
    resolution: data.resolution,
    task_id: data.task_id ?? null,
    candidates: data.candidates.flatMap((candidate) => (candidate.task_id === undefined ? [] : [candidate.task_id])),
    rationale: data.rationale,
    confidence: data.confidence ?? null,
    bound_at: at,
  };
}

export const conversationMessagesView: View<ConversationMessageRow> = {
  name: 'conversation_messages',
  primaryKey: ['ingress_id'],
  published: false,
  topicId: (row) => row.ingress_id,
  locate,
  fold,
};
