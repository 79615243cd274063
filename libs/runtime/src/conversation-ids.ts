import { sha256Hex } from '@writ/crypto';

const hex = (text: string) => sha256Hex(text).slice(0, 40);

/**
 * One principal's conversation: the ingress stream (`<events>.ingress.cnv-…`)
 * every free-form message of it is recorded and bound on (issue 17). Derived,
 * so ingress (which appends) and the projection (which checks a record sits
 * on its sender's stream) agree without a lookup.
 */
export const conversationStreamId = (principalId: string, conversationId: string): string => `cnv-${hex(`conversation\n${principalId}\n${conversationId}`)}`;

/** A free-form message's ingress id: the sender's message_id within its conversation, so a resend is the same ingress. */
export const messageIngressId = (principalId: string, conversationId: string, messageId: string): string => `msg-${hex(`message\n${principalId}\n${conversationId}\n${messageId}`)}`;

/**
 * The task a follow-up message on an ended outcome starts (Hermit 8.1.1):
 * derived from the message's ingress id, so a redelivery starts the same task.
 * 40 hex digits where an ActionRequest's task id has 32: the two never meet.
 */
export const followUpTaskId = (ingressId: string): string => `tsk-${hex(`follow-up\n${ingressId}`)}`;
