import { z } from 'zod';
import { Id, Name, Sha256Hex, Timestamp } from '../ids.js';
import { IngressResolution } from '../ingress-record.js';
import { LIMITS } from '../limits.js';
import { UnitInterval } from '../text.js';

/**
 * The projection's conversation views (issue 17, Hermit 13.6, 15.8): folded
 * from ingress's `ingress.recorded` / `ingress.bound` events and nothing
 * else, rebuildable, and never read to decide anything (ingress binds from
 * the log). Not published on `<root>.proj.>`: a conversation is its
 * principal's, and a dashboard subscription would see every principal's.
 */

/** One principal's focus in one conversation (`GET /v1/focus`). */
export const ConversationFocusRow = z.strictObject({
  principal_id: Id,
  conversation_id: Id,
  /** The stream ingress records the conversation on (`writ.evt.ingress.cnv-…`). */
  stream_id: Id,
  /** The task the bindings focused (Hermit 13.6), null when none; ended tasks are released at read (`focus_task_id` below). */
  bound_focus_task_id: Id.nullable(),
  /** Messages still pending disambiguation, in log order. */
  pending_ingress_ids: z.array(Id),
  /** Recorded and not bound yet (a crash between the two; ingress binds them on redelivery). */
  unbound_ingress_ids: z.array(Id),
  last_ingress_id: Id.nullable(),
  message_count: z.int().min(0),
  updated_at: Timestamp,
});
export type ConversationFocusRow = z.infer<typeof ConversationFocusRow>;

/** A focus as read: the row, with the focused task released when the tasks view says it ended. */
export const ConversationFocus = ConversationFocusRow.extend({
  focus_task_id: Id.nullable(),
  /** The focused task when it has ended: what a follow-up anchors on (Hermit 8.1.1). */
  last_outcome_task_id: Id.nullable(),
});
export type ConversationFocus = z.infer<typeof ConversationFocus>;

export const ConversationFocusList = z.strictObject({ principal_id: Id, focus: z.array(ConversationFocus) });
export type ConversationFocusList = z.infer<typeof ConversationFocusList>;

/** One message of a conversation and where it was bound (`GET /v1/conversations/<id>/history`): the session history is this projection. */
export const ConversationMessageRow = z.strictObject({
  ingress_id: Id,
  stream_id: Id,
  principal_id: Id,
  conversation_id: Id,
  /** Its record's position in the conversation stream: the history's order. */
  conversation_seq: z.int().min(1),
  source_channel: Name,
  /** The text's content address in the artifact bucket (secret-looking values were redacted before it was stored). */
  text_sha256: Sha256Hex,
  explicit_task_ref: z.string().max(LIMITS.ref).nullable(),
  reply_to_ref: z.string().max(LIMITS.ref).nullable(),
  recorded_at: Timestamp,
  /** null until bound. */
  resolution: IngressResolution.nullable(),
  task_id: Id.nullable(),
  candidates: z.array(Id),
  rationale: z.string().max(LIMITS.text).nullable(),
  confidence: UnitInterval.nullable(),
  bound_at: Timestamp.nullable(),
});
export type ConversationMessageRow = z.infer<typeof ConversationMessageRow>;

export const ConversationHistory = z.strictObject({
  principal_id: Id,
  conversation_id: Id,
  messages: z.array(ConversationMessageRow.extend({ text: z.string().nullable().describe('The stored text, null when the artifact bucket does not hold it.') })),
});
export type ConversationHistory = z.infer<typeof ConversationHistory>;
