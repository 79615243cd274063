import { randomUUID } from 'node:crypto';
import { COMMANDS, ConversationFocusList, ConversationHistory, Id, IngressMessageKind, IngressMessageReply, LongText, parseContract } from '@writ/contracts';
import { SIGNED_REQUESTS } from '@writ/runtime';
import type { CliIo, Connection } from '../cli-io.js';
import { cell } from '../format.js';
import type { WritApi } from '../http-api.js';
import { directorSigner, sendSignedRequest } from '../signed-request.js';

export interface SayOptions {
  /** Path of the sender's PRIVATE JWK. */
  readonly key: string;
  readonly principal: string;
  readonly conversation: string;
  readonly kind?: string;
  readonly task?: string;
  readonly replyTo?: string;
  /** Ask for a child task of the live task the message lands on (fork_child). */
  readonly fork?: boolean;
  /** The sender's id of this message (default a fresh `m-<uuid>`): send it again to retry without a second record. */
  readonly messageId?: string;
  readonly json?: boolean;
}

/**
 * `writ say <text> --conversation <id> [--kind k] [--task t] [--reply-to ingress] [--fork]`:
 * signs an IngressMessageSubmission (typ `writ-ingress-message+jws`) and sends
 * it to `<root>.qry.ingress.submit-message`. Ingress records it first, then
 * binds it (control, append_note, chat_only, pending_disambiguation, ...);
 * the answer says where. A refusal (INGRESS_MESSAGE_TASK_UNKNOWN,
 * _REPLY_UNKNOWN, _REUSED, _STALE, ...) is the exit error, and nothing was recorded.
 */
export async function say(text: string, options: SayOptions, conn: Connection, io: CliIo): Promise<IngressMessageReply> {
  const fields = {
    message_id: parseContract('--message-id', Id, options.messageId ?? `m-${randomUUID()}`),
    conversation_id: parseContract('--conversation', Id, options.conversation),
    kind: parseContract('--kind', IngressMessageKind, options.kind ?? 'note'),
    text: parseContract('text', LongText, text),
    ...(options.task === undefined ? {} : { explicit_task_ref: parseContract('--task', Id, options.task) }),
    ...(options.replyTo === undefined ? {} : { reply_to_ref: parseContract('--reply-to', Id, options.replyTo) }),
    ...(options.fork === true ? { fork: true as const } : {}),
  };
  const signer = await directorSigner(io, options.key, options.principal);
  const jws = await signer.sign(SIGNED_REQUESTS.ingressMessage, fields);
  const reply = await sendSignedRequest(conn, COMMANDS.ingressSubmitMessage, { message_jws: jws }, IngressMessageReply, 'IngressMessageReply');
  if (options.json === true) {
    io.stdout(JSON.stringify(reply));
    return reply;
  }
  const where = reply.task_id === undefined ? '' : ` task ${cell(reply.task_id)}`;
  const candidates = reply.resolution === 'pending_disambiguation' ? ` between ${reply.candidates.join(', ')}` : '';
  io.stdout(`recorded ${cell(reply.ingress_id)}, bound ${reply.resolution}${where}${candidates}: ${cell(reply.rationale, 200)}${reply.duplicate ? ' [already recorded]' : ''}`);
  return reply;
}

/** `writ focus [--of <principal>]`: the focus in each conversation (GET /v1/focus): a projection, never what ingress binds from. */
export async function focus(options: { readonly of?: string; readonly json?: boolean }, api: WritApi, io: CliIo): Promise<ConversationFocusList> {
  const of = options.of === undefined ? undefined : parseContract('--of', Id, options.of);
  const list = await api.get('/v1/focus', ConversationFocusList, { principal_id: of });
  if (options.json === true) {
    io.stdout(JSON.stringify(list));
    return list;
  }
  if (list.focus.length === 0) io.stdout(`${list.principal_id} has no conversation`);
  for (const row of list.focus) {
    const focused = row.focus_task_id ?? (row.last_outcome_task_id === null ? '(none)' : `(none; last outcome ${row.last_outcome_task_id})`);
    const pending = row.pending_ingress_ids.length === 0 ? '' : `, pending disambiguation: ${row.pending_ingress_ids.join(', ')}`;
    io.stdout(`${cell(row.conversation_id)} focus ${cell(focused)} (${row.message_count} message(s)${pending})`);
  }
  return list;
}

/** `writ history <conversation> [--of <principal>]`: the conversation's messages and where each was bound (GET /v1/conversations/<id>/history). */
export async function history(conversationArg: string, options: { readonly of?: string; readonly json?: boolean }, api: WritApi, io: CliIo): Promise<ConversationHistory> {
  const conversation = parseContract('conversation id', Id, conversationArg);
  const of = options.of === undefined ? undefined : parseContract('--of', Id, options.of);
  const page = await api.get(`/v1/conversations/${conversation}/history`, ConversationHistory, { principal_id: of });
  if (options.json === true) {
    io.stdout(JSON.stringify(page));
    return page;
  }
  if (page.messages.length === 0) io.stdout(`${page.principal_id} has no message in conversation ${conversation}`);
  for (const message of page.messages) {
    const bound = message.resolution === null ? 'not bound yet' : `${message.resolution}${message.task_id === null ? '' : ` ${message.task_id}`}`;
    io.stdout(`#${message.conversation_seq} ${cell(message.ingress_id)} [${bound}] ${message.text === null ? `(text ${message.text_sha256.slice(0, 12)}… not in the bucket)` : cell(message.text, 200)}`);
  }
  return page;
}
