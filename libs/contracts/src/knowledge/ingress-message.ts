import { z } from 'zod';
import { Id, Sha256Hex, Timestamp } from '../ids.js';
import { IngressResolution } from '../ingress-record.js';
import { LIMITS } from '../limits.js';
import { LongText, UnitInterval } from '../text.js';

/**
 * A free-form message (Hermit 8.1.2, 8.1.3; issue 17 "Ingress binding"): a
 * principal (an agent or a director) tells Writ something that is not an
 * action: a note, an answer to a question, a correction, a control word, or
 * plain chat. Ingress records it before anything else, then binds it (an
 * outcome and, where it has one, a task). Signed like the knowledge
 * requests: a compact EdDSA JWS whose `typ` names the kind.
 */
export const INGRESS_MESSAGE_JWS_TYPE = 'writ-ingress-message+jws';

/**
 * What the sender says the message is. It steers the outcome, never the
 * target: `control` binds as control, `chat` as chat_only, the others as
 * append_note on the task they are bound to.
 */
export const IngressMessageKind = z.enum(['note', 'answer', 'correction', 'control', 'chat']);
export type IngressMessageKind = z.infer<typeof IngressMessageKind>;

/**
 * What the sender signs (typ `writ-ingress-message+jws`). `message_id` is the
 * sender's own id of this message: sent again it is answered as the first
 * time (`duplicate: true`) and nothing is appended; the same id with another
 * text is refused. `explicit_task_ref` names the task it is about (it wins
 * over everything else); `reply_to_ref` names an earlier message of the same
 * conversation by its ingress_id (the task it was bound to is next in line).
 */
export const IngressMessageSubmission = z.strictObject({
  message_id: Id,
  conversation_id: Id,
  kind: IngressMessageKind,
  text: LongText,
  explicit_task_ref: Id.optional(),
  reply_to_ref: Id.optional(),
  fork: z
    .literal(true)
    .optional()
    .describe('A note, correction or answer that asks for a child task of the task it is about (fork_child: a new task of that task\'s owner, its parent named, its working state not inherited) instead of a note on it.'),
  sent_by: Id,
  sent_at: Timestamp,
});
export type IngressMessageSubmission = z.infer<typeof IngressMessageSubmission>;

/** `writ.qry.ingress.submit-message` (request/reply): the signed message. */
export const SubmitIngressMessage = z.strictObject({ message_jws: z.string().min(1).max(LIMITS.rawMessage) });
export type SubmitIngressMessage = z.infer<typeof SubmitIngressMessage>;

/** Ingress's answer: where the message was bound (a refusal travels as `{ code, message }`, and then nothing was recorded). */
export const IngressMessageReply = z.strictObject({
  ingress_id: Id,
  conversation_id: Id,
  principal_id: Id,
  resolution: IngressResolution,
  task_id: Id.optional(),
  /** The tasks it could not choose between (pending_disambiguation), or the one it chose among. */
  candidates: z.array(Id).max(LIMITS.shortListItems),
  rationale: z.string().max(LIMITS.text),
  confidence: UnitInterval.optional(),
  /** SHA-256 of the text as stored (secret-looking values redacted): the content address of its artifact. */
  text_sha256: Sha256Hex,
  /** Whether the log already held this message (the same message_id sent again). */
  duplicate: z.boolean(),
});
export type IngressMessageReply = z.infer<typeof IngressMessageReply>;
