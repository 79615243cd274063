import { z } from 'zod';
import { Id, IdempotencyKey, Name, Ref, Timestamp } from './ids.js';
import { LIMITS } from './limits.js';
import { isPresent, withRules } from './rules.js';
import { Text, UnitInterval } from './text.js';

/** Where an ingress was bound (Hermit 8.1.3). */
export const IngressResolution = z.enum([
  'control',
  'approval',
  'append_note',
  'fork_child',
  'start_new_root',
  'chat_only',
  'pending_disambiguation',
]);
export type IngressResolution = z.infer<typeof IngressResolution>;

/**
 * Lifecycle of an ingress record: `received` when durably recorded (before any
 * task mutation), then `bound` with a resolution, `rejected` (invalid or
 * unauthenticated, still kept), or `duplicate` of an earlier idempotency key.
 */
export const IngressStatus = z.enum(['received', 'bound', 'rejected', 'duplicate']);
export type IngressStatus = z.infer<typeof IngressStatus>;

const UpperSnake = z
  .string()
  .max(128)
  .regex(/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/, 'must be an UPPER_SNAKE error code');

/**
 * The durable record of one inbound message, written before it changes any
 * task, step or attempt (Hermit 8.1.2). For an agent's ActionRequest,
 * `raw_text` is the message as received (compact JWS) and `normalized_text`
 * its RFC 8785 canonical JSON payload.
 */
export const IngressRecord = withRules(
  z.strictObject({
    ingress_id: Id,
    conversation_id: Id,
    source_channel: Name.describe('nats, http, cli, scheduler, webhook, ...'),
    raw_text: z.string().max(LIMITS.rawMessage),
    normalized_text: z.string().max(LIMITS.rawMessage),
    status: IngressStatus,
    resolution: IngressResolution.nullable().describe('null until bound.'),
    created_at: Timestamp,
    updated_at: Timestamp,
    actor: Id.optional().describe('principal_id of the authenticated sender.'),
    prompt_ref: Ref.optional(),
    reply_to_ref: Ref.optional(),
    quoted_message_ref: Ref.optional(),
    explicit_task_ref: Ref.optional(),
    referenced_artifact_refs: z.array(Ref).max(LIMITS.listItems).optional(),
    chosen_task_id: Id.optional(),
    parent_task_id: Id.optional(),
    confidence: UnitInterval.optional(),
    margin: UnitInterval.optional(),
    rationale_ref: Ref.optional(),
    rationale: Text.optional(),
    idempotency_key: IdempotencyKey.optional().describe('The sender-chosen key (Nats-Msg-Id) used for dedupe.'),
    action_request_id: Id.optional().describe('The ActionRequest carried, when the message is one.'),
    rejection_code: UpperSnake.optional().describe('Why the ingress was rejected, e.g. CONTRACT_INVALID.'),
  }),
  (record, report) => {
    if (record.status === 'bound' && !isPresent(record.resolution)) report(['resolution'], 'is required when status is bound');
    if (record.status === 'rejected' && !isPresent(record.rejection_code)) report(['rejection_code'], 'is required when status is rejected');
  },
).meta({ title: 'IngressRecord', description: 'The durable record of one inbound message, written before any task mutation (Hermit 8.1.2).' });
export type IngressRecord = z.infer<typeof IngressRecord>;
