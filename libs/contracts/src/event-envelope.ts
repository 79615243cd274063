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
 * The stored event (Hermit 8.4 minimum and recommended fields).
 * `hash` is SHA-256 over the RFC 8785 canonical form of every other field;
 * `prev_event_hash` links to the previous event of the same task (null for the first).
 */
export const EventEnvelope = EventDraft.extend({
  task_id: Id,
  task_seq: z.number().int().positive(),
  prev_event_hash: Sha256Hex.nullable(),
  hash: Sha256Hex,
}).meta({ title: 'EventEnvelope', description: 'A stored, hash-chained event of the log (Hermit 8.4).' });
export type EventEnvelope = z.infer<typeof EventEnvelope>;
