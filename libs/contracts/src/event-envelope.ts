import { z } from 'zod';
import { Id, Sha256Hex, Timestamp } from './ids.js';
import { PrincipalType } from './principal-type.js';

/** Dotted, lowercase, past tense: `task.created`, `grant.issued`, `attempt.awaiting_approval`. */
export const EventType = z
  .string()
  .max(128)
  .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, 'must be dotted lowercase, e.g. "grant.issued"');

/** Aggregates that own an event stream subject `writ.evt.<entity_type>.<entity_id>`. */
export const EntityType = z.enum([
  'task',
  'step',
  'attempt',
  'ingress',
  'decision',
  'approval',
  'grant',
  'artifact',
  'receipt',
  'principal',
  'cell',
  'policy',
  'transparency_log',
  'participant',
  'memory',
]);
export type EntityType = z.infer<typeof EntityType>;

/**
 * What a writer supplies for one event. The event store fills the rest
 * (`task_id`, `task_seq`, `prev_event_hash`, `hash`) when it appends.
 * Time and ids come from the caller so that deciders stay deterministic.
 */
export const EventDraft = z.object({
  event_id: Id,
  schema_version: z.number().int().positive(),
  event_type: EventType,
  entity_type: EntityType,
  entity_id: Id,
  step_id: Id.optional(),
  attempt_id: Id.optional(),
  occurred_at: Timestamp,
  actor_type: PrincipalType,
  actor_id: Id,
  payload: z.record(z.string(), z.unknown()),
  causation_id: Id.nullable(),
  correlation_id: Id,
  idempotency_key: z.string().min(1).max(256).optional(),
});
export type EventDraft = z.infer<typeof EventDraft>;

/**
 * The appending service's seal on an event: an Ed25519 signature over the
 * event's `hash` (`eventSealInput`), by a key registered on the service
 * principal's own subject. It proves which service appended the event (the
 * actor fields say on whose behalf); readers refuse an event whose seal does
 * not verify with a key of a service allowed to author its type
 * (`event-authorship.ts`). Like `hash`, it is outside the hashed content: one
 * signature per event, over 32 bytes, on the hot path of every append.
 */
export const EventSeal = z.strictObject({
  /** The service principal that appended the event (`writ-policy`). */
  principal_id: Id,
  /** The kid of its key that signed. */
  kid: z.string().min(1).max(128),
  /** base64url Ed25519 signature (64 bytes) over `eventSealInput(hash)`. */
  sig: z.string().regex(/^[A-Za-z0-9_-]{86}$/, 'must be a base64url Ed25519 signature'),
});
export type EventSeal = z.infer<typeof EventSeal>;

/** What a seal signs: the event's hash, under a label, so that no other Writ signature can stand for a seal. */
export function eventSealInput(hash: string): string {
  return `writ.event-seal.v1:${hash}`;
}

/**
 * The stored event (Hermit 8.4 minimum and recommended fields).
 * `hash` is SHA-256 over the RFC 8785 canonical form of every other field
 * except `seal`; `prev_event_hash` links to the previous event of the same
 * task (null for the first); `seal` proves the appending service.
 */
export const EventEnvelope = EventDraft.extend({
  task_id: Id,
  task_seq: z.number().int().positive(),
  prev_event_hash: Sha256Hex.nullable(),
  hash: Sha256Hex,
  seal: EventSeal.optional(),
}).meta({ title: 'EventEnvelope', description: 'A stored, hash-chained event of the log (Hermit 8.4).' });
export type EventEnvelope = z.infer<typeof EventEnvelope>;
