import { Id, type EntityType, type EventDraft } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';

/**
 * `<prefix>-` + the first 32 hex of SHA-256 over `parts` joined by `:`: a
 * stable id, usable as a NATS subject token, that the same cause always
 * derives again (`derivedId('pol', taskId, key)`, `derivedId('rct', key)`).
 */
export function derivedId(prefix: string, ...parts: readonly (string | number)[]): string {
  return `${prefix}-${sha256Hex(parts.join(':')).slice(0, 32)}`;
}

/** A command's id as an event `causation_id` (an Id): kept when it is one, else hashed (`cmd-…`). */
export function causationIdOf(commandId: string): string {
  return Id.safeParse(commandId).success ? commandId : derivedId('cmd', commandId);
}

export interface ServiceDraftInput {
  /** Idempotency key derived from the cause (`<attempt_id>:policy.evaluated:<n>`). */
  readonly key: string;
  /** Default `derivedId('evt', key)`; a service whose ids predate this helper passes its own. */
  readonly eventId?: string;
  readonly eventType: string;
  readonly entityType: EntityType;
  readonly entityId: string;
  readonly stepId?: string;
  readonly attemptId?: string;
  /** The adapter edge's clock reading (RFC 3339). */
  readonly occurredAt: string;
  /** The service principal appending it. */
  readonly actorId: string;
  readonly payload: object;
  /** The event or command that caused it. */
  readonly causationId: string | null;
  /** The task id or action_request_id. */
  readonly correlationId: string;
}

/**
 * An event draft appended by a service (`actor_type: service`, schema 1) with
 * its id and idempotency key derived from its cause, so a redelivered command
 * drafts the very same event and the log dedupes it.
 */
export function serviceDraft(input: ServiceDraftInput): EventDraft {
  return {
    event_id: input.eventId ?? derivedId('evt', input.key),
    schema_version: 1,
    event_type: input.eventType,
    entity_type: input.entityType,
    entity_id: input.entityId,
    ...(input.stepId === undefined ? {} : { step_id: input.stepId }),
    ...(input.attemptId === undefined ? {} : { attempt_id: input.attemptId }),
    occurred_at: input.occurredAt,
    actor_type: 'service',
    actor_id: input.actorId,
    payload: input.payload as Record<string, unknown>,
    causation_id: input.causationId,
    correlation_id: input.correlationId,
    idempotency_key: input.key,
  };
}
